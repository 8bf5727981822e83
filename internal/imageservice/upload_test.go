package imageservice

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
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
