package imageservice_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"

	"github.com/agenthub/agenthub/internal/imageservice"
)

// ExampleNew runs the service in-process and resizes a 300×200 PNG to
// 150 px wide, the way the image_scaling tool calls it.
func ExampleNew() {
	srv := httptest.NewServer(imageservice.New(imageservice.Config{}, slog.New(slog.DiscardHandler)))
	defer srv.Close()

	var pic bytes.Buffer
	_ = png.Encode(&pic, image.NewGray(image.Rect(0, 0, 300, 200)))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("image", "picture.png")
	_, _ = fw.Write(pic.Bytes())
	_ = mw.WriteField("width", "150")
	_ = mw.Close()

	resp, err := http.Post(srv.URL+"/resize", mw.FormDataContentType(), &body)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("X-Image-Width"), resp.Header.Get("X-Image-Height"))
	// Output: 200 image/png 150 100
}

// ExampleWithFaults answers the first /resize call with 503 busy, as a
// recorded scenario does to exercise the tool's retry path.
func ExampleWithFaults() {
	h := imageservice.WithFaults(imageservice.New(imageservice.Config{}, nil),
		[]imageservice.Fault{{Call: 1, Status: http.StatusServiceUnavailable, RetryAfterS: 2}})
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/resize", "multipart/form-data; boundary=x", bytes.NewReader(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"))
	fmt.Print(string(b))
	// Output:
	// 503 2
	// {"error":{"code":"busy","message":"resize: injected fault for call 1: 503 Service Unavailable"}}
}
