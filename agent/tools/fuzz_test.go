package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// scalingSeeds are inputs the tests exercise, good and bad.
var scalingSeeds = []string{
	"picture/window.jpg 256",
	"./picture/window.jpg 30",
	"my pics/sea side.jpg 50",
	`  "my pics/sea side.jpg"   20 `,
	`{"path":"picture/window.jpg","width":24}`,
	`{"path": "./picture/window.jpg", "width": "12"}`,
	`{"path":"picture/window.jpg","width":true}`,
	`{"path":"picture/window.jpg",`,
	"picture/window.jpg",
	"256",
	"picture/window.jpg 25.5",
	"picture/window.jpg 1e3",
	"picture/window.jpg NaN",
	"picture/window.jpg -Inf",
	"a\tb\n4096",
	"",
	"\"",
	"'' 5",
}

func FuzzParseScalingInput(f *testing.F) {
	for _, s := range scalingSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		got, err := ParseScalingInput(input)
		if err != nil {
			if code := errCode(err); code != CodeInvalidInput {
				t.Fatalf("ParseScalingInput(%q) code = %q, want %q", input, code, CodeInvalidInput)
			}
			return
		}
		if got.Width < MinWidth || got.Width > MaxWidth {
			t.Fatalf("ParseScalingInput(%q) width %d out of range", input, got.Width)
		}
		if got.Path == "" || strings.TrimSpace(got.Path) != got.Path {
			t.Fatalf("ParseScalingInput(%q) path %q is empty or padded", input, got.Path)
		}
	})
}

func FuzzScalingInputRoundTrip(f *testing.F) {
	f.Add("picture/window.jpg", 256)
	f.Add("my pics/sea side.jpg", 4096)
	f.Add("{odd", 1)
	f.Add("a 12", 7)
	f.Add("\"quoted\"", 3)
	f.Add("日本/写真.png", -5)
	f.Fuzz(func(t *testing.T, path string, width int) {
		w := MinWidth + int(uint(width)%MaxWidth)
		canonical := path != "" && strings.TrimSpace(path) == path && unquote(path) == path
		want := ScalingInput{Path: path, Width: w}

		// The text form round-trips unless the path itself looks like JSON.
		if canonical && !strings.HasPrefix(path, "{") {
			got, err := ParseScalingInput(path + " " + strconv.Itoa(w))
			if err != nil {
				t.Fatalf("text form of %q: %v", path, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("text round trip mismatch (-want +got):\n%s", diff)
			}
		}
		// The JSON form round-trips for any valid UTF-8 path.
		if canonical && utf8.ValidString(path) {
			for _, width := range []any{w, strconv.Itoa(w)} {
				b, err := json.Marshal(map[string]any{"path": path, "width": width})
				require.NoError(t, err)
				got, err := ParseScalingInput(string(b))
				if err != nil {
					t.Fatalf("JSON form %s: %v", b, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("JSON round trip mismatch (-want +got):\n%s", diff)
				}
			}
		}
	})
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a.txt", "./sub/b.txt", "../x", "/etc/passwd", "leak.txt", "outdir/secret.txt", "sub/../../x", "sub/inner", "dangling", "", "a\x00b", "//a.txt", "sub/./././b.txt"} {
		f.Add(s)
	}
	sb := newSandbox(f)
	f.Fuzz(func(t *testing.T, p string) {
		rel, _, err := sb.ws.stat(p)
		if err != nil {
			switch errCode(err) {
			case CodeInvalidInput, CodePathOutsideWorkspace, CodeFileNotFound:
			default:
				t.Fatalf("Resolve(%q): unexpected error %v", p, err)
			}
			return
		}
		// Whatever resolves exists and really lies inside the root.
		got := filepath.Join(sb.root, rel)
		real, err := filepath.EvalSymlinks(got)
		if err != nil {
			t.Fatalf("stat(%q) = %q, which does not resolve: %v", p, got, err)
		}
		if r, err := filepath.Rel(sb.ws.realRoot, real); err != nil || !local(r) {
			t.Fatalf("stat(%q) = %q leads outside to %q", p, got, real)
		}
	})
}

func BenchmarkParseScalingInput(b *testing.B) {
	for name, in := range map[string]string{"text": "picture/window.jpg 256", "json": `{"path":"picture/window.jpg","width":256}`} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseScalingInput(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkResolve(b *testing.B) {
	ws := newImageWorkspace(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ws.stat("./picture/window.jpg"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMultipartBody(b *testing.B) {
	data := encodeJPEG(b, 640, 427)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := multipartBody("window.jpg", "jpeg", data, 256); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecute measures one whole call against a local service that
// answers a fixed image: resolve, read, sniff, upload, save.
func BenchmarkExecute(b *testing.B) {
	ws := newImageWorkspace(b)
	answer := encodeJPEG(b, 60, 40)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseMultipartForm(1 << 20)
		w.Header().Set("X-Image-Width", "60")
		w.Header().Set("X-Image-Height", "40")
		w.Write(answer)
	}))
	b.Cleanup(srv.Close)
	tool := NewImageScaling(ws, srv.URL, srv.Client())
	out := filepath.Join(ws.Root(), "picture", "window_60.jpg")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Execute(context.Background(), "picture/window.jpg 60"); err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(out); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzEcho: echo never fails and returns its input, or, for an input that
// is a JSON object of the one key "text", that key's string.
func FuzzEcho(f *testing.F) {
	for _, s := range []string{`{"text":"hi"}`, `{"text": "hi"}`, `{"text":"a\u00e9\n"}`, `{"text":1}`, "hello", `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		got, err := Echo{}.Execute(context.Background(), input)
		if err != nil {
			t.Fatalf("Execute(%q): %v", input, err)
		}
		if got == input {
			return
		}
		var fields map[string]string
		if err := json.Unmarshal([]byte(input), &fields); err != nil || len(fields) != 1 || fields["text"] != got {
			t.Fatalf("Execute(%q) = %q, neither the input nor its text", input, got)
		}
	})
}

// FuzzScalingInputCompact: ParseScalingInput reads a JSON object the same,
// result and error, whether it comes as written or compacted, as native
// tool calls deliver it.
func FuzzScalingInputCompact(f *testing.F) {
	for _, s := range scalingSeeds {
		f.Add(s)
	}
	f.Add("{\n \"path\" : \"picture/window.jpg\" ,\n \"width\" : 256 }")
	f.Fuzz(func(t *testing.T, input string) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(input)) != nil || !strings.HasPrefix(buf.String(), "{") {
			return
		}
		want, wantErr := ParseScalingInput(input)
		got, gotErr := ParseScalingInput(buf.String())
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("ParseScalingInput(%q) compacted mismatch (-want +got):\n%s", input, diff)
		}
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Fatalf("ParseScalingInput(%q): error %v as written, %v compacted", input, wantErr, gotErr)
		}
	})
}
