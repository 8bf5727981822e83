package replay

import (
	"bytes"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// multipartBody builds a multipart body with the given boundary: a text
// field "width" and a file "image".
func multipartBody(t testing.TB, boundary, fileName string, content []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	require.NoError(t, w.SetBoundary(boundary))
	require.NoError(t, w.WriteField("width", "64"))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="image"; filename="`+fileName+`"`)
	h.Set("Content-Type", "image/png")
	p, err := w.CreatePart(h)
	require.NoError(t, err)
	_, err = p.Write(content)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return w.FormDataContentType(), buf.Bytes()
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func TestCanonicalize(t *testing.T) {
	type req struct {
		method, url, contentType string
		body                     []byte
	}
	png := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	ctA, bodyA := multipartBody(t, "boundaryAAAA", "cat.png", png)
	ctB, bodyB := multipartBody(t, "boundaryBBBB", "cat.png", png)
	_, bodyOtherImage := multipartBody(t, "boundaryAAAA", "cat.png", append([]byte{}, append(png, '!')...))
	_, bodyOtherName := multipartBody(t, "boundaryAAAA", "dog.png", png)

	tests := []struct {
		name string
		a, b req
		want bool
	}{
		{
			name: "JSON key order and whitespace never matter",
			a:    req{"POST", "http://127.0.0.1:1234/v1/chat", "application/json", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)},
			b:    req{"POST", "http://127.0.0.1:1234/v1/chat", "application/json", []byte("{\n  \"messages\": [ {\"content\":\"hi\", \"role\":\"user\"} ],\n  \"model\": \"m\"\n}")},
			want: true,
		},
		{
			name: "JSON with a different message does not match",
			a:    req{"POST", "http://h/v1/chat", "application/json", []byte(`{"messages":[{"content":"hi"}]}`)},
			b:    req{"POST", "http://h/v1/chat", "application/json", []byte(`{"messages":[{"content":"ho"}]}`)},
			want: false,
		},
		{
			name: "JSON array order matters",
			a:    req{"POST", "http://h/x", "application/json", []byte(`[1,2]`)},
			b:    req{"POST", "http://h/x", "application/json", []byte(`[2,1]`)},
			want: false,
		},
		{
			name: "host and port are ignored",
			a:    req{"GET", "http://127.0.0.1:1111/healthz", "", nil},
			b:    req{"GET", "https://api.example.com:443/healthz", "", nil},
			want: true,
		},
		{
			name: "query order is ignored",
			a:    req{"GET", "http://h/x?b=2&a=1", "", nil},
			b:    req{"GET", "http://h/x?a=1&b=2", "", nil},
			want: true,
		},
		{
			name: "query values differ",
			a:    req{"GET", "http://h/x?a=1", "", nil},
			b:    req{"GET", "http://h/x?a=2", "", nil},
			want: false,
		},
		{
			name: "secret query values are redacted on both sides",
			a:    req{"GET", "http://h/x?key=REDACTED&q=1", "", nil},
			b:    req{"GET", "http://h/x?q=1&key=live-secret-123", "", nil},
			want: true,
		},
		{
			name: "path differs",
			a:    req{"GET", "http://h/x", "", nil},
			b:    req{"GET", "http://h/y", "", nil},
			want: false,
		},
		{
			name: "method differs",
			a:    req{"GET", "http://h/x", "", nil},
			b:    req{"DELETE", "http://h/x", "", nil},
			want: false,
		},
		{
			name: "content-type parameters are ignored",
			a:    req{"POST", "http://h/x", "application/json; charset=utf-8", []byte(`{"a":1}`)},
			b:    req{"POST", "http://h/x", "Application/JSON", []byte(`{"a":1.0}`)},
			want: true,
		},
		{
			name: "media type differs",
			a:    req{"POST", "http://h/x", "text/plain", []byte(`{"a":1}`)},
			b:    req{"POST", "http://h/x", "application/json", []byte(`{"a":1}`)},
			want: false,
		},
		{
			name: "multipart bodies with different boundaries match",
			a:    req{"POST", "http://h/resize", ctA, bodyA},
			b:    req{"POST", "http://h/resize", ctB, bodyB},
			want: true,
		},
		{
			name: "multipart file content differs",
			a:    req{"POST", "http://h/resize", ctA, bodyA},
			b:    req{"POST", "http://h/resize", ctA, bodyOtherImage},
			want: false,
		},
		{
			name: "multipart file name differs",
			a:    req{"POST", "http://h/resize", ctA, bodyA},
			b:    req{"POST", "http://h/resize", ctA, bodyOtherName},
			want: false,
		},
		{
			name: "forms are compared sorted",
			a:    req{"POST", "http://h/x", "application/x-www-form-urlencoded", []byte("b=2&a=1")},
			b:    req{"POST", "http://h/x", "application/x-www-form-urlencoded", []byte("a=1&b=2")},
			want: true,
		},
		{
			name: "invalid JSON is compared byte for byte",
			a:    req{"POST", "http://h/x", "application/json", []byte(`{"a":`)},
			b:    req{"POST", "http://h/x", "application/json", []byte(`{"a": `)},
			want: false,
		},
		{
			name: "JSON with trailing data is not JSON",
			a:    req{"POST", "http://h/x", "application/json", []byte(`{"a":1} {"b":2}`)},
			b:    req{"POST", "http://h/x", "application/json", []byte(`{"a":1}{"b":2}`)},
			want: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := canonicalize(tt.a.method, mustURL(t, tt.a.url), tt.a.contentType, tt.a.body)
			b := canonicalize(tt.b.method, mustURL(t, tt.b.url), tt.b.contentType, tt.b.body)
			require.Equal(t, tt.want, a.Equal(b), "a=%+v\nb=%+v", a, b)
		})
	}
}

func TestCanonicalizeMultipartParts(t *testing.T) {
	ct, body := multipartBody(t, "xyz", "cat.png", []byte("PNGDATA"))
	got := canonicalize("POST", mustURL(t, "http://h/resize"), ct, body)
	want := []Part{
		{Name: "width", Size: 2, SHA256: sha256Hex([]byte("64")), Value: "64"},
		{Name: "image", FileName: "cat.png", ContentType: "image/png", Size: 7, SHA256: sha256Hex([]byte("PNGDATA"))},
	}
	if diff := cmp.Diff(want, got.Body); diff != "" {
		t.Errorf("parts mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(got.key, "xyz") {
		t.Errorf("canonical key contains the boundary: %q", got.key)
	}
}

func FuzzCanonicalize(f *testing.F) {
	ct, body := multipartBody(f, "seedboundary", "a.png", []byte("\x89PNG"))
	f.Add("application/json", []byte(`{"b":[1,2,{"c":null}],"a":"x"}`))
	f.Add(ct, body)
	f.Add("application/x-www-form-urlencoded", []byte("a=1&b=%zz"))
	f.Add("multipart/form-data; boundary=", []byte("--\r\n"))
	f.Add("", []byte("\xff\xfe"))
	f.Add("text/plain; charset=\"", []byte("hello"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		u := &url.URL{Path: "/x", RawQuery: "b=1&a=2"}
		a := canonicalize("POST", u, contentType, body)
		b := canonicalize("POST", u, contentType, append([]byte(nil), body...))
		if !a.Equal(b) {
			t.Fatalf("canonical form is not deterministic: %q vs %q", a.key, b.key)
		}
		if len(body) > 0 && a.Body == nil {
			t.Fatalf("non-empty body has no canonical body")
		}
		// A different method never matches.
		if c := canonicalize("PUT", u, contentType, body); c.Equal(a) {
			t.Fatalf("method ignored")
		}
	})
}
