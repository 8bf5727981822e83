package imageservice

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLoad sends 200 requests from 16 concurrent clients over loopback, a
// mix of good and bad images, to a server with fewer slots than clients.
// Every answer must be the right one or a well-formed 503 busy with
// Retry-After, and no goroutine may outlive the server.
func TestLoad(t *testing.T) {
	const (
		requests    = 200
		clients     = 16
		maxAttempts = 200
	)
	jpegImg := stdImage(t, "testdata/video-001.jpeg")
	pngImg := stdImage(t, "testdata/video-005.gray.png")
	gifImg := stdImage(t, "testdata/video-001.gif")
	corrupt := stdImage(t, "png/testdata/invalid-zlib.png")
	kinds := []struct {
		name   string
		body   []byte
		status int
		code   Code
		format string
		width  int
	}{
		{"good jpeg", imageBody(t, "a.jpg", jpegImg, "64"), 200, "", "jpeg", 64},
		{"good png", imageBody(t, "a.png", pngImg, "100"), 200, "", "png", 100},
		{"gif", imageBody(t, "a.gif", gifImg, "64"), 415, CodeUnsupportedFormat, "", 0},
		{"corrupt png", imageBody(t, "a.png", corrupt, "64"), 400, CodeCorruptImage, "", 0},
		{"bad width", imageBody(t, "a.jpg", jpegImg, "0"), 400, CodeInvalidWidth, "", 0},
		{"bomb", imageBody(t, "b.png", pngWithHeader(50_000, 50_000), "64"), 422, CodeImageTooLarge, "", 0},
	}

	baseline := runtime.NumGoroutine()
	srv := httptest.NewServer(New(Config{MaxConcurrent: 2, Timeout: 10 * time.Second}, nil))
	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: transport, Timeout: 20 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	jobs := make(chan int)
	var (
		mu      sync.Mutex
		errs    []string
		busy    int
		correct = map[string]int{}
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, fmt.Sprintf(format, args...))
	}
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range jobs {
				k := kinds[i%len(kinds)]
				// A polite client: on 503 busy, back off briefly and retry
				// (a real one would wait Retry-After seconds).
				for attempt := 1; ; attempt++ {
					retry, msg := loadRequest(ctx, client, srv.URL, k.body, k.status, k.code, k.format, k.width)
					if msg != "" {
						report("request %d (%s) attempt %d: %s", i, k.name, attempt, msg)
						break
					}
					if !retry {
						mu.Lock()
						correct[k.name]++
						mu.Unlock()
						break
					}
					mu.Lock()
					busy++
					mu.Unlock()
					if attempt == maxAttempts {
						report("request %d (%s): still busy after %d attempts", i, k.name, attempt)
						break
					}
					time.Sleep(time.Duration(min(attempt, 10)) * 2 * time.Millisecond)
				}
			}
		})
	}
	start := time.Now()
	for i := range requests {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	require.Empty(t, errs, "wrong answers")
	t.Logf("%d requests in %v: %d busy answers (503) retried, correct per kind %v", requests, elapsed.Round(time.Millisecond), busy, correct)
	require.Equal(t, requests, sumValues(correct), "every request gets its answer")
	require.Positive(t, busy, "16 clients on 2 slots must see 503 busy")

	srv.Close()
	transport.CloseIdleConnections()
	requireNoLeak(t, baseline)
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// loadRequest sends one request; retry reports a well-formed 503 busy.
func loadRequest(ctx context.Context, client *http.Client, base string, body []byte, status int, code Code, format string, width int) (retry bool, msg string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/resize", bytes.NewReader(body))
	if err != nil {
		return false, err.Error()
	}
	req.Header.Set("Content-Type", testContentType)
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return false, "read body: " + err.Error()
	}
	if msg := checkLoadAnswer(resp, b, status, code, format, width); msg != "" {
		return false, msg
	}
	return resp.StatusCode == http.StatusServiceUnavailable, ""
}

// checkLoadAnswer returns "" when the answer is the expected one or a
// well-formed 503 busy, and a description of the problem otherwise.
func checkLoadAnswer(resp *http.Response, body []byte, status int, code Code, format string, width int) string {
	if resp.StatusCode == http.StatusServiceUnavailable {
		if resp.Header.Get("Retry-After") == "" {
			return "503 without Retry-After"
		}
		if !bytes.Contains(body, []byte(`"code":"busy"`)) {
			return fmt.Sprintf("503 body %q is not busy", body)
		}
		return ""
	}
	if resp.StatusCode != status {
		return fmt.Sprintf("status %d, want %d; body %q", resp.StatusCode, status, truncate(string(body), 200))
	}
	if code != "" {
		if !bytes.Contains(body, []byte(`"code":"`+code+`"`)) {
			return fmt.Sprintf("body %q lacks code %s", body, code)
		}
		return ""
	}
	if got := resp.Header.Get("X-Image-Width"); got != strconv.Itoa(width) {
		return fmt.Sprintf("X-Image-Width %s, want %d", got, width)
	}
	var (
		cfg image.Config
		err error
	)
	switch format {
	case "jpeg":
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(body))
	case "png":
		cfg, err = png.DecodeConfig(bytes.NewReader(body))
	}
	if err != nil || cfg.Width != width || resp.Header.Get("Content-Type") != "image/"+format {
		return fmt.Sprintf("answer does not decode as a %d-wide %s: %v", width, format, err)
	}
	return ""
}

// requireNoLeak waits up to 5 s for the goroutine count to fall back to
// baseline and fails with a dump of the survivors otherwise.
func requireNoLeak(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutine leak: %d running, %d before the server started\n%s", runtime.NumGoroutine(), baseline, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
