// Package imageservice is the image-resize HTTP service behind the
// agent's image_scaling tool: a real service used live, for recording
// cassettes, and in tests through httptest. cmd/imaged serves it.
//
// # Contract
//
// POST /resize takes a multipart/form-data body with the image in file
// field "image" and the target width in pixels in field "width" (or the
// query parameter ?width=N; the form field wins when both are present).
// The answer keeps the aspect ratio (height = round(srcH×width/srcW), at
// least 1) and the input's format: JPEG (quality Config.JPEGQuality) or
// PNG, with headers Content-Type (image/jpeg or image/png),
// Content-Length, X-Image-Width and X-Image-Height. A width above the
// source width upscales; that is allowed, bounded by MaxWidth and the
// pixel budget, and adds no detail.
//
// GET /healthz answers 200 with a JSON body: the version (Config.Version),
// the formats, the /resize requests being processed and the request
// bodies being received, and the effective limits:
//
//	{"status":"ok","version":"dev","formats":["jpeg","png"],"in_flight":0,"uploading":0,
//	 "limits":{"max_body_bytes":20971520,"max_width":4096,"max_source_pixels":40000000,
//	 "max_work_bytes":1073741824,"timeout_ms":30000,"max_concurrent":2,"jpeg_quality":90}}
//
// Every error is JSON, {"error":{"code":"…","message":"…"}}, never a stack
// trace, with a stable code (the Code* constants):
//
//	400 invalid_width       width missing, not an integer, or outside 1..MaxWidth
//	400 missing_image       no non-empty "image" part, or not multipart/form-data
//	400 invalid_request     malformed multipart body, or two "image" parts
//	400 corrupt_image       header or pixel data does not decode (also a truncated file)
//	413 payload_too_large   body over MaxBodyBytes
//	415 unsupported_format  neither JPEG nor PNG, judged by content (GIF, WebP, text…)
//	422 image_too_large     source or target over MaxSourcePixels, or estimated memory over MaxWorkBytes
//	503 busy                every worker or upload slot taken, or the uploads' byte budget full; Retry-After set
//	503 timeout             the request ran past Timeout
//	408 timeout             the upload averaged under MinUploadRate after UploadGrace, or paused for UploadGrace
//	404 not_found, 405 method_not_allowed (with Allow), 500 internal (a bug)
//
// # Safety under bad input and load
//
// The format is sniffed from the leading bytes, never from the file name
// or the part's Content-Type, and only JPEG and PNG are decoded (the
// decoders are called directly; no other format is registered). The pixel
// budget is checked from image.DecodeConfig, which reads only the header,
// so a decompression bomb (a 60-byte PNG claiming 50 000 × 50 000 pixels)
// is refused with 422 after allocating a few kilobytes. The target size is
// checked against the same budget, so a 1×40 000 000 source cannot ask
// for a 4096-wide, 160-gigapixel result. The working memory of the
// decode and scale (MaxWorkBytes, 1 GiB by default) is estimated from the
// header too, at the size the decoder gives each pixel (8 bytes for a
// 16-bit PNG).
//
// The body is read through http.MaxBytesReader under the request deadline
// and the upload limits: after UploadGrace it must average MinUploadRate,
// and no pause may last UploadGrace (408 timeout otherwise). It is
// received before a worker is taken, under one of 64 upload slots per
// worker, and the bodies being received may hold 4 × MaxBodyBytes per
// worker together, counted as the bytes arrive. So a slow client holds an
// upload slot and the bytes it has sent, never a worker, and it takes 64
// clients per worker, each keeping up MinUploadRate, to fill the upload
// slots (BenchmarkFastAmongSlow: on 2 workers a fast client is served
// beside 127 stalled uploads, and refused beside 128). The
// workers are a fixed number of slots taken without waiting: a request
// that arrives while all are busy is answered 503 busy with Retry-After
// before its body is read (and the connection closed, so a client that
// stalls still gets the answer), one whose upload ends while all are busy
// just after. Nothing queues, and memory stays below about MaxConcurrent ×
// (4 × MaxBodyBytes received + MaxBodyBytes + MaxWorkBytes processed).
// Decoding and scaling cannot be interrupted, so a request that times out
// is answered at its deadline while its worker finishes in the
// background, still holding its slot.
//
// # Resampling filter
//
// Scaling uses golang.org/x/image/draw.CatmullRom into an RGBA image,
// after an exact box (area-average) pre-reduction by an integer factor
// when the source is at least four times the target in both directions.
// The candidates were measured with BenchmarkKernels (the scale step
// alone, decoded JPEG source, 256 px wide target; best of several runs on
// a busy shared 2-CPU machine, so treat them as ratios) and
// TestKernelQuality (PSNR of a 16× downscale against the exact area
// average; higher is closer):
//
//	                       1024×768→256   4000×3000→256   noise     bars
//	box + CatmullRom (used)   16 ms          149 ms       50.9 dB   32.0 dB
//	CatmullRom                32 ms          348 ms       49.0 dB   32.9 dB
//	BiLinear                  16 ms          171 ms       48.0 dB   31.1 dB
//	ApproxBiLinear             1.3 ms          1.2 ms     25.0 dB   19.3 dB
//
// ApproxBiLinear is 10–100× faster but samples a fixed 2×2 neighbourhood
// whatever the ratio, so large downscales alias (24 dB worse on noise):
// moiré and jagged text, unacceptable for a service that mostly shrinks
// photos and screenshots for a model to read. BiLinear and CatmullRom
// both widen their support when downscaling, so neither aliases;
// CatmullRom keeps edges sharper (text stays legible) at about twice
// BiLinear's cost, and x/image/draw gives both a scratch buffer of 32
// bytes per target-width × source-height pixel (25 MB for 4000×3000→256).
// The box pre-reduction is the ideal anti-aliasing filter for an integer
// factor; after it CatmullRom only has to cover the last factor of 2–4,
// which makes the pair as fast as BiLinear, cuts the scratch buffer to
// 3.5 MB, and costs under 1 dB on the bars. So: quality of CatmullRom,
// speed of BiLinear.
//
// Whole requests (BenchmarkResize: multipart, decode, scale, encode, JPEG
// source to 256 px wide, best runs): 150×103 3.4 ms (~300 images/s,
// 1.2 MB/op), 1024×768 44 ms (~23 images/s, 6.5 MB/op), 4000×3000 405 ms
// (~2.5 images/s, 40 MB/op), dominated by JPEG decoding.
package imageservice
