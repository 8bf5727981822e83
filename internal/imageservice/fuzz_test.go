package imageservice

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"strconv"
	"testing"
)

// FuzzResize feeds arbitrary multipart bodies to /resize. Properties: no
// panic, never a 500, every error is a well-formed JSON body with a known
// code, and every success is an image of the announced size and type.
func FuzzResize(f *testing.F) {
	small := syntheticImage(24, 16, 1)
	seeds := [][]byte{
		imageBody(f, "a.jpg", encodeJPEG(f, small), "12"),
		imageBody(f, "a.png", encodePNG(f, small), "40"),
		imageBody(f, "a.png", encodePNG(f, image.NewPaletted(image.Rect(0, 0, 3, 2), color.Palette{color.Black, color.White})), "1"),
		imageBody(f, "b.png", pngWithHeader(50_000, 50_000), "64"),
		imageBody(f, "c.png", pngWithHeader(1, 5000), "1024"),
		imageBody(f, "d.png", encodePNG(f, image.NewNRGBA64(image.Rect(0, 0, 5, 3))), "4"),
		imageBody(f, "e.png", pngWithIHDR(64, 64, 16, 0, "tRNS", "\x00\x00"), "32"),
		imageBody(f, "a.jpg", encodeJPEG(f, small)[:40], "8"),
		imageBody(f, "a.gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "8"),
		multipartBody(f, part{name: "width", data: []byte("7")}),
		imageBody(f, "a.png", encodePNG(f, small), "0"),
		[]byte("--" + testBoundary + "--\r\n"),
		nil,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	known := map[Code]int{
		CodeInvalidWidth: 400, CodeMissingImage: 400, CodeInvalidRequest: 400, CodeCorruptImage: 400,
		CodeUnsupportedFormat: 415, CodePayloadTooLarge: 413, CodeImageTooLarge: 422,
	}
	// Small limits keep each input cheap; the code paths are the same.
	svc := New(Config{MaxBodyBytes: 1 << 20, MaxWidth: 1024, MaxSourcePixels: 1 << 20}, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := serve(svc, "", body)
		if rec.Code == http.StatusOK {
			var (
				cfg image.Config
				err error
			)
			switch ct := rec.Header().Get("Content-Type"); ct {
			case "image/jpeg":
				cfg, err = jpeg.DecodeConfig(bytes.NewReader(rec.Body.Bytes()))
			case "image/png":
				cfg, err = png.DecodeConfig(bytes.NewReader(rec.Body.Bytes()))
			default:
				t.Fatalf("200 with Content-Type %q", ct)
			}
			if err != nil {
				t.Fatalf("200 answer does not decode: %v", err)
			}
			if got := [2]string{strconv.Itoa(cfg.Width), strconv.Itoa(cfg.Height)}; got != [2]string{rec.Header().Get("X-Image-Width"), rec.Header().Get("X-Image-Height")} {
				t.Fatalf("decoded size %v disagrees with headers %q×%q", got, rec.Header().Get("X-Image-Width"), rec.Header().Get("X-Image-Height"))
			}
			return
		}
		var er errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &er); err != nil {
			t.Fatalf("status %d with a non-JSON body %q", rec.Code, rec.Body.Bytes())
		}
		want, ok := known[er.Error.Code]
		if !ok || want != rec.Code {
			t.Fatalf("status %d with code %q (message %q)", rec.Code, er.Error.Code, er.Error.Message)
		}
	})
}
