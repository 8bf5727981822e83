package replay

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStreamRecordsEventTimes records a server-sent-event stream: the
// body is kept byte for byte, each event's arrival time is recorded, and
// replay serves the same body at once.
func TestStreamRecordsEventTimes(t *testing.T) {
	events := []string{`data: {"choices":[{"delta":{"role":"assistant"}}]}`, `data: {"choices":[{"delta":{"content":"Hel"}}]}`,
		`data: {"choices":[{"delta":{"content":"lo"}}]}`, `data: [DONE]`}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, e := range events {
			fmt.Fprintf(w, "%s\n\n", e)
			w.(http.Flusher).Flush()
			if i == 0 {
				<-release // the first event arrives before the others
			}
		}
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), LLMCassette)
	rec, err := Open(path, ModeRecord)
	require.NoError(t, err)
	go func() { time.Sleep(20 * time.Millisecond); close(release) }()
	resp, err := rec.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	require.NoError(t, err)
	live, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, rec.Close())
	want := strings.Join(events, "\n\n") + "\n\n"
	require.Equal(t, want, string(live))

	infos := rec.Interactions()
	require.Len(t, infos, 1)
	ms := infos[0].EventMS
	require.Len(t, ms, len(events), "one arrival time per event")
	for i := 1; i < len(ms); i++ {
		require.LessOrEqual(t, ms[i-1], ms[i], "arrival times never go back")
	}
	require.GreaterOrEqual(t, ms[1]-ms[0], int64(15), "the held events arrived later: %v", ms)

	rep, err := Open(path, ModeReplay)
	require.NoError(t, err)
	resp, err = rep.Client().Post("http://replay.invalid/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
	require.Equal(t, ms, rep.Interactions()[0].EventMS)
	require.NoError(t, rep.Close())
}

func TestEventEnd(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"data: a\n\n", 9},
		{"data: a\r\n\r\n", 11},
		{"data: a\r\r", 9},
		{"data: a\n", -1},
		{"", -1},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, eventEnd([]byte(tt.in)), "%q", tt.in)
	}
	require.Nil(t, parseOffsets("1 x"))
	require.Nil(t, parseOffsets("-1"))
	require.Equal(t, []int64{0, 5}, parseOffsets("0 5"))
}
