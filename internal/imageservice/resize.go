package imageservice

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"

	"golang.org/x/image/draw"
)

// Formats the service accepts and produces.
const (
	formatJPEG = "jpeg"
	formatPNG  = "png"
)

var (
	magicPNG  = []byte("\x89PNG\r\n\x1a\n")
	magicJPEG = []byte("\xff\xd8\xff")
)

// sniff names the format of data from its leading bytes, never from a file
// name or a client-supplied Content-Type: "jpeg", "png" or "".
func sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, magicPNG):
		return formatPNG
	case bytes.HasPrefix(data, magicJPEG):
		return formatJPEG
	}
	return ""
}

// kernel is the resampling filter; see the package documentation for why
// CatmullRom.
var kernel = draw.CatmullRom

// encoded is a resized, encoded image.
type encoded struct {
	data          []byte
	contentType   string
	width, height int
}

// targetSize keeps the aspect ratio: the height is srcH*width/srcW rounded
// to the nearest integer, at least 1.
func targetSize(srcW, srcH, width int) (int, int) {
	h := (int64(srcH)*int64(width)*2 + int64(srcW)) / (2 * int64(srcW))
	return width, int(max(h, 1))
}

// maxJPEGScans is the most start-of-scan markers a JPEG may hold (counted
// before decoding, over the whole file, so an embedded thumbnail's scans
// count too). Encoders write 1 (baseline) to about 10 (progressive) scans;
// more than this is refused with 422 image_too_large, since decoding cost
// grows with every scan and image/jpeg cannot be interrupted.
const maxJPEGScans = 256

// sosMarker is the JPEG start-of-scan marker. Entropy-coded data stuffs
// every 0xFF with 0x00, so the pair appears only as a marker (or inside
// another segment's payload, which can only over-count).
var sosMarker = []byte{0xFF, 0xDA}

// process sniffs, checks the budgets from the header (see admit),
// decodes, scales and encodes. It checks ctx between the phases.
func (s *Service) process(ctx context.Context, req resizeRequest) resizeResult {
	var res resizeResult
	format := sniff(req.image)
	if format == "" {
		res.err = newError(http.StatusUnsupportedMediaType, CodeUnsupportedFormat,
			"resize: image is neither JPEG nor PNG (judged by content)")
		return res
	}
	var (
		cfg image.Config
		err error
	)
	if format == formatPNG {
		cfg, err = png.DecodeConfig(bytes.NewReader(req.image))
	} else {
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(req.image))
	}
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		res.err = newError(http.StatusBadRequest, CodeCorruptImage, fmt.Sprintf("resize: read %s header: %v", format, errOrSize(err, cfg)))
		return res
	}
	res.srcW, res.srcH, res.haveSrcConfig = cfg.Width, cfg.Height, true
	dw, dh := targetSize(cfg.Width, cfg.Height, req.width)
	if res.err = s.admit(format, req.image, cfg, dw, dh); res.err != nil {
		return res
	}
	if ctx.Err() != nil {
		res.err = timeoutError(s.cfg.Timeout)
		return res
	}

	var src image.Image
	if format == formatPNG {
		src, err = png.Decode(bytes.NewReader(req.image))
	} else {
		src, err = jpeg.Decode(bytes.NewReader(req.image))
	}
	if err != nil {
		res.err = newError(http.StatusBadRequest, CodeCorruptImage, fmt.Sprintf("resize: decode %s: %v", format, err))
		return res
	}
	if ctx.Err() != nil {
		res.err = timeoutError(s.cfg.Timeout)
		return res
	}

	dst := scaleImage(src, dw, dh)
	if ctx.Err() != nil {
		res.err = timeoutError(s.cfg.Timeout)
		return res
	}

	var buf bytes.Buffer
	out := &encoded{width: dw, height: dh}
	if format == formatPNG {
		out.contentType = "image/png"
		err = png.Encode(&buf, dst)
	} else {
		out.contentType = "image/jpeg"
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: s.cfg.JPEGQuality})
	}
	if err != nil { // writing to a bytes.Buffer cannot fail
		res.err = newError(http.StatusInternalServerError, CodeInternal, fmt.Sprintf("resize: encode %s: %v", format, err))
		return res
	}
	out.data = buf.Bytes()
	res.out = out
	return res
}

// admit checks an image whose header says cfg, to be scaled to dw×dh,
// against the scan limit and the pixel and working-memory budgets, before
// a pixel is decoded: 422 image_too_large, or nil.
func (s *Service) admit(format string, data []byte, cfg image.Config, dw, dh int) *apiError {
	if format == formatJPEG {
		// image/jpeg puts no bound on the scans of a progressive JPEG and
		// each one re-walks the whole image: a small file of many tiny
		// scans would hold a slot for minutes past the deadline.
		if n := bytes.Count(data, sosMarker); n > maxJPEGScans {
			return newError(http.StatusUnprocessableEntity, CodeImageTooLarge,
				fmt.Sprintf("resize: the JPEG has %d scans, over the limit of %d", n, maxJPEGScans))
		}
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > s.cfg.MaxSourcePixels {
		return newError(http.StatusUnprocessableEntity, CodeImageTooLarge,
			fmt.Sprintf("resize: source %dx%d is %d pixels, over the %d-pixel budget", cfg.Width, cfg.Height, px, s.cfg.MaxSourcePixels))
	}
	if px := int64(dw) * int64(dh); px > s.cfg.MaxSourcePixels {
		return newError(http.StatusUnprocessableEntity, CodeImageTooLarge,
			fmt.Sprintf("resize: target %dx%d is %d pixels, over the %d-pixel budget", dw, dh, px, s.cfg.MaxSourcePixels))
	}
	if wb := workBytes(cfg.Width, cfg.Height, sourcePixelBytes(format, data), dw, dh); wb > s.cfg.MaxWorkBytes {
		return newError(http.StatusUnprocessableEntity, CodeImageTooLarge,
			fmt.Sprintf("resize: %dx%d to %dx%d needs about %d MiB, over the %d MiB working-memory budget; ask for a smaller width",
				cfg.Width, cfg.Height, dw, dh, wb>>20, s.cfg.MaxWorkBytes>>20))
	}
	return nil
}

func errOrSize(err error, cfg image.Config) any {
	if err != nil {
		return err
	}
	return fmt.Sprintf("invalid size %dx%d", cfg.Width, cfg.Height)
}
