package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunSamplingFlags: the sampling and streaming flags of run reach the
// request body; bad values are usage errors before any request.
func TestRunSamplingFlags(t *testing.T) {
	const final = `{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Final Answer: ok"},"finish_reason":"stop"}]}`
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantIn     []string // in the request body
		wantNotIn  []string
		wantStderr string
	}{
		{"defaults are the recorded request", nil, exitOK,
			[]string{`"temperature":0,"stop":["\nObservation:"],"stream":false}`}, nil, ""},
		{"stream", []string{"--stream"}, exitOK,
			[]string{`"temperature":0,"stop":["\nObservation:"],"stream":true,"stream_options":{"include_usage":true}}`}, nil, ""},
		{"o-series and sampling", []string{"--no-temperature", "--no-stop", "--top-p", "0.5", "--seed", "7", "--max-tokens", "100"}, exitOK,
			[]string{`"stream":false,"top_p":0.5,"seed":7,"max_tokens":100}`}, []string{`"temperature"`, `"stop"`}, ""},
		{"temperature", []string{"--temperature", "0.7"}, exitOK, []string{`"temperature":0.7,`}, nil, ""},
		{"temperature and no temperature", []string{"--temperature", "0", "--no-temperature"}, exitUsage, nil, nil,
			"run: --temperature and --no-temperature: give one"},
		{"top-p out of range", []string{"--top-p", "2"}, exitUsage, nil, nil, "run: llm new client: top_p 2: want 0 to 1"},
		{"seed not an integer", []string{"--seed", "x"}, exitUsage, nil, nil, `invalid value "x" for flag -seed: not an integer`},
		{"negative max tokens", []string{"--max-tokens", "-1"}, exitUsage, nil, nil, "run: llm new client: max_tokens -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies []string
			model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
				if strings.Contains(string(b), `"stream":true`) {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "data: "+final+"\n\ndata: [DONE]\n\n")
					return
				}
				io.WriteString(w, `{"id":"c","model":"m","choices":[{"index":0,"message":{"content":"Final Answer: ok"},"finish_reason":"stop"}]}`)
			}))
			defer model.Close()
			var stdout, stderr bytes.Buffer
			e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			args := append([]string{"run", "-q", "--base-url", model.URL, "--image-url", "http://127.0.0.1:1", "--workspace", t.TempDir()}, tt.args...)
			code := exitCode(&stderr, e.run(context.Background(), append(args, "say ok")))
			require.Equal(t, tt.wantCode, code, "stderr: %s", stderr.String())
			mu.Lock()
			defer mu.Unlock()
			if tt.wantStderr != "" {
				require.Contains(t, stderr.String(), tt.wantStderr)
				require.Empty(t, bodies, "a usage error sent a request")
				return
			}
			require.Equal(t, "ok\n", stdout.String())
			require.Len(t, bodies, 1)
			for _, s := range tt.wantIn {
				require.Contains(t, bodies[0], s)
			}
			for _, s := range tt.wantNotIn {
				require.NotContains(t, bodies[0], s)
			}
		})
	}
}
