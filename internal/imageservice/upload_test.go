package imageservice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSlowResizeAfterFastUpload processes a fast upload for ten grace
// periods: the idle read deadline that guarded the upload must not be
// armed while the image is processed, or the connection's background read
// fails and cancels the request (answered 503 "exceeded the 30s deadline").
func TestSlowResizeAfterFastUpload(t *testing.T) {
	const grace = 20 * time.Millisecond
	img := stdImage(t, "testdata/video-001.png")
	svc := New(Config{UploadGrace: grace}, nil)
	process := svc.resize
	svc.resize = func(ctx context.Context, req resizeRequest) resizeResult {
		select {
		case <-ctx.Done(): // the request was cancelled: no point in waiting
		case <-time.After(10 * grace): // a resize slower than the grace period
		}
		return process(ctx, req)
	}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	code, h, b := postResize(srv, bytes.NewReader(imageBody(t, "a.png", img, "64")))
	require.Equal(t, http.StatusOK, code, "body %q", b)
	require.Equal(t, "64", h.Get("X-Image-Width"))
}

// TestSlowClientsDoNotStarveFastOne stalls twice as many uploads as the
// old fixed four upload slots per worker: a fast client is still served,
// every time, and the slow uploads hold only the bytes they sent.
func TestSlowClientsDoNotStarveFastOne(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png")
	body := imageBody(t, "a.png", img, "64")
	svc := New(Config{MaxConcurrent: 2, UploadGrace: time.Minute, Timeout: 2 * time.Minute}, nil)
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	stallUploads(t, svc, srv, body, 16)
	require.Equal(t, int64(16*100), svc.bodyBytes.used.Load(), "each stalled upload holds the 100 bytes it sent")
	for i := range 10 {
		code, _, b := postResize(srv, bytes.NewReader(body))
		require.Equal(t, http.StatusOK, code, "fast request %d among 16 slow uploads: %s", i, b)
	}
}

// TestBusyAnsweredBeforeBody fills the workers or the upload slots: a new
// request is answered 503 busy with Retry-After before its body is read
// (its body stalls after 100 bytes, and it still gets the answer), and
// the connection is closed rather than drained.
func TestBusyAnsweredBeforeBody(t *testing.T) {
	img := stdImage(t, "testdata/video-001.png")
	body := imageBody(t, "a.png", img, "64")
	tests := []struct {
		name        string
		fill        func(*Service) chan struct{}
		wantMessage string
	}{
		{"every worker busy", func(s *Service) chan struct{} { return s.slots }, "2 requests in flight"},
		{"every upload slot taken", func(s *Service) chan struct{} { return s.uploads }, "128 uploads in flight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := New(Config{MaxConcurrent: 2, UploadGrace: time.Minute, Timeout: 2 * time.Minute}, nil)
			slots := tt.fill(svc)
			for len(slots) < cap(slots) {
				slots <- struct{}{}
			}
			srv := httptest.NewServer(svc)
			t.Cleanup(srv.Close)
			stalled := newBlockingBody(body[:100], body[100:])
			t.Cleanup(stalled.Release)
			type answer struct {
				code int
				h    http.Header
				b    []byte
			}
			answers := make(chan answer, 1)
			go func() {
				code, h, b := postResize(srv, stalled)
				answers <- answer{code, h, b}
			}()
			var a answer
			select {
			case a = <-answers:
			case <-time.After(10 * time.Second):
				t.Fatal("no answer while the body stalls: the server waits for the body before saying busy")
			}
			require.Equal(t, http.StatusServiceUnavailable, a.code, "%s", a.b)
			require.Equal(t, "1", a.h.Get("Retry-After"))
			d := errorDetail(t, a.h.Get("Content-Type"), a.b)
			require.Equal(t, CodeBusy, d.Code)
			require.Contains(t, d.Message, tt.wantMessage)
			require.Equal(t, 0, int(svc.bodyBytes.used.Load()), "nothing was read")
		})
	}
}

// TestUploadByteBudget fills the uploads' byte budget (four bodies of
// MaxBodyBytes per worker) with stalled uploads that sent most of a body:
// the next upload is answered 503 busy once it would take the total over,
// and the budget is free again when the uploads end.
func TestUploadByteBudget(t *testing.T) {
	const maxBody = 64 << 10
	img := encodePNG(t, syntheticImage(16, 16, 1))
	big := imageBody(t, "a.png", append(img, make([]byte, maxBody-len(img)-1024)...), "8") // under maxBody, mostly padding after IEND
	svc := New(Config{MaxConcurrent: 1, MaxBodyBytes: maxBody, UploadGrace: time.Minute, Timeout: 2 * time.Minute}, nil)
	require.Equal(t, int64(4*maxBody), svc.bodyBytes.limit)
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)

	// Four uploads that stall after all but 100 bytes of their body.
	release := stallUploadsAfter(t, svc, srv, big, len(big)-100, 4)
	held := svc.bodyBytes.used.Load()
	require.Greater(t, held, int64(4*maxBody-8<<10), "the stalled uploads hold nearly all the budget")

	code, h, b := postResize(srv, bytes.NewReader(imageBody(t, "a.png", append(img, make([]byte, 16<<10)...), "8")))
	require.Equal(t, http.StatusServiceUnavailable, code, "%s", b)
	require.NotEmpty(t, h.Get("Retry-After"))
	d := errorDetail(t, h.Get("Content-Type"), b)
	require.Equal(t, CodeBusy, d.Code)
	require.Contains(t, d.Message, "fill their 262144-byte budget")
	require.Equal(t, held, svc.bodyBytes.used.Load(), "the refused upload gave its bytes back")

	release()
	require.Equal(t, int64(0), svc.bodyBytes.used.Load(), "finished uploads give their bytes back")
	code, _, b = postResize(srv, bytes.NewReader(big))
	require.Equal(t, http.StatusOK, code, "%s", b)
}

// stallUploads is stallUploadsAfter at 100 bytes.
func stallUploads(tb testing.TB, svc *Service, srv *httptest.Server, body []byte, n int) (release func()) {
	tb.Helper()
	return stallUploadsAfter(tb, svc, srv, body, 100, n)
}

// stallUploadsAfter starts n uploads to srv (serving svc) that send the
// first sent bytes of body and then stall, and waits until as many as svc
// admits are receiving (/healthz "uploading") and have received them. release lets every body finish and
// waits for all n answers; it runs at cleanup too, so register srv.Close
// with Cleanup before calling stallUploads.
func stallUploadsAfter(tb testing.TB, svc *Service, srv *httptest.Server, body []byte, sent, n int) (release func()) {
	tb.Helper()
	up0, held0 := uploading(tb, srv), svc.bodyBytes.used.Load()
	want := min(up0+n, cap(svc.uploads))
	wantHeld := held0 + int64((want-up0)*sent)
	answered := make(chan int, n)
	bodies := make([]*blockingBody, n)
	for i := range bodies {
		bodies[i] = newBlockingBody(body[:sent], body[sent:])
		go func(b *blockingBody) {
			code, _, _ := postResize(srv, b)
			answered <- code
		}(bodies[i])
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			for _, b := range bodies {
				b.Release()
			}
			for range n {
				<-answered
			}
		})
	}
	tb.Cleanup(release)
	deadline := time.Now().Add(10 * time.Second)
	for uploading(tb, srv) != want || svc.bodyBytes.used.Load() != wantHeld {
		if time.Now().After(deadline) {
			tb.Fatalf("%d stalled uploads after 10 s: %d receiving holding %d bytes, want %d holding %d",
				n, uploading(tb, srv), svc.bodyBytes.used.Load(), want, wantHeld)
		}
		time.Sleep(time.Millisecond)
	}
	return release
}

// uploading is the "uploading" count srv's /healthz reports.
func uploading(tb testing.TB, srv *httptest.Server) int {
	tb.Helper()
	resp, err := srv.Client().Get(srv.URL + "/healthz")
	require.NoError(tb, err)
	defer resp.Body.Close()
	var h health
	require.NoError(tb, json.NewDecoder(resp.Body).Decode(&h))
	return h.Uploading
}

// BenchmarkFastAmongSlow measures whether a fast client is served while
// slow clients hold uploads open (stalled after 100 bytes, within
// UploadGrace, as a client dripping just above MinUploadRate would):
// served is the fraction of the fast client's requests answered 200 (the
// rest are 503 busy). Two workers.
func BenchmarkFastAmongSlow(b *testing.B) {
	img := stdImage(b, "testdata/video-001.png")
	body := imageBody(b, "a.png", img, "64")
	for _, slow := range []int{0, 4, 8, 16, 64, 127, 128, 200} {
		b.Run(fmt.Sprintf("slow=%d", slow), func(b *testing.B) {
			svc := New(Config{MaxConcurrent: 2, UploadGrace: time.Minute, Timeout: 2 * time.Minute}, nil)
			srv := httptest.NewServer(svc)
			b.Cleanup(srv.Close)
			release := stallUploads(b, svc, srv, body, slow)
			defer release()
			served := 0
			b.ResetTimer()
			for b.Loop() {
				code, _, msg := postResize(srv, bytes.NewReader(body))
				switch code {
				case http.StatusOK:
					served++
				case http.StatusServiceUnavailable:
				default:
					b.Fatalf("fast request: %d %s", code, msg)
				}
			}
			b.ReportMetric(float64(served)/float64(b.N), "served")
			b.ReportMetric(float64(min(slow, cap(svc.uploads))), "slow-admitted")
		})
	}
}

// waitUploading polls srv's /healthz for up to 5 s until it reports n
// uploads being received.
func waitUploading(tb testing.TB, srv *httptest.Server, n int) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for got := uploading(tb, srv); got != n; got = uploading(tb, srv) {
		if time.Now().After(deadline) {
			tb.Fatalf("uploading stayed %d, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
