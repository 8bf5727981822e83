package imageservice

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestResizeRealImages(t *testing.T) {
	tests := []struct {
		name   string
		file   string // under GOROOT/src/image
		format string
		why    string
	}{
		{"jpeg baseline", "testdata/video-001.jpeg", "jpeg", "the common case"},
		{"jpeg progressive", "testdata/video-001.progressive.jpeg", "jpeg", "progressive scans"},
		{"jpeg cmyk", "testdata/video-001.cmyk.jpeg", "jpeg", "Adobe CMYK decodes to *image.CMYK, the generic scaler path"},
		{"jpeg grey", "testdata/video-005.gray.jpeg", "jpeg", "decodes to *image.Gray"},
		{"jpeg 4:1:1", "testdata/video-001.q50.411.jpeg", "jpeg", "unusual chroma subsampling"},
		{"jpeg restart markers", "testdata/video-001.restart2.jpeg", "jpeg", "restart intervals"},
		{"jpeg progressive truncated", "testdata/video-001.progressive.truncated.jpeg", "jpeg", "Go decodes the scans it has; a partial picture is still a picture"},
		{"png rgb", "testdata/video-001.png", "png", "the common case"},
		{"png grey", "testdata/video-005.gray.png", "png", "decodes to *image.Gray"},
		{"png grey interlaced", "png/testdata/gray-gradient.interlaced.png", "png", "Adam7 interlacing"},
		{"png paletted", "png/testdata/benchPaletted.png", "png", "decodes to *image.Paletted"},
		{"png alpha", "png/testdata/benchNRGBA-gradient.png", "png", "non-opaque NRGBA"},
		{"png rgb interlaced", "png/testdata/benchRGB-interlace.png", "png", "interlaced colour"},
		{"png 1-bit grey", "png/testdata/pngsuite/basn0g01.png", "png", "sub-byte samples"},
		{"png 16-bit grey", "png/testdata/pngsuite/basn0g16.png", "png", "decodes to *image.Gray16"},
		{"png paletted with tRNS", "png/testdata/pngsuite/basn3p08-trns.png", "png", "transparent palette entries"},
		{"png 16-bit rgba", "png/testdata/pngsuite/basn6a16.png", "png", "decodes to *image.NRGBA64"},
	}
	svc := New(Config{}, nil)
	for _, tt := range tests {
		data := stdImage(t, tt.file)
		src, format, err := image.DecodeConfig(bytes.NewReader(data))
		require.NoError(t, err, "precondition: %s decodes", tt.file)
		require.Equal(t, tt.format, format, "precondition: format of %s", tt.file)
		for _, width := range []int{48, 160} {
			t.Run(tt.name+"/"+strconv.Itoa(width), func(t *testing.T) {
				// A misleading file name: sniffing must ignore it.
				rec := serve(svc, "", imageBody(t, "picture.gif", data, strconv.Itoa(width)))
				require.Equal(t, http.StatusOK, rec.Code, "body %q", rec.Body.String())
				wantH := max(int(math.Round(float64(src.Height)*float64(width)/float64(src.Width))), 1)
				got := rec.Result().Header
				want := http.Header{
					"Content-Type":           {"image/" + tt.format},
					"Content-Length":         {strconv.Itoa(rec.Body.Len())},
					"X-Image-Width":          {strconv.Itoa(width)},
					"X-Image-Height":         {strconv.Itoa(wantH)},
					"X-Content-Type-Options": {"nosniff"},
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("headers mismatch (-want +got):\n%s", diff)
				}
				var out image.Config
				if tt.format == "png" {
					out, err = png.DecodeConfig(bytes.NewReader(rec.Body.Bytes()))
				} else {
					out, err = jpeg.DecodeConfig(bytes.NewReader(rec.Body.Bytes()))
				}
				require.NoError(t, err, "the answer decodes as %s", tt.format)
				if diff := cmp.Diff([2]int{width, wantH}, [2]int{out.Width, out.Height}); diff != "" {
					t.Errorf("decoded size mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestResizeBadImages(t *testing.T) {
	jpegData := stdImage(t, "testdata/video-001.jpeg")
	tests := []struct {
		name   string
		data   []byte
		status int
		code   Code
	}{
		{"png bad crc in header", stdImage(t, "png/testdata/invalid-crc32.png"), 400, CodeCorruptImage},
		{"png truncated", stdImage(t, "png/testdata/invalid-trunc.png"), 400, CodeCorruptImage},
		{"png without IEND", stdImage(t, "png/testdata/invalid-noend.png"), 400, CodeCorruptImage},
		{"png bad zlib checksum", stdImage(t, "png/testdata/invalid-zlib.png"), 400, CodeCorruptImage},
		{"jpeg truncated to half", jpegData[:len(jpegData)/2], 400, CodeCorruptImage},
		{"jpeg magic only", jpegData[:3], 400, CodeCorruptImage},
		{"png magic then junk", append([]byte("\x89PNG\r\n\x1a\n"), strings.Repeat("junk", 10)...), 400, CodeCorruptImage},
		{"gif", stdImage(t, "testdata/video-001.gif"), 415, CodeUnsupportedFormat},
		{"gif 5bpp", stdImage(t, "testdata/video-001.5bpp.gif"), 415, CodeUnsupportedFormat},
		{"bmp header", []byte("BM\x36\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00"), 415, CodeUnsupportedFormat},
		{"text", []byte("hello, i am not a picture"), 415, CodeUnsupportedFormat},
		{"webp", []byte("RIFF\x00\x00\x00\x00WEBPVP8 "), 415, CodeUnsupportedFormat},
	}
	svc := New(Config{}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Named .png and .jpg: the name must not matter.
			for _, name := range []string{"x.png", "x.jpg"} {
				rec := serve(svc, "", imageBody(t, name, tt.data, "64"))
				require.Equal(t, tt.status, rec.Code, "body %q", rec.Body.String())
				got := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
				require.Equal(t, tt.code, got.Code, "message %q", got.Message)
				require.NotContains(t, got.Message, "goroutine", "no stack traces")
			}
		})
	}
}

func TestResizeRequestErrors(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png")
	tests := []struct {
		name        string
		query       string
		contentType string // default testContentType
		body        []byte
		status      int
		code        Code
	}{
		{"width zero", "", "", imageBody(t, "a.png", img, "0"), 400, CodeInvalidWidth},
		{"width negative", "", "", imageBody(t, "a.png", img, "-5"), 400, CodeInvalidWidth},
		{"width over max", "", "", imageBody(t, "a.png", img, "4097"), 400, CodeInvalidWidth},
		{"width not a number", "", "", imageBody(t, "a.png", img, "wide"), 400, CodeInvalidWidth},
		{"width with unit", "", "", imageBody(t, "a.png", img, "12px"), 400, CodeInvalidWidth},
		{"width overflows int", "", "", imageBody(t, "a.png", img, "99999999999999999999"), 400, CodeInvalidWidth},
		{"width field too long", "", "", imageBody(t, "a.png", img, strings.Repeat("1", 100)), 400, CodeInvalidWidth},
		{"width missing", "", "", multipartBody(t, part{name: "image", filename: "a.png", data: img}), 400, CodeInvalidWidth},
		{"query width invalid", "width=0", "", multipartBody(t, part{name: "image", filename: "a.png", data: img}), 400, CodeInvalidWidth},
		{"image missing", "", "", multipartBody(t, part{name: "width", data: []byte("64")}), 400, CodeMissingImage},
		{"image empty", "", "", imageBody(t, "a.png", nil, "64"), 400, CodeMissingImage},
		{"image under another name", "", "", multipartBody(t, part{name: "file", filename: "a.png", data: img}, part{name: "width", data: []byte("64")}), 400, CodeMissingImage},
		{"not multipart", "width=64", "image/png", img, 400, CodeMissingImage},
		{"no content type", "width=64", "none", img, 400, CodeMissingImage},
		{"two images", "", "", multipartBody(t, part{name: "image", filename: "a.png", data: img}, part{name: "image", filename: "b.png", data: img}, part{name: "width", data: []byte("8")}), 400, CodeInvalidRequest},
		{"broken multipart", "width=64", "", []byte("--" + testBoundary + "\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\nabc"), 400, CodeInvalidRequest},
		{"body without parts", "width=64", "", []byte("not a multipart body at all"), 400, CodeMissingImage},
	}
	svc := New(Config{}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := "/resize"
			if tt.query != "" {
				target += "?" + tt.query
			}
			req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(tt.body))
			switch tt.contentType {
			case "":
				req.Header.Set("Content-Type", testContentType)
			case "none":
			default:
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			svc.ServeHTTP(rec, req)
			require.Equal(t, tt.status, rec.Code, "body %q", rec.Body.String())
			got := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
			require.Equal(t, tt.code, got.Code, "message %q", got.Message)
		})
	}
}

func TestResizeWidthSources(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png") // 150×103
	tests := []struct {
		name      string
		query     string
		body      []byte
		wantWidth string
		wantH     string
	}{
		{"form field", "", imageBody(t, "a.png", img, "75"), "75", "52"},
		{"form field with spaces", "", imageBody(t, "a.png", img, " 75\r\n"), "75", "52"},
		{"query parameter", "width=30", multipartBody(t, part{name: "image", filename: "a.png", data: img}), "30", "21"},
		{"form field wins over query", "width=30", imageBody(t, "a.png", img, "75"), "75", "52"},
		{"width before image", "", multipartBody(t, part{name: "width", data: []byte("1")}, part{name: "image", filename: "a.png", data: img}), "1", "1"},
		{"upscale", "", imageBody(t, "a.png", img, "300"), "300", "206"},
		{"extra fields ignored", "", multipartBody(t, part{name: "note", data: []byte("hi")}, part{name: "image", filename: "a.png", data: img}, part{name: "width", data: []byte("15")}), "15", "10"},
	}
	svc := New(Config{}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(svc, tt.query, tt.body)
			require.Equal(t, http.StatusOK, rec.Code, "body %q", rec.Body.String())
			got := [2]string{rec.Header().Get("X-Image-Width"), rec.Header().Get("X-Image-Height")}
			if diff := cmp.Diff([2]string{tt.wantWidth, tt.wantH}, got); diff != "" {
				t.Errorf("size mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetSize(t *testing.T) {
	tests := []struct {
		name              string
		srcW, srcH, width int
		wantW, wantH      int
	}{
		{"exact", 200, 100, 100, 100, 50},
		{"rounds half up", 4, 1, 2, 2, 1},      // 0.5 → 1
		{"rounds down", 150, 103, 64, 64, 44},  // 43.95
		{"rounds up", 150, 103, 256, 256, 176}, // 175.79
		{"at least 1", 10000, 1, 16, 16, 1},    // 0.0016
		{"upscale", 150, 103, 300, 300, 206},   // 206
		{"huge tall source", 1, 40_000_000, 4096, 4096, 163_840_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, h := targetSize(tt.srcW, tt.srcH, tt.width)
			if diff := cmp.Diff([2]int{tt.wantW, tt.wantH}, [2]int{w, h}); diff != "" {
				t.Errorf("target size mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// pngWithHeader makes a tiny, well-formed PNG whose IHDR claims w×h
// 8-bit RGBA pixels but whose IDAT holds only a few bytes of zlib data:
// a decompression bomb as far as a naive decoder is concerned.
func pngWithHeader(w, h uint32) []byte {
	return pngWithIHDR(w, h, 8, 6) // bit depth 8, colour type RGBA
}

// pngWithIHDR is pngWithHeader with the given bit depth and colour type,
// and the extra chunks (type and data, in pairs) between IHDR and IDAT.
func pngWithIHDR(w, h uint32, depth, colourType byte, chunks ...string) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = depth, colourType
	writePNGChunk(&buf, "IHDR", ihdr)
	for i := 0; i+1 < len(chunks); i += 2 {
		writePNGChunk(&buf, chunks[i], []byte(chunks[i+1]))
	}
	writePNGChunk(&buf, "IDAT", []byte{0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01}) // zlib of one zero byte
	writePNGChunk(&buf, "IEND", nil)
	return buf.Bytes()
}

// writePNGChunk appends one chunk: length, type, data, CRC.
func writePNGChunk(buf *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	buf.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	buf.WriteString(typ)
	buf.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	buf.Write(n[:])
}

func TestResizeDecompressionBomb(t *testing.T) {
	bomb := pngWithHeader(50_000, 50_000)
	require.Less(t, len(bomb), 100, "precondition: the bomb is small")
	cfg, err := png.DecodeConfig(bytes.NewReader(bomb))
	require.NoError(t, err, "precondition: the bomb has a valid header")
	require.Equal(t, 50_000, cfg.Width)

	svc := New(Config{}, nil)
	body := imageBody(t, "bomb.png", bomb, "256")
	serve(svc, "", body) // warm up lazily initialised state

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := serve(svc, "", body)
	runtime.ReadMemStats(&after)

	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "body %q", rec.Body.String())
	got := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
	require.Equal(t, CodeImageTooLarge, got.Code)
	// Decoding would allocate 10 GB (50 000² × 4 bytes); refusing from the
	// header costs a few kilobytes.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("bomb request allocated %d bytes", allocated)
	require.Less(t, allocated, uint64(1<<20), "memory must stay flat: the bomb must be refused before decoding")
}

func TestResizePixelBudget(t *testing.T) {
	tests := []struct {
		name   string
		img    []byte
		width  string
		budget int64
		status int
	}{
		{"source over budget", pngWithHeader(1001, 1000), "10", 1_000_000, 422},
		{"source at budget decodes", pngWithHeader(1000, 1000), "10", 1_000_000, 400}, // the IDAT is short: corrupt_image, but after the budget check
		{"target over budget", pngWithHeader(1, 40_000), "4096", 40_000_000, 422},
		{"working memory over budget", pngWithHeader(4000, 10_000), "4000", 40_000_000, 422},         // ~1.4 GiB estimated
		{"large downscale within working memory", pngWithHeader(6000, 6000), "256", 40_000_000, 400}, // pre-reduced; then the short IDAT is corrupt
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := New(Config{MaxSourcePixels: tt.budget}, nil)
			rec := serve(svc, "", imageBody(t, "a.png", tt.img, tt.width))
			require.Equal(t, tt.status, rec.Code, "body %q", rec.Body.String())
			got := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
			want := map[int]Code{422: CodeImageTooLarge, 400: CodeCorruptImage}[tt.status]
			require.Equal(t, want, got.Code, "message %q", got.Message)
		})
	}
}

// TestResizeWorkBytes16Bit counts a 16-bit PNG at the 8 bytes a pixel
// image/png decodes it to. A 1000×1000 source kept 1000 px wide needs 40 MB
// at 4 bytes a pixel (4 source + 32 scratch + 4 target) and 44 MB at 8,
// against a budget of 42 MB. The IDAT is short, so a source within the
// budget is answered 400 corrupt_image, after the check.
func TestResizeWorkBytes16Bit(t *testing.T) {
	tests := []struct {
		name              string
		depth, colourType byte
		chunks            []string
		status            int
	}{
		{"8-bit RGBA", 8, 6, nil, 400},
		{"16-bit RGBA (NRGBA64)", 16, 6, nil, 422},
		{"16-bit RGB (RGBA64)", 16, 2, nil, 422},
		{"16-bit grey with alpha (NRGBA64)", 16, 4, nil, 422},
		{"16-bit grey (Gray16, 2 bytes)", 16, 0, nil, 400},
		{"16-bit grey with tRNS (NRGBA64)", 16, 0, []string{"tRNS", "\x00\x00"}, 422},
		{"8-bit grey with tRNS (NRGBA)", 8, 0, []string{"tRNS", "\x00"}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := New(Config{MaxWorkBytes: 42_000_000}, nil)
			rec := serve(svc, "", imageBody(t, "a.png", pngWithIHDR(1000, 1000, tt.depth, tt.colourType, tt.chunks...), "1000"))
			require.Equal(t, tt.status, rec.Code, "body %q", rec.Body.String())
			got := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
			want := map[int]Code{422: CodeImageTooLarge, 400: CodeCorruptImage}[tt.status]
			require.Equal(t, want, got.Code, "message %q", got.Message)
		})
	}
}

func TestResizePayloadTooLarge(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png") // about 30 KB
	body := imageBody(t, "a.png", img, "64")
	svc := New(Config{MaxBodyBytes: 4096}, nil)
	srv := httptest.NewServer(svc)
	defer srv.Close()

	tests := []struct {
		name string
		body io.Reader // a bytes.Reader sends Content-Length; a plain io.Reader is chunked
	}{
		{"content length over limit", bytes.NewReader(body)},
		{"chunked body over limit", io.MultiReader(bytes.NewReader(body))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/resize", tt.body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", testContentType)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "body %q", b)
			require.Equal(t, CodePayloadTooLarge, errorDetail(t, resp.Header.Get("Content-Type"), b).Code)
		})
	}
}

func TestResizeTimeout(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png")
	body := imageBody(t, "a.png", img, "64")

	t.Run("deadline passes during processing", func(t *testing.T) {
		svc := New(Config{Timeout: time.Nanosecond}, nil)
		rec := serve(svc, "", body)
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, "body %q", rec.Body.String())
		require.Equal(t, CodeTimeout, errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes()).Code)
	})

	t.Run("client stalls mid-body", func(t *testing.T) {
		svc := New(Config{Timeout: 200 * time.Millisecond}, nil)
		srv := httptest.NewServer(svc)
		defer srv.Close()
		slow := newBlockingBody(body[:100], body[100:])
		defer slow.Release()
		start := time.Now()
		code, h, b := postResize(srv, slow)
		require.Equal(t, http.StatusServiceUnavailable, code, "body %q", b)
		require.Equal(t, CodeTimeout, errorDetail(t, h.Get("Content-Type"), b).Code)
		require.Less(t, time.Since(start), 5*time.Second, "the deadline must cut the read short")
	})
}

// TestSlowUploadsDoNotBlockWorkers stalls uploads in their bodies: they
// hold upload slots, never the worker, so a normal request still gets
// through; once every upload slot is taken, the next request is 503 busy
// with Retry-After, answered at once although its body stalls too.
func TestSlowUploadsDoNotBlockWorkers(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png")
	body := imageBody(t, "a.png", img, "64")
	// Stalled uploads are not cut off while the test runs.
	svc := New(Config{MaxConcurrent: 1, RetryAfter: 1500 * time.Millisecond, UploadGrace: time.Minute, Timeout: 2 * time.Minute}, nil)
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	uploads := cap(svc.uploads)

	release := stallUploads(t, svc, srv, body, uploads-1)
	code, _, b := postResize(srv, bytes.NewReader(body))
	require.Equal(t, http.StatusOK, code, "a normal request is served while %d uploads stall: %s", uploads-1, b)

	releaseLast := stallUploads(t, svc, srv, body, 1)
	require.Equal(t, uploads, uploading(t, srv))
	stalled := newBlockingBody(body[:100], body[100:])
	defer stalled.Release()
	code, h, b := postResize(srv, stalled)
	require.Equal(t, http.StatusServiceUnavailable, code, "%s", b)
	require.Equal(t, "2", h.Get("Retry-After"), "1.5 s rounds up to 2")
	d := errorDetail(t, h.Get("Content-Type"), b)
	require.Equal(t, CodeBusy, d.Code)
	require.Contains(t, d.Message, fmt.Sprintf("%d uploads in flight", uploads))

	// Released, each stalled upload gets the worker or a 503 busy.
	release()
	releaseLast()
	require.Equal(t, 0, uploading(t, srv))
	code, _, b = postResize(srv, bytes.NewReader(body))
	require.Equal(t, http.StatusOK, code, "the upload slots are free again: %s", b)
}

// TestResizeBusy fills the worker slots: a request that cannot get one is
// answered 503 busy at once, with Retry-After, and nothing queues.
func TestResizeBusy(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png")
	body := imageBody(t, "a.png", img, "64")
	svc := New(Config{MaxConcurrent: 1, RetryAfter: 1500 * time.Millisecond}, nil)
	svc.slots <- struct{}{} // a request holds the only worker slot
	for i := range 3 {
		rec := serve(svc, "", body)
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, "request %d", i)
		require.Equal(t, "2", rec.Header().Get("Retry-After"))
		d := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
		require.Equal(t, CodeBusy, d.Code)
		require.Contains(t, d.Message, "1 requests in flight")
	}
	<-svc.slots
	rec := serve(svc, "", body)
	require.Equal(t, http.StatusOK, rec.Code, "the slot is free again")
}

func TestHealthz(t *testing.T) {
	svc := New(Config{MaxWidth: 1000, Version: "1.2.3"}, nil)
	rec := httptest.NewRecorder()
	svc.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var got health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	want := health{
		Status:  "ok",
		Version: "1.2.3",
		Formats: []string{"jpeg", "png"},
		Limits: healthLimits{
			MaxBodyBytes:    20 << 20,
			MaxWidth:        1000,
			MaxSourcePixels: 40_000_000,
			MaxWorkBytes:    1 << 30,
			TimeoutMS:       30_000,
			MaxConcurrent:   runtime.NumCPU(),
			JPEGQuality:     90,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health mismatch (-want +got):\n%s", diff)
	}
}

func TestRouting(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		path      string
		status    int
		code      Code
		wantAllow string
	}{
		{"get resize", http.MethodGet, "/resize", 405, CodeMethodNotAllowed, "POST"},
		{"put resize", http.MethodPut, "/resize", 405, CodeMethodNotAllowed, "POST"},
		{"post healthz", http.MethodPost, "/healthz", 405, CodeMethodNotAllowed, "GET, HEAD"},
		{"root", http.MethodGet, "/", 404, CodeNotFound, ""},
		{"resize subpath", http.MethodPost, "/resize/x", 404, CodeNotFound, ""},
	}
	svc := New(Config{}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			svc.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			require.Equal(t, tt.status, rec.Code)
			require.Equal(t, tt.code, errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes()).Code)
			require.Equal(t, tt.wantAllow, rec.Header().Get("Allow"))
		})
	}
}

func TestAccessLog(t *testing.T) {
	img := stdImage(t, "testdata/video-001.jpeg")
	tests := []struct {
		name string
		body []byte
		want map[string]any // fields compared; "ms" is only checked for presence
	}{
		{"success", imageBody(t, "a.jpg", img, "64"), map[string]any{
			"level": "INFO", "msg": "http request", "method": "POST", "path": "/resize",
			"status": 200.0, "src": "150x103", "dst": "64x44",
		}},
		{"error", imageBody(t, "a.jpg", img, "0"), map[string]any{
			"level": "INFO", "msg": "http request", "method": "POST", "path": "/resize",
			"status": 400.0, "code": "invalid_width",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logBuf bytes.Buffer
			svc := New(Config{}, slog.New(slog.NewJSONHandler(&logBuf, nil)))
			rec := serve(svc, "", tt.body)
			var entry map[string]any
			require.NoError(t, json.Unmarshal(logBuf.Bytes(), &entry), "one JSON record: %q", logBuf.String())
			require.Contains(t, entry, "ms")
			require.Equal(t, float64(rec.Body.Len()), entry["bytes"])
			delete(entry, "time")
			delete(entry, "ms")
			delete(entry, "bytes")
			if diff := cmp.Diff(tt.want, entry); diff != "" {
				t.Errorf("log record mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultConfig pins the defaults Config documents, and shows New
// replacing impossible values with them.
func TestDefaultConfig(t *testing.T) {
	got := DefaultConfig()
	want := Config{
		MaxBodyBytes: 20 << 20, MaxWidth: 4096, MaxSourcePixels: 40_000_000, MaxWorkBytes: 1 << 30, Timeout: 30 * time.Second,
		MaxConcurrent: runtime.NumCPU(), RetryAfter: time.Second, JPEGQuality: 90, Version: "dev",
		MinUploadRate: 1024, UploadGrace: 5 * time.Second,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default config mismatch (-want +got):\n%s", diff)
	}
	impossible := Config{
		MaxBodyBytes: -1, MaxWidth: -1, MaxSourcePixels: -1, MaxWorkBytes: -1, Timeout: -time.Second,
		MaxConcurrent: -1, RetryAfter: -1, JPEGQuality: 101, MinUploadRate: -1, UploadGrace: -1,
	}
	if diff := cmp.Diff(want, New(impossible, nil).Config()); diff != "" {
		t.Errorf("New(impossible values) config mismatch (-want +got):\n%s", diff)
	}
}

// TestTooManyJPEGScans refuses a JPEG whose scan count could make decoding
// run for minutes, before any pixel is decoded.
func TestTooManyJPEGScans(t *testing.T) {
	svc := New(Config{}, nil)
	good := encodeJPEG(t, syntheticImage(64, 48, 1))
	tests := []struct {
		name  string
		extra int
		want  int
	}{
		{"at the limit", maxJPEGScans - 1, http.StatusOK},
		{"over the limit", maxJPEGScans, http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Extra start-of-scan markers after the end of the image: the
			// header still reads, the count is what is judged.
			data := append(append([]byte(nil), good...), bytes.Repeat([]byte{0xFF, 0xDA, 0x00, 0x02}, tt.extra)...)
			rec := serve(svc, "", imageBody(t, "x.jpg", data, "32"))
			require.Equal(t, tt.want, rec.Code, rec.Body.String())
			if tt.want != http.StatusOK {
				d := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
				require.Equal(t, CodeImageTooLarge, d.Code)
				require.Contains(t, d.Message, "scans, over the limit of 256")
			}
		})
	}
}

// TestSlowUploadCutOff sends a body far below MinUploadRate: the upload is
// answered 408 timeout once the grace period has passed, long before the
// request deadline, and its upload slot is free again.
func TestSlowUploadCutOff(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png")
	body := imageBody(t, "a.png", img, "64")
	svc := New(Config{MaxConcurrent: 1, UploadGrace: 200 * time.Millisecond, MinUploadRate: 1 << 20}, nil)
	srv := httptest.NewServer(svc)
	defer srv.Close()

	// A body that stalls after its first bytes: it never finishes.
	slow := newBlockingBody(body[:100], body[100:])
	defer slow.Release()
	start := time.Now()
	code, h, b := postResize(srv, slow)
	require.Equal(t, http.StatusRequestTimeout, code, "%s", b)
	require.Contains(t, errorDetail(t, h.Get("Content-Type"), b).Message, "upload too slow")
	require.Less(t, time.Since(start), 5*time.Second, "cut off at the grace period, not the 30 s deadline")
	waitUploading(t, srv, 0)
}

// TestCodeWireValues pins the codes clients branch on: they never change.
func TestCodeWireValues(t *testing.T) {
	tests := []struct {
		code Code
		want string
	}{
		{CodeInvalidWidth, "invalid_width"}, {CodeMissingImage, "missing_image"}, {CodeInvalidRequest, "invalid_request"},
		{CodeUnsupportedFormat, "unsupported_format"}, {CodePayloadTooLarge, "payload_too_large"}, {CodeImageTooLarge, "image_too_large"},
		{CodeCorruptImage, "corrupt_image"}, {CodeBusy, "busy"}, {CodeTimeout, "timeout"},
		{CodeMethodNotAllowed, "method_not_allowed"}, {CodeNotFound, "not_found"}, {CodeInternal, "internal"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, string(tt.code))
	}
}
