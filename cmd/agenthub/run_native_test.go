package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/internal/imageservice"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// TestRunNativeParallelCalls: `agenthub run --prompt native-tools`, plain
// and with --stream, completes a task in which the model makes two
// parallel native calls (image_scaling and echo) against an
// OpenAI-compatible server, and the reasoning reaches --trace.
func TestRunNativeParallelCalls(t *testing.T) {
	img := httptest.NewServer(imageservice.New(imageservice.Config{}, slog.New(slog.DiscardHandler)))
	defer img.Close()
	src, err := os.ReadFile("../../testdata/images/picture/window.jpg")
	require.NoError(t, err)
	for _, stream := range []bool{false, true} {
		name := "plain"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			turns := []scriptedmodel.Turn{
				{Reasoning: "two independent calls at once", ToolCalls: []scriptedmodel.ToolCall{
					{Name: "image_scaling", Arguments: `{"path":"picture/window.jpg","width":128}`},
					{Name: "echo", Arguments: `{"text":"scaling started"}`}}},
				{Reply: "picture/window_128.jpg is ready; echo said: scaling started."},
			}
			model := httptest.NewServer(scriptedmodel.New(turns))
			defer model.Close()
			ws := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "picture"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "picture", "window.jpg"), src, 0o644))
			trace := filepath.Join(t.TempDir(), "run.jsonl")
			args := []string{"run", "-q", "--base-url", model.URL + "/v1", "--image-url", img.URL, "--workspace", ws,
				"--prompt", "native-tools", "--trace", trace}
			if stream {
				args = append(args, "--stream")
			}
			var stdout, stderr bytes.Buffer
			e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			code := exitCode(&stderr, e.run(context.Background(), append(args, "scale picture/window.jpg to 128 and echo 'scaling started'")))
			require.Equal(t, exitOK, code, "stderr: %s", stderr.String())
			require.Equal(t, "picture/window_128.jpg is ready; echo said: scaling started.\n", stdout.String())
			_, err := os.Stat(filepath.Join(ws, "picture", "window_128.jpg"))
			require.NoError(t, err, "the image call ran")
			data, err := os.ReadFile(trace)
			require.NoError(t, err)
			lines := string(data)
			require.Contains(t, lines, `"reasoning":"two independent calls at once"`)
			require.Equal(t, 2, strings.Count(lines, `"type":"tool_call"`), "both calls ran")
			require.Less(t, strings.Index(lines, `"tool":"image_scaling"`), strings.Index(lines, `"tool":"echo"`), "in the order given")
			require.Contains(t, lines, `"tool_calls":2`, "the llm_call event counts the native calls")
		})
	}
}
