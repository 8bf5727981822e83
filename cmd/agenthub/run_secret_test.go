package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// TestRunMasksKey: a model that echoes the key in use (and another
// key-shaped string) in its thought, a tool input and its answer; the
// console trace, the JSON Lines trace and the answer show neither.
func TestRunMasksKey(t *testing.T) {
	key := "0123456789abcdef" + "0123456789abcdef" + ".AbCdEfGh12345678" // Zhipu's id.secret shape
	other := "sk-" + "proj-abcdefghij1234567890klmn"
	model := httptest.NewServer(scriptedmodel.New([]scriptedmodel.Turn{
		{Reply: "Thought: my key is " + key + "\nAction: echo\nAction Input: " + key + " and " + other},
		{Reply: "Final Answer: the key is " + key},
	}))
	defer model.Close()
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return map[string]string{"AGENTHUB_API_KEY": key}[k] }}
	code := exitCode(&stderr, e.run(context.Background(), []string{"run", "--base-url", model.URL + "/v1", "--image-url", "http://127.0.0.1:1", "--workspace", t.TempDir(), "--trace", trace, "echo the key"}))
	require.Equal(t, exitOK, code, "stderr: %s", stderr.String())

	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	for name, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "trace": string(data)} {
		require.NotContains(t, out, key[4:], "%s shows the key", name)
		require.NotContains(t, out, other[4:], "%s shows a key-shaped string", name)
	}
	require.Equal(t, "the key is 0123…\n", stdout.String())
	require.Contains(t, stderr.String(), "tool echo(0123… and sk-p…)")
	events, err := agent.ReadTrace(bytes.NewReader(data))
	require.NoError(t, err, "the masked trace still parses")
	require.Equal(t, agent.EventDone, events[len(events)-1].Type)
	require.True(t, strings.Contains(string(data), "0123…"), "the trace shows the masked key")
}
