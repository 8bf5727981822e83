package imageservice

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestBoxReduce(t *testing.T) {
	// 5×3 grey ramp reduced by 2: blocks 2×2, 1×2 (right edge), 2×1 and 1×1 (bottom).
	src := image.NewGray(image.Rect(10, 20, 15, 23)) // offset bounds on purpose
	vals := [3][5]uint8{
		{0, 10, 20, 30, 40},
		{50, 60, 70, 80, 90},
		{100, 110, 120, 130, 140},
	}
	for y := range 3 {
		for x := range 5 {
			src.SetGray(10+x, 20+y, color.Gray{Y: vals[y][x]})
		}
	}
	got := boxReduce(src, 2)
	want := [][]uint8{
		{30, 50, 65}, // (0+10+50+60)/4, (20+30+70+80)/4, (40+90)/2
		{105, 125, 140},
	}
	require.Equal(t, image.Rect(0, 0, 3, 2), got.Bounds())
	var gotVals [][]uint8
	for y := range 2 {
		var row []uint8
		for x := range 3 {
			c := got.RGBAAt(x, y)
			require.Equal(t, c.R, c.G, "grey stays grey")
			require.Equal(t, uint8(255), c.A, "opaque stays opaque")
			row = append(row, c.R)
		}
		gotVals = append(gotVals, row)
	}
	if diff := cmp.Diff(want, gotVals); diff != "" {
		t.Errorf("box averages mismatch (-want +got):\n%s", diff)
	}
}

func TestRowReaderFastPaths(t *testing.T) {
	rgba := syntheticImage(9, 7, 5)
	nrgba := image.NewNRGBA(rgba.Bounds())
	ycc := image.NewYCbCr(rgba.Bounds(), image.YCbCrSubsampleRatio420)
	gray := image.NewGray(rgba.Bounds())
	cmyk := image.NewCMYK(rgba.Bounds())
	for y := range 7 {
		for x := range 9 {
			c := rgba.RGBAAt(x, y)
			c.A = uint8(40 + x*20)
			nrgba.SetNRGBA(x, y, color.NRGBA{c.R, c.G, c.B, c.A})
			gray.SetGray(x, y, color.Gray{Y: c.G})
			cmyk.SetCMYK(x, y, color.CMYK{C: c.R, M: c.G, Y: c.B, K: uint8(x)})
			yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
			ycc.Y[ycc.YOffset(x, y)] = yy
			ycc.Cb[ycc.COffset(x, y)] = cb
			ycc.Cr[ycc.COffset(x, y)] = cr
		}
	}
	tests := []struct {
		name string
		img  image.Image
	}{
		{"rgba", rgba}, {"nrgba", nrgba}, {"ycbcr", ycc}, {"gray", gray}, {"cmyk", cmyk},
		{"gray16 (generic path)", image.NewGray16(rgba.Bounds())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := rowReader(tt.img)
			for y := range 7 {
				for x := range 9 {
					r, g, b, a := read(x, y)
					wr, wg, wb, wa := tt.img.At(x, y).RGBA()
					require.Equal(t, [4]uint32{wr, wg, wb, wa}, [4]uint32{r, g, b, a}, "pixel (%d,%d)", x, y)
				}
			}
		})
	}
}

func TestScaleImageSize(t *testing.T) {
	tests := []struct {
		name   string
		sw, sh int
		dw, dh int
	}{
		{"small ratio scales directly", 150, 103, 64, 44},
		{"upscale scales directly", 30, 20, 300, 200},
		{"16x downscale pre-reduces", 1024, 768, 64, 48},
		{"one-row target", 300, 200, 120, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := scaleImage(image.NewGray(image.Rect(0, 0, tt.sw, tt.sh)), tt.dw, tt.dh)
			require.Equal(t, image.Rect(0, 0, tt.dw, tt.dh), out.Bounds())
		})
	}
}

func TestWorkBytes(t *testing.T) {
	tests := []struct {
		name           string
		sw, sh, dw, dh int
		want           int64
	}{
		// 4·150·103 + 32·64·103 + 4·64·44
		{"small, no pre-reduction", 150, 103, 64, 44, 61800 + 210944 + 11264},
		// 4·4000·3000 + 4·572·429 (k=7) + 32·256·429 + 4·256·192
		{"large downscale, pre-reduced by 7", 4000, 3000, 256, 192, 48_000_000 + 981_552 + 3_514_368 + 196_608},
		// 4·6000·6000 + 32·4096·6000 + 4·4096·4096
		{"36 MP to 4096 wide", 6000, 6000, 4096, 4096, 144_000_000 + 786_432_000 + 67_108_864},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, workBytes(tt.sw, tt.sh, 4, tt.dw, tt.dh))
		})
	}
}

// TestSourcePixelBytes checks the estimate read from the PNG header
// against what image/png really allocates for real files of each kind.
func TestSourcePixelBytes(t *testing.T) {
	const w, h = 6, 4
	rect := image.Rect(0, 0, w, h)
	semi := image.NewNRGBA64(rect)
	semi.SetNRGBA64(1, 1, color.NRGBA64{R: 1 << 15, A: 1 << 15}) // not opaque: stays colour type 6
	// withTRNS inserts a tRNS chunk (grey sample 0 is transparent) after IHDR.
	withTRNS := func(data []byte) []byte {
		var buf bytes.Buffer
		buf.Write(data[:pngHeaderEnd])
		writePNGChunk(&buf, "tRNS", []byte{0, 0})
		buf.Write(data[pngHeaderEnd:])
		return buf.Bytes()
	}
	gray16 := encodePNG(t, image.NewGray16(rect))
	tests := []struct {
		name   string
		format string
		data   []byte
		want   int64
	}{
		{"16-bit RGBA", formatPNG, encodePNG(t, semi), 8},
		{"16-bit RGB", formatPNG, encodePNG(t, image.NewRGBA64(rect)), 8},
		{"16-bit grey", formatPNG, gray16, 4},
		{"16-bit grey with tRNS", formatPNG, withTRNS(gray16), 8},
		{"8-bit RGBA", formatPNG, encodePNG(t, syntheticImage(w, h, 1)), 4},
		{"8-bit grey", formatPNG, encodePNG(t, image.NewGray(rect)), 4},
		{"8-bit grey with tRNS", formatPNG, withTRNS(encodePNG(t, image.NewGray(rect))), 4},
		{"paletted", formatPNG, encodePNG(t, image.NewPaletted(rect, color.Palette{color.Black, color.White})), 4},
		{"JPEG (YCbCr, 4:2:0)", formatJPEG, encodeJPEG(t, syntheticImage(64, 48, 1)), 4}, // large enough that MCU padding does not count
		{"a short PNG", formatPNG, gray16[:pngHeaderEnd-1], 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sourcePixelBytes(tt.format, tt.data)
			require.Equal(t, tt.want, got)
			if len(tt.data) < pngHeaderEnd {
				return
			}
			var (
				img image.Image
				err error
			)
			if tt.format == formatPNG {
				img, err = png.Decode(bytes.NewReader(tt.data))
			} else {
				img, err = jpeg.Decode(bytes.NewReader(tt.data))
			}
			require.NoError(t, err)
			require.Equal(t, max(4, decodedPixelBytes(t, img)), got, "the estimate is the decoded %T's pixel size, at least 4", img)
		})
	}
}

// decodedPixelBytes is the bytes a pixel of img takes in memory: the
// length of its pixel slices (Pix; Y, Cb and Cr for YCbCr) over its area,
// rounded up.
func decodedPixelBytes(t *testing.T, img image.Image) int64 {
	t.Helper()
	v := reflect.ValueOf(img).Elem()
	n := 0
	for _, name := range []string{"Pix", "Y", "Cb", "Cr"} {
		if f := v.FieldByName(name); f.IsValid() {
			n += f.Len()
		}
	}
	require.Positive(t, n, "no pixel slice in %T", img)
	b := img.Bounds()
	return int64((n + b.Dx()*b.Dy() - 1) / (b.Dx() * b.Dy()))
}
