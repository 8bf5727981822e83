package imageservice

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// testBoundary is the fixed multipart boundary of every test body.
const testBoundary = "imageservice-test-boundary"

// testContentType is the Content-Type that goes with testBoundary.
const testContentType = "multipart/form-data; boundary=" + testBoundary

var goroot = sync.OnceValue(func() string {
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if s := strings.TrimSpace(string(out)); s != "" {
			return s
		}
	}
	return ""
})

// stdImage reads an image from GOROOT/src/image/REL, skipping the test
// when the Go distribution has no source tree.
func stdImage(tb testing.TB, rel string) []byte {
	tb.Helper()
	root := goroot()
	if root == "" {
		tb.Skip("skipping: cannot find GOROOT (go env GOROOT failed); the real-image tests need $GOROOT/src/image/testdata")
	}
	p := filepath.Join(root, "src", "image", filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		tb.Skipf("skipping: %s is missing; the real-image tests need the Go source tree's image testdata", p)
	}
	require.NoError(tb, err)
	return b
}

// part is one part of a multipart body.
type part struct {
	name     string
	filename string // empty: a plain form field
	data     []byte
}

// multipartBody builds a body with testBoundary.
func multipartBody(tb testing.TB, parts ...part) []byte {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	require.NoError(tb, mw.SetBoundary(testBoundary))
	for _, p := range parts {
		h := make(textproto.MIMEHeader)
		if p.filename != "" {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"; filename="`+p.filename+`"`)
			h.Set("Content-Type", "application/octet-stream")
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"`)
		}
		w, err := mw.CreatePart(h)
		require.NoError(tb, err)
		_, err = w.Write(p.data)
		require.NoError(tb, err)
	}
	require.NoError(tb, mw.Close())
	return buf.Bytes()
}

// imageBody is the usual request: file field "image" and field "width".
func imageBody(tb testing.TB, filename string, data []byte, width string) []byte {
	tb.Helper()
	return multipartBody(tb, part{name: "image", filename: filename, data: data}, part{name: "width", data: []byte(width)})
}

// serve sends a POST /resize (plus query) with body to h in-process.
func serve(h http.Handler, query string, body []byte) *httptest.ResponseRecorder {
	target := "/resize"
	if query != "" {
		target += "?" + query
	}
	req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", testContentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// errorDetail decodes an error body, failing the test if it is not one.
func errorDetail(tb testing.TB, contentType string, body []byte) errorFields {
	tb.Helper()
	require.Equal(tb, "application/json", contentType, "error Content-Type; body %q", body)
	var er errorBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(tb, dec.Decode(&er), "error body %q", body)
	require.NotEmpty(tb, er.Error.Code, "error body %q", body)
	require.NotEmpty(tb, er.Error.Message, "error body %q", body)
	return er.Error
}

// syntheticImage is a deterministic w×h picture with smooth gradients and
// seeded fine detail, so that JPEG sizes and decode costs are realistic.
func syntheticImage(w, h int, seed uint64) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(32))
			img.SetRGBA(x, y, color.RGBA{
				R: uint8(x*255/max(w-1, 1)) ^ n,
				G: uint8(y*255/max(h-1, 1)) + n,
				B: uint8((x+y)/4) ^ (n << 1),
				A: 255,
			})
		}
	}
	return img
}

func encodeJPEG(tb testing.TB, img image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	require.NoError(tb, jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}))
	return buf.Bytes()
}

func encodePNG(tb testing.TB, img image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	require.NoError(tb, png.Encode(&buf, img))
	return buf.Bytes()
}

// blockingBody is a request body that yields prefix, then blocks until
// release is closed, then yields rest.
type blockingBody struct {
	r       io.Reader
	release chan struct{}
	once    sync.Once
	prefix  []byte
	rest    []byte
}

func newBlockingBody(prefix, rest []byte) *blockingBody {
	return &blockingBody{release: make(chan struct{}), prefix: prefix, rest: rest}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if len(b.prefix) > 0 {
		n := copy(p, b.prefix)
		b.prefix = b.prefix[n:]
		return n, nil
	}
	<-b.release
	b.once.Do(func() { b.r = bytes.NewReader(b.rest) })
	return b.r.Read(p)
}

// Release lets the rest of the body through.
func (b *blockingBody) Release() {
	select {
	case <-b.release:
	default:
		close(b.release)
	}
}

// postResize sends body to srv's /resize and returns the status, headers
// and response body; a transport error is returned as status 0 with its
// text as the body (callers in goroutines cannot fail the test).
func postResize(srv *httptest.Server, body io.Reader) (int, http.Header, []byte) {
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/resize", body)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	req.Header.Set("Content-Type", testContentType)
	resp, err := srv.Client().Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	return resp.StatusCode, resp.Header, b
}
