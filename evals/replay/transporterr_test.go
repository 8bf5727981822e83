package replay

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTransportFailuresReplay records a request cut off by its deadline and
// one refused by a closed server, and replays both as errors.
func TestTransportFailuresReplay(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer hang.Close()
	defer hang.CloseClientConnections()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	path := filepath.Join(t.TempDir(), "llm.yaml")
	post := func(t *testing.T, c *Cassette, base string, timeout time.Duration) error {
		ctx := context.Background()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(`{"a":1}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	rec, err := Open(path, ModeRecord)
	require.NoError(t, err)
	err = post(t, rec, hang.URL, 50*time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded, "recording returns the real error")
	err = post(t, rec, closedURL, 0)
	require.Error(t, err)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, rec.Close())

	rep, err := Open(path, ModeReplay)
	require.NoError(t, err)
	start := time.Now()
	err = post(t, rep, "http://replay.invalid", 80*time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a deadline replays as the caller's own deadline")
	require.GreaterOrEqual(t, time.Since(start), 70*time.Millisecond)
	err = post(t, rep, "http://replay.invalid", 0)
	require.ErrorContains(t, err, "replayed transport failure")
	require.False(t, errors.Is(err, ErrNoMatch))
	require.NoError(t, rep.Close())
}

func TestRedactURLCredentials(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://alice:hunter2@127.0.0.1:8080/v1/chat/completions", "http://REDACTED@127.0.0.1:8080/v1/chat/completions"},
		{"https://api.example.com/v1?api_key=abc&x=1", "https://api.example.com/v1?api_key=REDACTED&x=1"},
		{"https://api.example.com/v1", "https://api.example.com/v1"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, redactURL(tt.in), tt.in)
	}
}

func TestDamagedCassetteIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "llm.yaml")
	cut := "---\nversion: 1\ninteractions:\n    - request:\n        body: '{}'\n        url: http://localhost/v1/chat/completions\n        method: POST\n"
	require.NoError(t, os.WriteFile(path, []byte(cut), 0o644))
	_, err := Open(path, ModeReplay)
	require.ErrorContains(t, err, "interaction 0 (POST http://localhost/v1/chat/completions): the response has no valid status code (got 0)")
}
