package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/draw"
)

// Compile-time checks: the shapes the agent asserts on.
var (
	_ interface {
		Name() string
		Description() string
		Execute(context.Context, string) (string, error)
	} = (*ImageScaling)(nil)
	_ interface {
		Recover(context.Context, string, Code) (any, bool, error)
	} = (*ImageScaling)(nil)
)

// testImage returns a w×h image with a gradient and a dark square.
func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255}
			if x > w/4 && x < w/2 && y > h/4 && y < h/2 {
				c = color.RGBA{20, 20, 20, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

func encodeJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, testImage(w, h), &jpeg.Options{Quality: 80}))
	return buf.Bytes()
}

func encodePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, testImage(w, h)))
	return buf.Bytes()
}

func encodeGIF(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, gif.Encode(&buf, testImage(8, 8), nil))
	return buf.Bytes()
}

// newImageWorkspace builds a workspace with:
//
//	picture/window.jpg (120×80 JPEG), picture/door.png (60×40 PNG),
//	picture/UPPER.JPG, picture/notes.txt, picture/sub/ (a folder),
//	my pics/sea side.jpg, fake.jpg (text), swapped.jpg (PNG bytes),
//	animation.gif, escape.jpg -> OUT/secret.jpg, outdir -> OUT
func newImageWorkspace(t testing.TB) *Workspace {
	t.Helper()
	root, outside := t.TempDir(), t.TempDir()
	for name, data := range workspaceFiles(t) {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.jpg"), encodeJPEG(t, 10, 10), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.jpg"), filepath.Join(root, "escape.jpg")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "outdir")))
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	return ws
}

var (
	filesOnce sync.Once
	files     map[string][]byte
)

// workspaceFiles returns the files of newImageWorkspace, encoded once.
func workspaceFiles(t testing.TB) map[string][]byte {
	filesOnce.Do(func() {
		files = map[string][]byte{
			"picture/window.jpg":   encodeJPEG(t, 120, 80),
			"picture/door.png":     encodePNG(t, 60, 40),
			"picture/UPPER.JPG":    encodeJPEG(t, 30, 30),
			"picture/notes.txt":    []byte("notes"),
			"picture/sub/deep.png": encodePNG(t, 10, 10),
			"my pics/sea side.jpg": encodeJPEG(t, 100, 50),
			"fake.jpg":             []byte("this is text, not a JPEG"),
			"swapped.jpg":          encodePNG(t, 10, 10),
			"animation.gif":        encodeGIF(t),
			"empty/readme.md":      []byte("no images here"),
		}
	})
	return files
}

// resizeServer is an in-test stand-in for the image service: it decodes
// the multipart request, resizes with x/image/draw and answers like the
// real service. It keeps every request body it saw.
type resizeServer struct {
	mu     sync.Mutex
	bodies [][]byte
	ctypes []string
	calls  int
}

func (s *resizeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeServiceError(w, http.StatusBadRequest, "bad_body", err.Error())
		return
	}
	s.mu.Lock()
	s.calls++
	s.bodies = append(s.bodies, body)
	s.ctypes = append(s.ctypes, r.Header.Get("Content-Type"))
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/resize" {
		writeServiceError(w, http.StatusNotFound, "not_found", r.Method+" "+r.URL.Path)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		writeServiceError(w, http.StatusBadRequest, "bad_multipart", err.Error())
		return
	}
	width, err := strconv.Atoi(r.FormValue("width"))
	if err != nil || width < 1 {
		writeServiceError(w, http.StatusBadRequest, "bad_width", "width must be a positive integer")
		return
	}
	f, _, err := r.FormFile("image")
	if err != nil {
		writeServiceError(w, http.StatusBadRequest, "missing_image", err.Error())
		return
	}
	defer f.Close()
	src, format, err := image.Decode(f)
	if err != nil {
		writeServiceError(w, http.StatusUnsupportedMediaType, "unsupported_format", err.Error())
		return
	}
	b := src.Bounds()
	height := max(1, (b.Dy()*width+b.Dx()/2)/b.Dx())
	dst := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	var out bytes.Buffer
	if format == "png" {
		err = png.Encode(&out, dst)
	} else {
		err = jpeg.Encode(&out, dst, &jpeg.Options{Quality: 85})
	}
	if err != nil {
		writeServiceError(w, http.StatusInternalServerError, "encode", err.Error())
		return
	}
	w.Header().Set("Content-Type", "image/"+format)
	w.Header().Set("X-Image-Width", strconv.Itoa(width))
	w.Header().Set("X-Image-Height", strconv.Itoa(height))
	w.Write(out.Bytes())
}

func writeServiceError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// statusHandler answers every request with status and body.
func statusHandler(status int, body string, header map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// leftoverTemps lists temporary files the tool left in dir.
func leftoverTemps(t *testing.T, ws *Workspace) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(ws.Root(), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			rel, _ := filepath.Rel(ws.Root(), p)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	return found
}

func TestImageScalingExecute(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()

	// hang reads the request (so the server notices the client leaving)
	// and answers nothing until the client gives up.
	hang := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}

	type result struct {
		Output string `json:"output"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
	}
	tests := []struct {
		name          string
		input         string
		setup         func(t *testing.T, root string)
		handler       http.Handler // nil: the resize server
		baseURL       string       // overrides the server's URL
		clientTimeout time.Duration
		ctxTimeout    time.Duration
		want          *result
		wantCode      Code
		wantRetry     bool
		wantMsg       []string // substrings of the error message
		wantNoCall    bool     // the service must not be called
	}{
		// Successes.
		{name: "jpeg text input", input: "picture/window.jpg 60", want: &result{"picture/window_60.jpg", 60, 40}},
		{name: "dot slash path", input: "./picture/window.jpg 30", want: &result{"picture/window_30.jpg", 30, 20}},
		{name: "png", input: "picture/door.png 30", want: &result{"picture/door_30.png", 30, 20}},
		{name: "upper case extension", input: "picture/UPPER.JPG 15", want: &result{"picture/UPPER_15.JPG", 15, 15}},
		{name: "json input", input: `{"path":"picture/window.jpg","width":24}`, want: &result{"picture/window_24.jpg", 24, 16}},
		{name: "json string width", input: `{"path": "./picture/window.jpg", "width": "12"}`, want: &result{"picture/window_12.jpg", 12, 8}},
		{name: "spaces in path", input: "my pics/sea side.jpg 50", want: &result{"my pics/sea side_50.jpg", 50, 25}},
		{name: "quoted path and padding", input: "  \"my pics/sea side.jpg\"   20 \n", want: &result{"my pics/sea side_20.jpg", 20, 10}},
		{name: "absolute path inside", input: "ROOT/picture/window.jpg 6", want: &result{"picture/window_6.jpg", 6, 4}},
		{
			name: "the largest width", input: "picture/door.png 4096",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// A real 4096-pixel resize is slow under -race; answer a
				// 4096×1 strip after checking the request asked for 4096.
				if r.FormValue("width") != "4096" {
					writeServiceError(w, http.StatusBadRequest, "bad_width", r.FormValue("width"))
					return
				}
				w.Write(encodePNG(t, 4096, 1))
			}),
			want: &result{"picture/door_4096.png", 4096, 1},
		},
		{
			name: "no size headers: decoded", input: "picture/window.jpg 10",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Write(encodeJPEG(t, 10, 7))
			}),
			want: &result{"picture/window_10.jpg", 10, 7},
		},

		// Bad input: the service is never called.
		{name: "empty input", input: "  ", wantCode: CodeInvalidInput, wantMsg: []string{"empty", "PATH WIDTH"}, wantNoCall: true},
		{name: "missing width", input: "picture/window.jpg", wantCode: CodeInvalidInput, wantMsg: []string{"width is missing"}, wantNoCall: true},
		{name: "missing width with spaces", input: "my pics/sea side.jpg", wantCode: CodeInvalidInput, wantMsg: []string{`"side.jpg" is not a width`}, wantNoCall: true},
		{name: "missing path", input: "256", wantCode: CodeInvalidInput, wantMsg: []string{"path is missing"}, wantNoCall: true},
		{name: "width zero", input: "picture/window.jpg 0", wantCode: CodeInvalidInput, wantMsg: []string{"out of range", "1 to 4096"}, wantNoCall: true},
		{name: "width negative", input: "picture/window.jpg -5", wantCode: CodeInvalidInput, wantMsg: []string{"out of range"}, wantNoCall: true},
		{name: "width too large", input: "picture/window.jpg 4097", wantCode: CodeInvalidInput, wantMsg: []string{"out of range"}, wantNoCall: true},
		{name: "width fraction", input: "picture/window.jpg 25.5", wantCode: CodeInvalidInput, wantMsg: []string{"not a whole number"}, wantNoCall: true},
		{name: "width word", input: "picture/window.jpg wide", wantCode: CodeInvalidInput, wantMsg: []string{`"wide" is not a width`}, wantNoCall: true},
		{name: "json malformed", input: `{"path":"picture/window.jpg",`, wantCode: CodeInvalidInput, wantMsg: []string{"malformed"}, wantNoCall: true},
		{name: "json missing width", input: `{"path":"picture/window.jpg"}`, wantCode: CodeInvalidInput, wantMsg: []string{`no "width"`}, wantNoCall: true},
		{name: "json missing path", input: `{"width":10}`, wantCode: CodeInvalidInput, wantMsg: []string{`no "path"`}, wantNoCall: true},
		{name: "json bool width", input: `{"path":"picture/window.jpg","width":true}`, wantCode: CodeInvalidInput, wantNoCall: true},
		{
			name: "file too large", input: "huge.jpg 10",
			setup: func(t *testing.T, root string) {
				// A sparse file: JPEG magic, then a hole up to the limit.
				f, err := os.Create(filepath.Join(root, "huge.jpg"))
				require.NoError(t, err)
				_, err = f.Write([]byte{0xFF, 0xD8, 0xFF})
				require.NoError(t, err)
				require.NoError(t, f.Truncate(MaxImageBytes+1))
				require.NoError(t, f.Close())
			},
			wantCode: CodePayloadTooLarge, wantMsg: []string{"limit"}, wantNoCall: true,
		},
		{name: "folder", input: "picture 10", wantCode: CodeInvalidInput, wantMsg: []string{"not a regular file"}, wantNoCall: true},

		// The sandbox.
		{name: "dotdot escape", input: "../etc/passwd.jpg 10", wantCode: CodePathOutsideWorkspace, wantNoCall: true},
		{name: "absolute outside", input: "/etc/hosts.jpg 10", wantCode: CodePathOutsideWorkspace, wantNoCall: true},
		{name: "symlink escape", input: "escape.jpg 10", wantCode: CodePathOutsideWorkspace, wantNoCall: true},
		{name: "symlinked folder escape", input: "outdir/secret.jpg 10", wantCode: CodePathOutsideWorkspace, wantNoCall: true},
		{name: "missing file", input: "picture/windw.jpg 10", wantCode: CodeFileNotFound, wantMsg: []string{`"picture/windw.jpg"`}, wantNoCall: true},
		{name: "missing file as written", input: "./picture/nope.png 10", wantCode: CodeFileNotFound, wantMsg: []string{`"./picture/nope.png"`}, wantNoCall: true},

		// Formats.
		{name: "wrong extension", input: "animation.gif 10", wantCode: CodeUnsupportedFormat, wantMsg: []string{`".gif"`}, wantNoCall: true},
		{name: "text extension", input: "picture/notes.txt 10", wantCode: CodeUnsupportedFormat, wantNoCall: true},
		{name: "text with jpg name", input: "fake.jpg 10", wantCode: CodeUnsupportedFormat, wantMsg: []string{"not an image"}, wantNoCall: true},
		{name: "png with jpg name", input: "swapped.jpg 10", wantCode: CodeUnsupportedFormat, wantMsg: []string{"a PNG image"}, wantNoCall: true},

		// Output.
		{
			name: "output exists", input: "picture/window.jpg 60",
			setup: func(t *testing.T, root string) {
				require.NoError(t, os.WriteFile(filepath.Join(root, "picture", "window_60.jpg"), []byte("keep me"), 0o644))
			},
			wantCode: CodeOutputExists, wantMsg: []string{"picture/window_60.jpg"}, wantNoCall: true,
		},
		{
			name: "output is a dangling symlink", input: "picture/window.jpg 61",
			setup: func(t *testing.T, root string) {
				require.NoError(t, os.Symlink("/nonexistent/x", filepath.Join(root, "picture", "window_61.jpg")))
			},
			wantCode: CodeOutputExists, wantNoCall: true,
		},

		// Service failures.
		{name: "400", input: "picture/window.jpg 10", handler: statusHandler(400, `{"error":{"code":"bad_width","message":"width too large for this image"}}`, nil),
			wantCode: CodeInvalidInput, wantMsg: []string{"HTTP 400", "bad_width", "width too large for this image"}},
		{name: "413", input: "picture/window.jpg 10", handler: statusHandler(413, `{"error":{"code":"too_large","message":"limit 10 MB"}}`, nil),
			wantCode: CodePayloadTooLarge, wantMsg: []string{"HTTP 413", "too_large"}},
		{name: "415", input: "picture/window.jpg 10", handler: statusHandler(415, `{"error":{"code":"unsupported_format","message":"cannot decode"}}`, nil),
			wantCode: CodeUnsupportedFormat, wantMsg: []string{"HTTP 415", "cannot decode"}},
		{name: "500", input: "picture/window.jpg 10", handler: statusHandler(500, `{"error":{"code":"internal","message":"boom"}}`, nil),
			wantCode: CodeServiceError, wantMsg: []string{"HTTP 500", "internal: boom"}},
		{name: "500 plain body", input: "picture/window.jpg 10", handler: statusHandler(500, "oops", nil),
			wantCode: CodeServiceError, wantMsg: []string{"HTTP 500"}},
		{name: "404 wrong base", input: "picture/window.jpg 10", handler: http.NotFoundHandler(),
			wantCode: CodeServiceError, wantMsg: []string{"HTTP 404"}},
		{name: "429", input: "picture/window.jpg 10", handler: statusHandler(429, "", map[string]string{"Retry-After": "2"}),
			wantCode: CodeServiceError, wantRetry: true, wantMsg: []string{"HTTP 429", "retry after 2s"}},
		{name: "502", input: "picture/window.jpg 10", handler: statusHandler(502, "", nil),
			wantCode: CodeServiceUnavailable, wantRetry: true, wantMsg: []string{"HTTP 502"}},
		{name: "503", input: "picture/window.jpg 10", handler: statusHandler(503, `{"error":{"code":"overloaded","message":"try later"}}`, map[string]string{"Retry-After": "1"}),
			wantCode: CodeServiceUnavailable, wantRetry: true, wantMsg: []string{"HTTP 503", "overloaded: try later", "retry after 1s"}},
		{name: "504", input: "picture/window.jpg 10", handler: statusHandler(504, "", nil),
			wantCode: CodeServiceUnavailable, wantRetry: true, wantMsg: []string{"HTTP 504"}},
		{name: "truncated answer", input: "picture/window.jpg 10", handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n\xff\xd8\xff")
			buf.Flush()
		}), wantCode: CodeServiceUnavailable, wantRetry: true, wantMsg: []string{"unreachable"}},
		{name: "200 with garbage", input: "picture/window.jpg 10", handler: statusHandler(200, "not an image", nil),
			wantCode: CodeServiceError, wantMsg: []string{"not an image"}},
		{name: "refused connection", input: "picture/window.jpg 10", baseURL: refusedURL,
			wantCode: CodeServiceUnavailable, wantRetry: true, wantMsg: []string{"refused the connection", "go run ./cmd/imaged"}},
		{name: "bad base URL", input: "picture/window.jpg 10", baseURL: "http://[::1",
			wantCode: CodeServiceError, wantMsg: []string{"bad image service URL"}},
		{name: "client timeout", input: "picture/window.jpg 10", handler: http.HandlerFunc(hang), clientTimeout: 50 * time.Millisecond,
			wantCode: CodeServiceUnavailable, wantRetry: true, wantMsg: []string{"did not answer in time"}},
		{name: "context timeout", input: "picture/window.jpg 10", handler: http.HandlerFunc(hang), ctxTimeout: 50 * time.Millisecond,
			wantCode: CodeServiceUnavailable, wantRetry: true, wantMsg: []string{"stopped", "deadline exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := newImageWorkspace(t)
			if tt.setup != nil {
				tt.setup(t, ws.Root())
			}
			rs := &resizeServer{}
			var calls int
			var mu sync.Mutex
			h := tt.handler
			if h == nil {
				h = rs
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				mu.Unlock()
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			base := srv.URL
			if tt.baseURL != "" {
				base = tt.baseURL
			}
			tool := NewImageScaling(ws, base+"/", &http.Client{Timeout: tt.clientTimeout})
			ctx := context.Background()
			if tt.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
				t.Cleanup(cancel)
			}
			input := strings.ReplaceAll(tt.input, "ROOT", ws.Root())

			out, err := tool.Execute(ctx, input)

			if diff := cmp.Diff(tt.wantCode, errCode(err)); diff != "" {
				t.Fatalf("Execute(%q) code mismatch (-want +got):\n%s\nerr: %v", input, diff, err)
			}
			if tt.ctxTimeout > 0 {
				require.ErrorIs(t, err, context.DeadlineExceeded, "the agent tells a tool timeout by this")
			}
			mu.Lock()
			gotCalls := calls
			mu.Unlock()
			if tt.wantNoCall && gotCalls != 0 {
				t.Errorf("the service was called %d times; want none", gotCalls)
			}
			if diff := cmp.Diff([]string(nil), leftoverTemps(t, ws)); diff != "" {
				t.Errorf("temporary files mismatch (-want +got):\n%s", diff)
			}
			if tt.wantCode != "" {
				var te *Error
				require.ErrorAs(t, err, &te)
				if diff := cmp.Diff(tt.wantRetry, te.Retryable); diff != "" {
					t.Errorf("Retryable mismatch (-want +got):\n%s", diff)
				}
				for _, s := range tt.wantMsg {
					require.Contains(t, te.Message, s)
				}
				require.True(t, strings.HasPrefix(te.Message, "image_scaling: ") || strings.HasPrefix(te.Message, "resolve path: "), "message %q starts with the operation", te.Message)
				return
			}
			var got result
			require.NoError(t, json.Unmarshal([]byte(out), &got), "output %q", out)
			if diff := cmp.Diff(*tt.want, got); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
			f, err := os.Open(filepath.Join(ws.Root(), filepath.FromSlash(got.Output)))
			require.NoError(t, err)
			defer f.Close()
			cfg, _, err := image.DecodeConfig(f)
			require.NoError(t, err)
			if diff := cmp.Diff([2]int{got.Width, got.Height}, [2]int{cfg.Width, cfg.Height}); diff != "" {
				t.Errorf("saved image size mismatch (-want +got):\n%s", diff)
			}
			fi, err := f.Stat()
			require.NoError(t, err)
			if diff := cmp.Diff(os.FileMode(0o644), fi.Mode().Perm()); diff != "" {
				t.Errorf("output mode mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImageScalingOutputExistsKeepsFile(t *testing.T) {
	ws := newImageWorkspace(t)
	srv := httptest.NewServer(&resizeServer{})
	t.Cleanup(srv.Close)
	tool := NewImageScaling(ws, srv.URL, srv.Client())
	_, err := tool.Execute(context.Background(), "picture/window.jpg 40")
	require.NoError(t, err)
	out := filepath.Join(ws.Root(), "picture", "window_40.jpg")
	first, err := os.ReadFile(out)
	require.NoError(t, err)

	_, err = tool.Execute(context.Background(), "picture/window.jpg 40")
	if diff := cmp.Diff(CodeOutputExists, errCode(err)); diff != "" {
		t.Fatalf("second call code mismatch (-want +got):\n%s", diff)
	}
	second, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, bytes.Equal(first, second), "the existing output was not touched")
}

func TestImageScalingFolderSwappedDuringUpload(t *testing.T) {
	// The folder of the input is swapped for a link to the outside while
	// the service works: the result is not saved outside the workspace.
	ws := newImageWorkspace(t)
	outside := t.TempDir()
	rs := &resizeServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pic := filepath.Join(ws.Root(), "picture")
		if err := os.Rename(pic, pic+".old"); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, pic); err != nil {
			t.Error(err)
		}
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tool := NewImageScaling(ws, srv.URL, srv.Client())
	_, err := tool.Execute(context.Background(), "picture/window.jpg 10")
	if diff := cmp.Diff(CodePathOutsideWorkspace, errCode(err)); diff != "" {
		t.Errorf("code mismatch (-want +got):\n%s\nerr: %v", diff, err)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	if len(entries) != 0 {
		t.Errorf("files written outside the workspace: %v", entries)
	}
}

func TestImageScalingRecoverCapped(t *testing.T) {
	// A folder of thousands of images gives a bounded listing that says
	// how many it leaves out.
	tests := []struct {
		name      string
		files     int
		nameLen   int // bytes of each file name
		wantCount int
	}{
		{name: "by count", files: 200, nameLen: 8, wantCount: maxListedImages},
		{name: "by bytes", files: 40, nameLen: 95, wantCount: maxListedBytes / len("many/"+strings.Repeat("x", 95))},
		{name: "under both", files: 5, nameLen: 8, wantCount: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "many")
			require.NoError(t, os.Mkdir(dir, 0o755))
			for i := range tt.files {
				name := fmt.Sprintf("%0*d.jpg", tt.nameLen-len(".jpg"), i)
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
			}
			ws, err := NewWorkspace(root)
			require.NoError(t, err)
			got, ok, err := NewImageScaling(ws, "", nil).Recover(context.Background(), "many/missing.jpg 10", CodeFileNotFound)
			require.NoError(t, err)
			require.True(t, ok)
			list := got.(imageList)
			if diff := cmp.Diff(tt.wantCount, len(list.AvailableImages)); diff != "" {
				t.Errorf("listed mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.files-tt.wantCount, list.MoreImages); diff != "" {
				t.Errorf("more_images mismatch (-want +got):\n%s", diff)
			}
			require.Equal(t, tt.files > tt.wantCount, list.Truncated())
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.LessOrEqual(t, len(b), maxListedBytes+maxListedImages*3+100, "the listing stays small")
		})
	}
}

func TestWriteNewRace(t *testing.T) {
	// The check before the upload and the link at the end: when two calls
	// race for the same output, exactly one wins and the other reports
	// output_exists.
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = writeNew(root, "out.jpg", []byte(fmt.Sprintf("writer %d", i)))
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch errCode(err) {
		case "":
			wins++
		case CodeOutputExists:
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if diff := cmp.Diff(1, wins); diff != "" {
		t.Errorf("winners mismatch (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	if diff := cmp.Diff(1, len(entries)); diff != "" {
		t.Errorf("files left mismatch (-want +got):\n%s", diff)
	}
}

func TestImageScalingRequestShape(t *testing.T) {
	// The request is what cassettes record and match: same input, same
	// bytes; the parts are "image" (file name, type, content) then "width".
	ws := newImageWorkspace(t)
	rs := &resizeServer{}
	srv := httptest.NewServer(rs)
	t.Cleanup(srv.Close)
	tool := NewImageScaling(ws, srv.URL, srv.Client())
	for _, w := range []string{"33", "34"} {
		_, err := tool.Execute(context.Background(), "picture/window.jpg "+w)
		require.NoError(t, err)
		require.NoError(t, os.Remove(filepath.Join(ws.Root(), "picture", "window_"+w+".jpg")))
	}
	_, err := tool.Execute(context.Background(), "picture/window.jpg 33")
	require.NoError(t, err)

	require.Len(t, rs.bodies, 3)
	require.True(t, bytes.Equal(rs.bodies[0], rs.bodies[2]), "the same call produced different bodies")
	if diff := cmp.Diff(rs.ctypes[0], rs.ctypes[2]); diff != "" {
		t.Errorf("Content-Type mismatch (-want +got):\n%s", diff)
	}
	require.NotEqual(t, rs.ctypes[0], rs.ctypes[1], "another width gets another boundary")

	mediaType, params, err := mime.ParseMediaType(rs.ctypes[0])
	require.NoError(t, err)
	require.Equal(t, "multipart/form-data", mediaType)
	require.Regexp(t, `^agenthub-[0-9a-f]{40}$`, params["boundary"])

	want, err := os.ReadFile(filepath.Join(ws.Root(), "picture", "window.jpg"))
	require.NoError(t, err)
	type part struct {
		Name, FileName, ContentType string
		Body                        []byte
	}
	var got []part
	mr := multipart.NewReader(bytes.NewReader(rs.bodies[0]), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(p)
		require.NoError(t, err)
		got = append(got, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), body})
	}
	wantParts := []part{
		{Name: "image", FileName: "window.jpg", ContentType: "image/jpeg", Body: want},
		{Name: "width", Body: []byte("33")},
	}
	if diff := cmp.Diff(wantParts, got); diff != "" {
		t.Errorf("parts mismatch (-want +got):\n%s", diff)
	}
}

func TestMultipartBoundaryAvoidsContent(t *testing.T) {
	// Content that happens to contain the hash boundary gets another one.
	data := []byte("payload")
	_, ct, err := multipartBody("a.png", "png", data, 5)
	require.NoError(t, err)
	_, params, err := mime.ParseMediaType(ct)
	require.NoError(t, err)
	collide := append([]byte("x"+params["boundary"]+"y"), data...)
	body, ct2, err := multipartBody("a.png", "png", collide, 5)
	require.NoError(t, err)
	_, params2, err := mime.ParseMediaType(ct2)
	require.NoError(t, err)
	require.False(t, bytes.Contains(collide, []byte(params2["boundary"])), "boundary %q occurs in the content", params2["boundary"])
	mr := multipart.NewReader(bytes.NewReader(body), params2["boundary"])
	p, err := mr.NextPart()
	require.NoError(t, err)
	got, err := io.ReadAll(p)
	require.NoError(t, err)
	require.True(t, bytes.Equal(collide, got), "the image part round-trips")
}

func TestImageScalingRecover(t *testing.T) {
	ws := newImageWorkspace(t)
	tool := NewImageScaling(ws, "http://127.0.0.1:1", nil)
	tests := []struct {
		name   string
		input  string
		code   Code
		want   any
		wantOK bool
	}{
		{name: "typo in file name", input: "picture/windw.jpg 256", code: CodeFileNotFound, wantOK: true,
			want: imageList{Dir: "picture", AvailableImages: []string{"picture/UPPER.JPG", "picture/door.png", "picture/window.jpg"}}},
		{name: "dot slash and json", input: `{"path":"./picture/x.png","width":5}`, code: CodeFileNotFound, wantOK: true,
			want: imageList{Dir: "picture", AvailableImages: []string{"picture/UPPER.JPG", "picture/door.png", "picture/window.jpg"}}},
		{name: "missing folder falls back to parent", input: "picture/photos/2024/a.jpg 10", code: CodeFileNotFound, wantOK: true,
			want: imageList{Dir: "picture", AvailableImages: []string{"picture/UPPER.JPG", "picture/door.png", "picture/window.jpg"}}},
		{name: "root", input: "photo.jpg 10", code: CodeFileNotFound, wantOK: true,
			want: imageList{Dir: ".", AvailableImages: []string{"fake.jpg", "swapped.jpg"}}},
		{name: "spaces", input: "my pics/sea.jpg 10", code: CodeFileNotFound, wantOK: true,
			want: imageList{Dir: "my pics", AvailableImages: []string{"my pics/sea side.jpg"}}},
		{name: "folder without images", input: "empty/a.jpg 10", code: CodeFileNotFound},
		{name: "other code", input: "picture/windw.jpg 256", code: CodeServiceUnavailable},
		{name: "unparseable input", input: "picture/windw.jpg", code: CodeFileNotFound},
		{name: "outside", input: "../x/a.jpg 10", code: CodeFileNotFound},
		{name: "through an escaping symlink", input: "outdir/nope.jpg 10", code: CodeFileNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := tool.Recover(context.Background(), tt.input, tt.code)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.wantOK, ok); diff != "" {
				t.Fatalf("ok mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Recover mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("json shape", func(t *testing.T) {
		got, ok, err := tool.Recover(context.Background(), "my pics/x.jpg 3", CodeFileNotFound)
		require.NoError(t, err)
		require.True(t, ok)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		if diff := cmp.Diff(`{"dir":"my pics","available_images":["my pics/sea side.jpg"]}`, string(b)); diff != "" {
			t.Errorf("JSON mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestImageScalingBundledWorkspace(t *testing.T) {
	// testdata/images is the bundled suite's workspace: check the files
	// are what the scenarios assume, and resize the real window.jpg.
	src := filepath.Join("..", "..", "testdata", "images")
	root := t.TempDir()
	for _, name := range []string{"picture/window.jpg", "picture/door.png", "picture/notes.txt", "fake.jpg", "animation.gif"} {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(name)))
		require.NoError(t, err)
		require.Less(t, len(data), 50<<10, "%s stays small", name)
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	srv := httptest.NewServer(&resizeServer{})
	t.Cleanup(srv.Close)
	tool := NewImageScaling(ws, srv.URL, srv.Client())

	tests := []struct {
		input, want string
		wantCode    Code
	}{
		{input: "./picture/window.jpg 256", want: `{"output":"picture/window_256.jpg","width":256,"height":171}`},
		{input: "picture/door.png 150", want: `{"output":"picture/door_150.png","width":150,"height":100}`},
		{input: "fake.jpg 10", wantCode: CodeUnsupportedFormat},
		{input: "animation.gif 10", wantCode: CodeUnsupportedFormat},
		{input: "picture/notes.txt 10", wantCode: CodeUnsupportedFormat},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			got, err := tool.Execute(context.Background(), tt.input)
			if diff := cmp.Diff(tt.wantCode, errCode(err)); diff != "" {
				t.Fatalf("code mismatch (-want +got):\n%s\nerr: %v", diff, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got, ok, err := tool.Recover(context.Background(), "picture/windows.jpg 256", CodeFileNotFound)
	require.NoError(t, err)
	require.True(t, ok)
	want := imageList{Dir: "picture", AvailableImages: []string{"picture/door.png", "picture/door_150.png", "picture/window.jpg", "picture/window_256.jpg"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Recover mismatch (-want +got):\n%s", diff)
	}
}

func TestImageScalingDescription(t *testing.T) {
	require.Equal(t, "image_scaling", NewImageScaling(nil, "", nil).Name())
	d := NewImageScaling(nil, "", nil).Description()
	for _, s := range []string{"picture/window.jpg 256", `{"path":"picture/window.jpg","width":256}`, "1 to 4096", "NAME_WIDTH.EXT"} {
		require.Contains(t, d, s)
	}
	// The example in the description parses to what it says.
	in, err := ParseScalingInput("picture/window.jpg 256")
	require.NoError(t, err)
	if diff := cmp.Diff(ScalingInput{Path: "picture/window.jpg", Width: 256}, in); diff != "" {
		t.Errorf("ParseScalingInput mismatch (-want +got):\n%s", diff)
	}
}

func TestEcho(t *testing.T) {
	for _, in := range []string{"", "hello", "Final Answer: x\nline 2", "  spaced  "} {
		got, err := Echo{}.Execute(context.Background(), in)
		require.NoError(t, err)
		if diff := cmp.Diff(in, got); diff != "" {
			t.Errorf("Echo mismatch (-want +got):\n%s", diff)
		}
	}
	require.Equal(t, "echo", Echo{}.Name())
	require.NotEmpty(t, Echo{}.Description())
}
