package replay

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v2/cassette"
	"gopkg.in/dnaeon/go-vcr.v2/recorder"

	"github.com/agenthub/agenthub/agent/llm"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// benchInteractions is the size of the cassette BenchmarkReplay replays.
const benchInteractions = 50

// benchBodies returns n chat request bodies with a 2 KiB system prompt.
func benchBodies(n int) []string {
	system := strings.Repeat("You are an agent. Use the tools. ", 64)
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = chatBody(system, fmt.Sprintf("step %d: resize image %d to 64x64", i, i))
	}
	return bodies
}

// BenchmarkReplay measures the per-interaction cost of replay (matching a
// JSON body against a 50-interaction cassette and building the response)
// and the time to open (load and canonicalize) that cassette.
func BenchmarkReplay(b *testing.B) {
	srv := newChatServer(b)
	path := filepath.Join(b.TempDir(), LLMCassette)
	bodies := benchBodies(benchInteractions)
	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
	require.NoError(b, err)
	for _, body := range bodies {
		benchPost(b, c.Client(), srv.URL, body)
	}
	require.NoError(b, c.Close())

	b.Run("interaction", func(b *testing.B) {
		b.ReportAllocs()
		var c *Cassette
		var client *http.Client
		for i := 0; i < b.N; i++ {
			k := i % benchInteractions
			if k == 0 {
				b.StopTimer()
				if c != nil {
					require.NoError(b, c.Close())
				}
				var err error
				c, err = Open(path, ModeReplay)
				require.NoError(b, err)
				client = c.Client()
				b.StartTimer()
			}
			benchPost(b, client, srv.URL, bodies[k])
		}
		b.StopTimer()
		c.Discard()
	})

	b.Run("load50", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			c, err := Open(path, ModeReplay)
			if err != nil {
				b.Fatal(err)
			}
			c.Discard()
		}
	})

	b.Run("baseline-loopback-http", func(b *testing.B) {
		b.ReportAllocs()
		client := srv.Client()
		for i := 0; i < b.N; i++ {
			benchPost(b, client, srv.URL, bodies[i%benchInteractions])
		}
	})
}

func benchPost(b *testing.B, client *http.Client, url, body string) {
	req, err := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// BenchmarkReplayStream compares replaying one model call whose reply
// (2 KiB of text, 2 tool calls) was recorded as a server-sent-event stream
// with the same call recorded as a plain JSON body, through the model
// client (match, serve, then decode or assemble): the ratio of the two is
// the cost of streaming in replay.
func BenchmarkReplayStream(b *testing.B) {
	reply := strings.Repeat("The image was scaled; ", 100)
	turn := scriptedmodel.Turn{Reply: reply, Reasoning: strings.Repeat("think ", 50), ToolCalls: []scriptedmodel.ToolCall{
		{Name: "image_scaling", Arguments: `{"path":"picture/window.jpg","width":256}`}, {Name: "echo", Arguments: `{"text":"done"}`}}}
	for _, stream := range []bool{false, true} {
		name := "plain"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewServer(scriptedmodel.New([]scriptedmodel.Turn{turn}))
			defer srv.Close()
			path := filepath.Join(b.TempDir(), LLMCassette)
			rec, err := Open(path, ModeRecord)
			require.NoError(b, err)
			client, err := llm.NewClient(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", Stream: stream, HTTPClient: rec.Client()})
			require.NoError(b, err)
			req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "scale it"}}}
			_, err = client.Chat(context.Background(), req)
			require.NoError(b, err)
			require.NoError(b, rec.Close())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c, err := Open(path, ModeReplay)
				require.NoError(b, err)
				client, err := llm.NewClient(llm.Config{BaseURL: "http://llm.replay.invalid/v1", Model: "m", Stream: stream, HTTPClient: c.Client()})
				require.NoError(b, err)
				b.StartTimer()
				got, err := client.Chat(context.Background(), req)
				if err != nil || len(got.ToolCalls) != 2 {
					b.Fatalf("replayed reply: %v, %d calls", err, len(got.ToolCalls))
				}
				b.StopTimer()
				c.Discard()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkOpenAndReplay50 opens a 50-interaction cassette and replays
// every interaction through it, against the same done by raw go-vcr v2.3.0
// (its recorder in replaying mode, matching method and path): the ratio of the two is what our matcher, canonical forms and
// checks cost over go-vcr's own load and lookup.
func BenchmarkOpenAndReplay50(b *testing.B) {
	srv := newChatServer(b)
	dir := b.TempDir()
	path := filepath.Join(dir, LLMCassette)
	bodies := benchBodies(benchInteractions)
	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
	require.NoError(b, err)
	for _, body := range bodies {
		benchPost(b, c.Client(), srv.URL, body)
	}
	require.NoError(b, c.Close())

	b.Run("agenthub", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			c, err := Open(path, ModeReplay)
			if err != nil {
				b.Fatal(err)
			}
			client := c.Client()
			for _, body := range bodies {
				benchPost(b, client, srv.URL, body)
			}
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-vcr", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rec, err := recorder.NewAsMode(strings.TrimSuffix(path, ".yaml"), recorder.ModeReplaying, nil)
			if err != nil {
				b.Fatal(err)
			}
			rec.SkipRequestLatency = true
			// Saved URLs name "localhost" (redaction): match the method and
			// the path, as go-vcr users do for random ports.
			rec.SetMatcher(func(r *http.Request, i cassette.Request) bool {
				u, err := url.Parse(i.URL)
				return err == nil && r.Method == i.Method && r.URL.Path == u.Path
			})
			client := &http.Client{Transport: rec}
			for _, body := range bodies {
				benchPost(b, client, srv.URL, body)
			}
			if err := rec.Stop(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
