package replay

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
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

// TestStreamCutRecorded records a stream that the provider breaks off
// before its end (the connection closes mid-body): the events that came
// are the recorded body, the read error is kept (StreamErrorHeader), and
// the caller reads those events and then that error — live while
// recording and again in replay.
func TestStreamCutRecorded(t *testing.T) {
	events := `data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n" + `data: {"choices":[{"delta":{"content":"Hel"}}]}` + "\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, events)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // close the connection: no end of the chunked body
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), LLMCassette)
	read := func(c *http.Client, url string) (string, error) {
		t.Helper()
		resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
		require.NoError(t, err, "a stream cut after its headers is a response, not a transport failure")
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	rec, err := Open(path, ModeRecord)
	require.NoError(t, err)
	live, liveErr := read(rec.Client(), srv.URL)
	require.Equal(t, events, live)
	require.EqualError(t, liveErr, io.ErrUnexpectedEOF.Error())
	require.NoError(t, rec.Close())
	require.Len(t, rec.Interactions()[0].EventMS, 2, "one arrival time per event that came")

	rep, err := Open(path, ModeReplay)
	require.NoError(t, err)
	got, gotErr := read(rep.Client(), "http://replay.invalid")
	require.Equal(t, events, got)
	require.EqualError(t, gotErr, io.ErrUnexpectedEOF.Error(), "replay breaks the stream where it broke")
	require.NoError(t, rep.Close())
}

// TestCompressedBodies: a body kept compressed (Content-Encoding deflate,
// zlib or raw, or gzip) is checked against the size cap and scanned for
// secrets as it reads once inflated (attack round 2: a deflated key was
// saved, and zlib deflate was refused as corrupt).
func TestCompressedBodies(t *testing.T) {
	key := "sk-" + "proj-abcdefghij1234567890klmn"
	compress := func(kind, text string) []byte {
		var b bytes.Buffer
		var w io.WriteCloser
		switch kind {
		case "gzip":
			w = gzip.NewWriter(&b)
		case "zlib":
			w = zlib.NewWriter(&b)
		default:
			w, _ = flate.NewWriter(&b, flate.DefaultCompression)
		}
		io.WriteString(w, text)
		w.Close()
		return b.Bytes()
	}
	tests := []struct{ kind, encoding, text, want string }{
		{"zlib", "deflate", `{"ok":true}`, ""},
		{"raw", "deflate", `{"ok":true}`, ""},
		{"gzip", "gzip", `{"ok":true}`, ""},
		{"raw", "deflate", `{"error":"invalid key ` + key + `"}`, "response body (inflated)"},
		{"zlib", "deflate", `{"error":"invalid key ` + key + `"}`, "response body (inflated)"},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.want, func(t *testing.T) {
			body := compress(tt.kind, tt.text)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", tt.encoding)
				w.Write(body)
			}))
			defer srv.Close()
			c, err := Open(filepath.Join(t.TempDir(), LLMCassette), ModeRecord)
			require.NoError(t, err)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{}`))
			req.Header.Set("Accept-Encoding", tt.encoding) // the caller decodes: the transport leaves the body compressed
			resp, err := c.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			err = c.Close()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrSecretLeak)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestStreamSplitKeyRefused: a key split over two stream events is found
// in the assembled stream (attack round 2).
func TestStreamSplitKeyRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range []string{"your key: sk-pr", "oj-abcdefghij1234567890klmn"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", part)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	c, err := Open(filepath.Join(t.TempDir(), LLMCassette), ModeRecord)
	require.NoError(t, err)
	resp, err := c.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	err = c.Close()
	require.ErrorIs(t, err, ErrSecretLeak)
	require.ErrorContains(t, err, "response stream (assembled)")
}

// TestStreamEndsAtDone: a provider that keeps the connection open after
// "data: [DONE]" (pings) has answered in full; recording stops reading
// there (attack round 3: recording waited for the deadline).
func TestStreamEndsAtDone(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case <-hold:
				return
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
				fmt.Fprint(w, ": ping\n\n")
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer srv.Close()
	c, err := Open(filepath.Join(t.TempDir(), LLMCassette), ModeRecord)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	resp, err := c.Client().Do(req)
	require.NoError(t, err, "the response came before the deadline")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"), "%q", body)
	require.NoError(t, c.Close())
	require.Len(t, c.Interactions()[0].EventMS, 2)
}
