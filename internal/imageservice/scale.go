package imageservice

import (
	"encoding/binary"
	"image"

	"golang.org/x/image/draw"
)

// scaleImage returns src scaled to dw×dh with CatmullRom. When the source
// is more than four times the target in both directions it is first
// reduced by an integer factor k with an exact box (area) average, so
// that CatmullRom sees at most about twice the target size. The box
// filter is the ideal anti-aliasing filter for an integer reduction, so
// the result matches direct CatmullRom closely while costing one pass
// over the source and bounding x/image/draw's scratch buffer (32 bytes
// per target-width × source-height pixel) to a few times the target.
func scaleImage(src image.Image, dw, dh int) *image.RGBA {
	sb := src.Bounds()
	if k := reduction(sb.Dx(), sb.Dy(), dw, dh); k >= 2 {
		src = boxReduce(src, k)
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	kernel.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// reduction is the integer box pre-reduction factor scaleImage applies
// (below 2: none).
func reduction(sw, sh, dw, dh int) int {
	return min(sw/(2*dw), sh/(2*dh))
}

// workBytes estimates the peak memory of scaling a sw×sh source whose
// decoded pixels take srcPixelBytes each (see sourcePixelBytes) to dw×dh:
// the decoded source, the box-reduced copy (4 bytes a pixel), the
// CatmullRom scratch buffer of 32 bytes per dw × (reduced) source row, and
// the target (4 bytes a pixel).
func workBytes(sw, sh int, srcPixelBytes int64, dw, dh int) int64 {
	src := srcPixelBytes * int64(sw) * int64(sh)
	rows := int64(sh)
	if k := reduction(sw, sh, dw, dh); k >= 2 {
		rw, rh := (int64(sw)+int64(k)-1)/int64(k), (int64(sh)+int64(k)-1)/int64(k)
		src += 4 * rw * rh
		rows = rh
	}
	return src + 32*int64(dw)*rows + 4*int64(dw)*int64(dh)
}

// sourcePixelBytes is what one decoded pixel of data (in format, its
// header already read by DecodeConfig) takes in memory, counted at 4 at
// least: 8 for a 16-bit PNG that image/png decodes to RGBA64 or NRGBA64
// (colour, grey with alpha, or grey with a tRNS chunk), 4 for the rest
// (8-bit RGBA and NRGBA; Gray, Gray16, Paletted, YCbCr and CMYK take 4 or
// less).
func sourcePixelBytes(format string, data []byte) int64 {
	if format != formatPNG || len(data) < pngHeaderEnd || data[pngBitDepth] != 16 {
		return 4
	}
	if data[pngColourType] == pngGrey && !pngHasTransparency(data) {
		return 4 // Gray16: 2 bytes
	}
	return 8
}

// Offsets in a PNG file whose first chunk is IHDR (png.DecodeConfig
// insists on it): the 8-byte signature, the chunk's length and type, then
// width, height, bit depth and colour type; IHDR's 13 bytes and CRC end at
// pngHeaderEnd.
const (
	pngBitDepth   = 8 + 8 + 8
	pngColourType = pngBitDepth + 1
	pngHeaderEnd  = 8 + 8 + 13 + 4
	pngGrey       = 0 // colour type of plain greyscale
)

// pngHasTransparency reports whether a tRNS chunk comes before the first
// IDAT chunk (where the format requires it), walking the chunk headers
// only.
func pngHasTransparency(data []byte) bool {
	for off := pngHeaderEnd; off+8 <= len(data); {
		n := int64(binary.BigEndian.Uint32(data[off:]))
		switch string(data[off+4 : off+8]) {
		case "tRNS":
			return true
		case "IDAT":
			return false
		}
		next := int64(off) + 12 + n // length, type, data, CRC
		if next > int64(len(data)) {
			return false
		}
		off = int(next)
	}
	return false
}

// boxReduce averages k×k blocks of src into one pixel of a premultiplied
// RGBA image of ceil(w/k)×ceil(h/k) pixels; blocks cut by the right and
// bottom edges average the pixels they have.
func boxReduce(src image.Image, k int) *image.RGBA {
	sb := src.Bounds()
	w, h := sb.Dx(), sb.Dy()
	ow, oh := (w+k-1)/k, (h+k-1)/k
	dst := image.NewRGBA(image.Rect(0, 0, ow, oh))
	// One row of block sums (16-bit premultiplied channels), reused.
	sums := make([][4]uint64, ow)
	pixel := rowReader(src)
	for oy := range oh {
		clear(sums)
		y0, y1 := sb.Min.Y+oy*k, min(sb.Min.Y+(oy+1)*k, sb.Max.Y)
		for y := y0; y < y1; y++ {
			for x := range w {
				r, g, b, a := pixel(sb.Min.X+x, y)
				s := &sums[x/k]
				s[0] += uint64(r)
				s[1] += uint64(g)
				s[2] += uint64(b)
				s[3] += uint64(a)
			}
		}
		rows := uint64(y1 - y0)
		for ox := range ow {
			cols := uint64(min((ox+1)*k, w) - ox*k)
			n := rows * cols * 257 // 16-bit sums → 8-bit average
			s := sums[ox]
			i := dst.PixOffset(ox, oy)
			dst.Pix[i+0] = uint8((s[0] + n/2) / n)
			dst.Pix[i+1] = uint8((s[1] + n/2) / n)
			dst.Pix[i+2] = uint8((s[2] + n/2) / n)
			dst.Pix[i+3] = uint8((s[3] + n/2) / n)
		}
	}
	return dst
}

// rowReader returns a function giving the 16-bit premultiplied RGBA of a
// pixel, with fast paths for the types the JPEG and PNG decoders produce
// most often (avoiding an interface allocation per pixel).
func rowReader(src image.Image) func(x, y int) (r, g, b, a uint32) {
	switch s := src.(type) {
	case *image.YCbCr:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			return s.YCbCrAt(x, y).RGBA()
		}
	case *image.RGBA:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			return s.RGBAAt(x, y).RGBA()
		}
	case *image.NRGBA:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			return s.NRGBAAt(x, y).RGBA()
		}
	case *image.Gray:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			return s.GrayAt(x, y).RGBA()
		}
	case *image.CMYK:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			return s.CMYKAt(x, y).RGBA()
		}
	}
	return func(x, y int) (uint32, uint32, uint32, uint32) {
		return src.At(x, y).RGBA()
	}
}
