package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/internal/imageservice"
)

// syncBuffer is a bytes.Buffer safe for the server's and the test's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantErr  string // substring; empty: success
		wantCode int
	}{
		{"defaults", nil, "", exitOK},
		{"every flag", []string{"--addr", "127.0.0.1:0", "--max-body-bytes", "1000", "--max-width", "10", "--max-pixels", "100",
			"--max-work-bytes", "5000", "--timeout", "2s", "--max-concurrent", "3", "--retry-after", "5s", "--jpeg-quality", "75", "--drain-timeout", "1s", "--log-json"}, "", exitOK},
		{"help", []string{"-h"}, "help requested", exitOK},
		{"unknown flag", []string{"--width", "3"}, "flag provided but not defined", exitUsage},
		{"stray argument", []string{"serve"}, `unexpected argument "serve"`, exitUsage},
		{"zero width", []string{"--max-width", "0"}, "-max-width 0", exitUsage},
		{"negative body", []string{"--max-body-bytes", "-1"}, "-max-body-bytes -1", exitUsage},
		{"zero pixels", []string{"--max-pixels", "0"}, "-max-pixels 0", exitUsage},
		{"zero work bytes", []string{"--max-work-bytes", "0"}, "-max-work-bytes 0", exitUsage},
		{"zero timeout", []string{"--timeout", "0s"}, "-timeout 0s", exitUsage},
		{"zero concurrency", []string{"--max-concurrent", "0"}, "-max-concurrent 0", exitUsage},
		{"zero retry", []string{"--retry-after", "0s"}, "-retry-after 0s", exitUsage},
		{"quality 101", []string{"--jpeg-quality", "101"}, "-jpeg-quality 101", exitUsage},
		{"zero drain", []string{"--drain-timeout", "0s"}, "-drain-timeout 0s", exitUsage},
		{"zero upload rate", []string{"--min-upload-rate", "0"}, "-min-upload-rate 0", exitUsage},
		{"zero upload grace", []string{"--upload-grace", "0s"}, "-upload-grace 0s", exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			_, err := parseFlags(tt.args, &stderr)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			require.Equal(t, tt.wantCode, exitCode(err, io.Discard))
		})
	}
}

func TestParseFlagsValues(t *testing.T) {
	got, err := parseFlags([]string{"--addr", "127.0.0.1:0", "--max-body-bytes", "1000", "--max-width", "10", "--max-pixels", "100",
		"--max-work-bytes", "5000", "--timeout", "2s", "--max-concurrent", "3", "--retry-after", "5s", "--jpeg-quality", "75", "--min-upload-rate", "2048", "--upload-grace", "3s", "--drain-timeout", "1s", "--log-json"}, io.Discard)
	require.NoError(t, err)
	want := options{addr: "127.0.0.1:0", drainTimeout: time.Second, logJSON: true, cfg: imageservice.Config{
		MaxBodyBytes: 1000, MaxWidth: 10, MaxSourcePixels: 100, MaxWorkBytes: 5000, Timeout: 2 * time.Second, MaxConcurrent: 3,
		RetryAfter: 5 * time.Second, JPEGQuality: 75, MinUploadRate: 2048, UploadGrace: 3 * time.Second, Version: version,
	}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
		t.Errorf("options mismatch (-want +got):\n%s", diff)
	}
	def, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", def.addr, "loopback by default")
	require.Equal(t, runtime.NumCPU(), def.cfg.MaxConcurrent)
}

func TestHelpMentionsEveryFlag(t *testing.T) {
	var stderr bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-addr", "-max-body-bytes", "-max-width", "-max-pixels", "-max-work-bytes", "-timeout", "-max-concurrent", "-retry-after", "-jpeg-quality", "-drain-timeout", "-log-json", "curl -F image=@x.jpg"} {
		require.Contains(t, stderr.String(), f)
	}
}

func pngBody(t *testing.T, width string) (body []byte, contentType string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.Set(0, 0, color.White)
	var pic bytes.Buffer
	require.NoError(t, png.Encode(&pic, img))
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("image", "x.png")
	require.NoError(t, err)
	_, err = fw.Write(pic.Bytes())
	require.NoError(t, err)
	require.NoError(t, mw.WriteField("width", width))
	require.NoError(t, mw.Close())
	return buf.Bytes(), mw.FormDataContentType()
}

// TestRun starts the real command on an ephemeral loopback port, resizes
// an image, and stops it with a cancelled context (what SIGTERM does).
func TestRun(t *testing.T) {
	baseline := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--log-json"}, io.Discard, &stderr) }()

	urlRE := regexp.MustCompile(`"url":"(http://127\.0\.0\.1:\d+)"`)
	var base string
	require.Eventually(t, func() bool {
		m := urlRE.FindStringSubmatch(stderr.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, 5*time.Second, 5*time.Millisecond, "the listening line; stderr:\n%s", &stderr)

	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	body, ct := pngBody(t, "20")
	resp, err := client.Post(base+"/resize", ct, bytes.NewReader(body))
	require.NoError(t, err)
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "body %q", out)
	got := [3]string{resp.Header.Get("Content-Type"), resp.Header.Get("X-Image-Width"), resp.Header.Get("X-Image-Height")}
	if diff := cmp.Diff([3]string{"image/png", "20", "10"}, got); diff != "" {
		t.Errorf("answer mismatch (-want +got):\n%s", diff)
	}
	client.CloseIdleConnections()

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancellation")
	}
	require.Contains(t, stderr.String(), `"msg":"http request"`, "access log")
	require.Contains(t, stderr.String(), `"msg":"imaged stopped"`)
	client.CloseIdleConnections() // a connection may have gone idle after the first call
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines left behind: %d, %d before\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	err = run(context.Background(), []string{"--addr", ln.Addr().String()}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "listen: ")
	require.Equal(t, exitError, exitCode(err, io.Discard))
}

// blockingHandler holds every request until release is closed.
type blockingHandler struct {
	started chan struct{}
	release chan struct{}
}

func (h *blockingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.started <- struct{}{}
	<-h.release
	_, _ = w.Write([]byte("done"))
}

func TestServeDrainsInFlight(t *testing.T) {
	tests := []struct {
		name    string
		drain   time.Duration
		release bool // release the in-flight request after shutdown starts
		wantErr string
	}{
		{"in-flight request finishes", 10 * time.Second, true, ""},
		{"drain deadline passes", 100 * time.Millisecond, false, "did not finish within 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &blockingHandler{started: make(chan struct{}, 1), release: make(chan struct{})}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			logger := slog.New(slog.DiscardHandler)
			srv := newServer(h, time.Second, logger)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- serve(ctx, srv, ln, tt.drain, logger) }()

			type answer struct {
				status int
				body   string
				err    error
			}
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			answers := make(chan answer, 1)
			go func() {
				resp, err := client.Get("http://" + ln.Addr().String() + "/slow")
				if err != nil {
					answers <- answer{err: err}
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				answers <- answer{status: resp.StatusCode, body: string(b), err: err}
			}()
			<-h.started
			cancel() // SIGINT / SIGTERM

			// New connections are refused once shutdown has begun.
			require.Eventually(t, func() bool {
				c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
				if err == nil {
					c.Close()
				}
				return err != nil
			}, 5*time.Second, 5*time.Millisecond, "listener still open during drain")

			if tt.release {
				select {
				case err := <-done:
					t.Fatalf("serve returned %v before the in-flight request finished", err)
				default:
				}
				close(h.release)
				a := <-answers
				require.NoError(t, a.err)
				require.Equal(t, answer{status: 200, body: "done"}, a)
			}
			select {
			case err := <-done:
				if tt.wantErr == "" {
					require.NoError(t, err)
				} else {
					require.ErrorContains(t, err, tt.wantErr)
					require.True(t, strings.HasPrefix(err.Error(), "shutdown: "), "error %q", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("serve did not return")
			}
			if !tt.release {
				close(h.release)
				a := <-answers
				require.Error(t, a.err, "the request cut off by Close fails")
				require.False(t, errors.Is(a.err, context.Canceled))
			}
		})
	}
}

// TestDurationFlagsNeedAUnit: a bare number for a duration flag says to
// add a unit instead of "parse error".
func TestDurationFlagsNeedAUnit(t *testing.T) {
	for _, flag := range []string{"-timeout", "-retry-after", "-upload-grace", "-drain-timeout"} {
		var stderr strings.Builder
		_, err := parseFlags([]string{flag, "30"}, &stderr)
		if err == nil || !strings.Contains(stderr.String()+err.Error(), "missing unit: add one, e.g. 30s") {
			t.Errorf("%s 30: got %v, %q", flag, err, stderr.String())
		}
	}
}
