package imageservice

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/image/draw"
)

// benchSources are the JPEG sizes BenchmarkResize measures, each scaled
// to 256 px wide. The sources are synthetic (gradients plus seeded noise,
// quality 90) so the benchmark needs no files.
var benchSources = []struct {
	name string
	w, h int
}{
	{"150x103", 150, 103},
	{"1024x768", 1024, 768},
	{"4000x3000", 4000, 3000},
}

// BenchmarkResize measures a whole POST /resize in-process: multipart
// parsing, sniffing, decoding, CatmullRom scaling to 256 px wide and JPEG
// encoding.
func BenchmarkResize(b *testing.B) {
	svc := New(Config{}, nil)
	for _, src := range benchSources {
		data := encodeJPEG(b, syntheticImage(src.w, src.h, 7))
		body := imageBody(b, "a.jpg", data, "256")
		b.Run(src.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				rec := serve(svc, "", body)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
		})
	}
}

// kernels are the candidate filters compared by BenchmarkKernels and
// TestKernelQuality.
var kernels = []struct {
	name   string
	scaler draw.Scaler
}{
	{"Service", serviceScaler{}},
	{"CatmullRom", draw.CatmullRom},
	{"BiLinear", draw.BiLinear},
	{"ApproxBiLinear", draw.ApproxBiLinear},
}

// serviceScaler is scaleImage (box pre-reduction, then CatmullRom) as a
// draw.Scaler over whole images, for comparison with the plain kernels.
type serviceScaler struct{}

func (serviceScaler) Scale(dst draw.Image, dr image.Rectangle, src image.Image, sr image.Rectangle, op draw.Op, opts *draw.Options) {
	out := scaleImage(src, dr.Dx(), dr.Dy())
	draw.Copy(dst, dr.Min, out, out.Bounds(), op, opts)
}

// BenchmarkKernels measures the scaling step alone (decoded YCbCr source,
// RGBA destination 256 px wide) for each candidate filter.
func BenchmarkKernels(b *testing.B) {
	for _, src := range benchSources[1:] {
		img, err := jpeg.Decode(bytes.NewReader(encodeJPEG(b, syntheticImage(src.w, src.h, 7))))
		require.NoError(b, err)
		dw, dh := targetSize(src.w, src.h, 256)
		for _, k := range kernels {
			b.Run(src.name+"/"+k.name, func(b *testing.B) {
				b.ReportAllocs()
				dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
				for i := 0; i < b.N; i++ {
					k.scaler.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
			})
		}
	}
}

// noisyGray is a w×h grey gradient with seeded noise of ±amp: detail finer
// than any downscaled pixel, which a good filter averages away and a
// point-sampling one aliases into the result.
func noisyGray(w, h, amp int, seed uint64) *image.Gray {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := 64 + 128*x/w + rng.IntN(2*amp+1) - amp
			img.SetGray(x, y, color.Gray{Y: uint8(min(max(v, 0), 255))})
		}
	}
	return img
}

// boxDownscale is the exact area average of src over f×f blocks: the
// reference a 1/f downscale should approach.
func boxDownscale(src *image.Gray, f int) []float64 {
	b := src.Bounds()
	w, h := b.Dx()/f, b.Dy()/f
	out := make([]float64, w*h)
	for y := range h {
		for x := range w {
			sum := 0
			for yy := range f {
				for xx := range f {
					sum += int(src.GrayAt(x*f+xx, y*f+yy).Y)
				}
			}
			out[y*w+x] = float64(sum) / float64(f*f)
		}
	}
	return out
}

// psnr is the peak signal-to-noise ratio in dB of got's red channel
// against the reference (higher is closer).
func psnr(ref []float64, got *image.RGBA) float64 {
	var se float64
	b := got.Bounds()
	for y := range b.Dy() {
		for x := range b.Dx() {
			d := float64(got.RGBAAt(x, y).R) - ref[y*b.Dx()+x]
			se += d * d
		}
	}
	mse := se / float64(len(ref))
	return 10 * math.Log10(255*255/mse)
}

// TestKernelQuality measures how close each filter's 16× downscale comes
// to the exact area average. It is the quality half of the filter choice
// documented in the package comment: CatmullRom and BiLinear widen their
// support when downscaling; ApproxBiLinear samples 2×2 source pixels and
// aliases.
func TestKernelQuality(t *testing.T) {
	const f = 16
	bars := image.NewGray(image.Rect(0, 0, 512, 384))
	for y := range 384 {
		for x := range 512 {
			if (x/53)%2 == 0 { // bars 53 source pixels wide, edges off the 16-pixel grid
				bars.SetGray(x, y, color.Gray{Y: 230})
			} else {
				bars.SetGray(x, y, color.Gray{Y: 25})
			}
		}
	}
	tests := []struct {
		name string
		src  *image.Gray
		why  string
	}{
		{"noise", noisyGray(512, 384, 48, 3), "fine detail must average out, not alias"},
		{"bars", bars, "edges must stay sharp"},
	}
	got := map[string]float64{}
	for _, tt := range tests {
		ref := boxDownscale(tt.src, f)
		for _, k := range kernels {
			dst := image.NewRGBA(image.Rect(0, 0, 512/f, 384/f))
			k.scaler.Scale(dst, dst.Bounds(), tt.src, tt.src.Bounds(), draw.Src, nil)
			got[tt.name+"/"+k.name] = psnr(ref, dst)
			t.Logf("%-6s %-14s PSNR vs area average: %.1f dB", tt.name, k.name, got[tt.name+"/"+k.name])
		}
	}
	require.Greater(t, got["noise/Service"], got["noise/CatmullRom"]-1, "box pre-reduction must not lose quality on noise")
	require.Greater(t, got["bars/Service"], got["bars/CatmullRom"]-1, "box pre-reduction must not lose quality on edges")
	require.Greater(t, got["noise/CatmullRom"], got["noise/ApproxBiLinear"]+10, "CatmullRom must not alias noise")
	require.Greater(t, got["noise/BiLinear"], got["noise/ApproxBiLinear"]+10, "BiLinear must not alias noise")
	require.Greater(t, got["bars/CatmullRom"], got["bars/BiLinear"]+1, "CatmullRom must keep edges sharper than BiLinear")
}
