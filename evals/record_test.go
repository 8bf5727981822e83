package evals_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/evals/replay"
	"github.com/agenthub/agenthub/evals/report"
	"github.com/agenthub/agenthub/evals/scenario"
)

// providerScenario answers in one model call; the drip case shortens its
// deadline so that a dripping provider ends it quickly.
const providerScenario = `id: live
description: answer at once
task: say hi
tools: [echo]
prompts: [react-text]
max_steps: 2
timeout: 30s
expect:
  outcome: final_answer
`

// completion is a chat-completions body answering text.
func completion(text string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`, text)
}

// tree reads every file under dir: relative path → content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return err
	}))
	return out
}

// TestRecordNeverLosesData records a good run, then re-records it against
// providers that fail in every way the wire allows, and requires each
// failure to leave the good recording byte for byte, with the cause named.
func TestRecordNeverLosesData(t *testing.T) {
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completion("Final Answer: hi"))
	}))
	defer good.Close()
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()

	var zeros bytes.Buffer
	zw := gzip.NewWriter(&zeros)
	_, _ = zw.Write(make([]byte, 20<<20))
	zw.Close()

	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: the refused address
		want    string
	}{
		{name: "connection refused", want: "connection refused"},
		{name: "cut after headers", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			fmt.Fprint(w, `{"id":"c1",`)
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, want: "response body cut after 11 of 1000 bytes"},
		{name: "drip past the deadline", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
					fmt.Fprint(w, " ")
					w.(http.Flusher).Flush()
				}
			}
		}, want: "every model call was cut off by its deadline before a response came"},
		{name: "gzip bomb", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/json")
			w.Write(zeros.Bytes())
		}, want: "response over 8 MiB"},
		{name: "rate limited for good", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"code":"1113","message":"quota exhausted"}}`)
		}, want: "the provider answered no model call with a reply"},
		{name: "garbage body", handler: func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<html>bad gateway</html>")
		}, want: "the provider answered no model call with a reply"},
		{name: "endless body", handler: func(w http.ResponseWriter, r *http.Request) {
			chunk := bytes.Repeat([]byte("a"), 1<<16)
			for i := 0; i < 100<<4; i++ { // 100 MiB
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, want: "response over 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := providerScenario
			if strings.Contains(tt.name, "deadline") {
				// Only the drip case is about the deadline; elsewhere a
				// short one would race reading 8 MiB on a loaded machine.
				src = strings.Replace(src, "timeout: 30s", "timeout: 800ms", 1)
			}
			sc, err := scenario.Parse("live.yaml", []byte(src), agent.PromptVariants())
			require.NoError(t, err)
			dir := t.TempDir()
			record := func(base string) report.Run {
				r := &evals.Runner{Root: dir, CassetteDir: dir, Record: &evals.RecordConfig{
					Provider: evals.Provider{BaseURL: base, Model: "m"}}}
				runs := r.Run(context.Background(), r.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
				require.Len(t, runs, 1)
				return runs[0]
			}
			first := record(good.URL + "/v1")
			require.Equal(t, report.VerdictPass, first.Verdict, first.Error)
			before := tree(t, dir)
			require.Contains(t, before, filepath.Join("live", "react-text", "1", replay.LLMCassette))

			base := refusedURL + "/v1"
			if tt.handler != nil {
				bad := httptest.NewServer(tt.handler)
				defer bad.Close()
				base = bad.URL + "/v1"
			}
			got := record(base)
			require.Equal(t, report.VerdictError, got.Verdict)
			require.True(t, got.NotRecorded, got.Error)
			require.Contains(t, got.Error, tt.want)
			if d := cmp.Diff(before, tree(t, dir)); d != "" {
				t.Fatalf("the good recording changed (-before +after):\n%s", d)
			}
			entries, err := os.ReadDir(filepath.Join(dir, "live", "react-text"))
			require.NoError(t, err)
			require.Len(t, entries, 1, "no stage or journal left behind")
		})
	}
}

// TestKeepFailed saves a refused recording for inspection beside, never
// over, the committed one.
func TestKeepFailed(t *testing.T) {
	sc, err := scenario.Parse("live.yaml", []byte(providerScenario), agent.PromptVariants())
	require.NoError(t, err)
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		fmt.Fprint(w, "{")
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}))
	defer cut.Close()
	dir, keep := t.TempDir(), t.TempDir()
	r := &evals.Runner{Root: dir, CassetteDir: filepath.Join(dir, "cassettes"), Record: &evals.RecordConfig{
		Provider: evals.Provider{BaseURL: cut.URL + "/v1", Model: "m"}, KeepFailed: keep}}
	runs := r.Run(context.Background(), r.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
	require.True(t, runs[0].NotRecorded, runs[0].Error)
	require.Contains(t, runs[0].Error, "kept for inspection in "+filepath.Join(keep, "live", "react-text", "1"))
	kept := tree(t, filepath.Join(keep, "live", "react-text", "1"))
	require.Contains(t, kept[replay.LLMCassette], "response body cut after 1 of 100 bytes")
	_, err = os.Stat(filepath.Join(dir, "cassettes", "live", "react-text", "1"))
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing committed")
	require.False(t, strings.Contains(runs[0].Error, "panic"))
}

// TestSecretRefusesRecording: a key-shaped string in the task would reach
// the cassette: the run is not recorded, not even into --keep-failed, and
// no folder is left behind.
func TestSecretRefusesRecording(t *testing.T) {
	src := strings.Replace(inlineScenario, "task: echo hi", "task: echo sk-abcdefghij1234567890klmn", 1)
	sc, err := scenario.Parse("inline.yaml", []byte(src), agent.PromptVariants())
	require.NoError(t, err)
	dir, keep := t.TempDir(), t.TempDir()
	r := &evals.Runner{Root: dir, CassetteDir: filepath.Join(dir, "cassettes"), Record: &evals.RecordConfig{
		Provider: evals.Provider{Scripted: true}, KeepFailed: keep}}
	runs := r.Run(context.Background(), r.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
	require.True(t, runs[0].NotRecorded, runs[0].Error)
	require.Contains(t, runs[0].Error, `llm.yaml #0 (POST /v1/chat/completions) request body line 1: key-shaped string (openai-api-key) "sk-a…"`)
	require.Empty(t, tree(t, keep), "a secret is never kept")
	require.Empty(t, tree(t, filepath.Join(dir, "cassettes")), "nothing left in the cassette folder")
}

// TestEscapedKeyRefusesRecording: the provider sends the key in use back
// \u-escaped inside its reply: decoded, it would land in llm.yaml and
// decisions.json, so the recording is refused.
func TestEscapedKeyRefusesRecording(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef.AbCdEfGhIjKlMnOp"
	var esc strings.Builder
	for _, r := range key {
		fmt.Fprintf(&esc, `\u%04x`, r)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, strings.Replace(completion("Final Answer: KEY"), "KEY", esc.String(), 1))
	}))
	defer srv.Close()
	tests := []struct{ name, task string }{
		{"escaped key in the reply", "say hi"},
		{"zhipu-shaped key in the task", "say 0123456789abcdef0123456789abcdef.ZyXwVuTsRqPoNmLk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scenario.Parse("live.yaml", []byte(strings.Replace(providerScenario, "task: say hi", "task: "+tt.task, 1)), agent.PromptVariants())
			require.NoError(t, err)
			dir := t.TempDir()
			r := &evals.Runner{Root: dir, CassetteDir: dir, Record: &evals.RecordConfig{
				Provider: evals.Provider{BaseURL: srv.URL + "/v1", Model: "m", APIKey: key}}}
			runs := r.Run(context.Background(), r.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
			require.True(t, runs[0].NotRecorded, runs[0].Error)
			require.Contains(t, runs[0].Error, "secret in cassette")
			require.Empty(t, tree(t, dir))
		})
	}
}

// TestKeepFailedNeverInsideCassettes: --keep-failed naming the cassette
// folder (or a folder in it) keeps nothing and says why; the committed
// recording stays (attack round 2: it was replaced).
func TestKeepFailedNeverInsideCassettes(t *testing.T) {
	sc, err := scenario.Parse("live.yaml", []byte(providerScenario), agent.PromptVariants())
	require.NoError(t, err)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completion("Final Answer: hi"))
	}))
	defer good.Close()
	dir := t.TempDir()
	cas := filepath.Join(dir, "cassettes")
	record := func(base, keep string) report.Run {
		r := &evals.Runner{Root: dir, CassetteDir: cas, Record: &evals.RecordConfig{
			Provider: evals.Provider{BaseURL: base, Model: "m"}, KeepFailed: keep}}
		runs := r.Run(context.Background(), r.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
		return runs[0]
	}
	require.Equal(t, report.VerdictPass, record(good.URL+"/v1", "").Verdict)
	before := tree(t, cas)
	require.NoError(t, os.Symlink(cas, filepath.Join(dir, "link")))
	for _, keep := range []string{cas, filepath.Join(cas, "live"), filepath.Join(dir, "link")} {
		got := record("http://127.0.0.1:9/v1", keep)
		require.True(t, got.NotRecorded, got.Error)
		require.Contains(t, got.Error, "not kept: keep live/react-text/1:")
		require.Contains(t, got.Error, "is inside the cassette folder")
		if d := cmp.Diff(before, tree(t, cas)); d != "" {
			t.Fatalf("--keep-failed %s changed the cassettes (-before +after):\n%s", keep, d)
		}
	}
}
