package replay

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v2/cassette"
)

// makePNG encodes a 32x32 PNG of seeded noise.
func makePNG(t testing.TB, seed int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, noise(seed)))
	return buf.Bytes()
}

// makeJPEG encodes a 32x32 JPEG of seeded noise.
func makeJPEG(t testing.TB, seed int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, noise(seed), &jpeg.Options{Quality: 90}))
	return buf.Bytes()
}

func noise(seed int64) image.Image {
	r := rand.New(rand.NewSource(seed))
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for y := range 32 {
		for x := range 32 {
			img.Set(x, y, color.RGBA{uint8(r.Intn(256)), uint8(r.Intn(256)), uint8(r.Intn(256)), 255})
		}
	}
	return img
}

// newImageServer answers POST /resize with a PNG derived from the upload
// (its SHA-256 seeds the noise), counting calls.
func newImageServer(t *testing.T, calls *int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*calls++
		body, _ := io.ReadAll(r.Body)
		var seed int64
		for _, b := range body {
			seed = seed*31 + int64(b)
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(makePNG(t, seed))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// newRawServer answers every request with body as contentType.
func newRawServer(t *testing.T, contentType string, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// upload POSTs a multipart body and returns the response and its body.
func upload(t *testing.T, client *http.Client, url, contentType string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, got
}

// TestBinaryBodiesRoundTrip records real PNG and JPEG bodies (and texts
// yaml.v3 cannot write back as text) and replays them byte for byte.
func TestBinaryBodiesRoundTrip(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        []byte
	}{
		{name: "PNG", contentType: "image/png", body: makePNG(t, 1)},
		{name: "JPEG", contentType: "image/jpeg", body: makeJPEG(t, 2)},
		{name: "NUL and CRLF", contentType: "application/octet-stream", body: []byte("a\x00b\r\nc\r\n")},
		{name: "leading newline (yaml.v3 drops it as text)", contentType: "text/plain", body: []byte("\n{\"a\":1}")},
		{name: "tab-indented lines (yaml.v3 cannot read them back)", contentType: "text/plain", body: []byte("\t\n\ta")},
		{name: "trailing spaces and newlines", contentType: "text/plain", body: []byte("x  \n\n\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, tt.contentType, tt.body)
			path := filepath.Join(t.TempDir(), "image.yaml")
			c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
			require.NoError(t, err)
			ct, up := multipartBody(t, "b1", "in.bin", tt.body)
			_, live := upload(t, c.Client(), srv.URL+"/resize", ct, up)
			require.Equal(t, tt.body, live)
			require.NoError(t, c.Close())

			loaded, err := cassette.Load(path[:len(path)-len(".yaml")])
			require.NoError(t, err, "go-vcr cannot read the cassette back")
			require.Len(t, loaded.Interactions, 1)
			require.Equal(t, string(tt.body), loaded.Interactions[0].Response.Body)
			require.Equal(t, string(up), loaded.Interactions[0].Request.Body)

			srv.Close()
			r, err := Open(path, ModeReplay)
			require.NoError(t, err)
			ct, up = multipartBody(t, "b2", "in.bin", tt.body)
			_, got := upload(t, r.Client(), srv.URL+"/resize", ct, up)
			require.True(t, bytes.Equal(tt.body, got), "replayed body differs:\nwant %q\ngot  %q", tt.body, got)
			require.NoError(t, r.Close())
		})
	}
}

// TestYAMLTextBodiesStayReadable: bodies yaml.v3 handles stay text, so a
// cassette diff in review shows the prompt, not base64.
func TestYAMLTextBodiesStayReadable(t *testing.T) {
	data, err := encodeCassette([]*cassette.Interaction{{
		Request:  cassette.Request{Method: "POST", URL: "http://h/x", Body: `{"messages":[{"content":"resize cat.png"}]}`},
		Response: cassette.Response{Code: 200, Body: "line one\nline two\n"},
	}})
	require.NoError(t, err)
	require.Contains(t, string(data), "resize cat.png")
	require.Contains(t, string(data), "line one")
	require.NotContains(t, string(data), "!!binary")
}

// FuzzEncodeBody: any body survives encodeCassette and go-vcr's decoding.
func FuzzEncodeBody(f *testing.F) {
	f.Add([]byte("\n-8 (\t##-"))
	f.Add([]byte("\t\n\ta"))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, body []byte) {
		in := []*cassette.Interaction{{
			Request:  cassette.Request{Method: "POST", URL: "http://h/x", Body: string(body)},
			Response: cassette.Response{Code: 200, Body: string(body) + "\n" + string(body)},
		}}
		data, err := encodeCassette(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := decodeCassette(data)
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, data)
		}
		if out[0].Request.Body != in[0].Request.Body || out[0].Response.Body != in[0].Response.Body {
			t.Fatalf("body changed in round trip:\n%q\n%q", in[0].Request.Body, out[0].Request.Body)
		}
	})
}
