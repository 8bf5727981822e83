package main

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/internal/imageservice"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// TestRunEndToEnd runs `agenthub run` against a local OpenAI-compatible
// server (the scripted model) and the real image service on loopback.
func TestRunEndToEnd(t *testing.T) {
	tests := []struct {
		name     string
		script   []scriptedmodel.Turn
		args     []string
		env      map[string]string
		wantCode int
		stdout   string
		stderr   []string
		// wantImage is a file that must exist afterwards with this width.
		wantImage string
		wantWidth int
	}{
		{
			name: "scale the seed picture",
			script: []scriptedmodel.Turn{
				{Reply: "Thought: scale it\nAction: image_scaling\nAction Input: ./picture/window.jpg 256"},
				{Reply: "Thought: done\nFinal Answer: saved picture/window_256.jpg"},
			},
			env:       map[string]string{"AGENTHUB_API_KEY": "test-key"},
			wantCode:  exitOK,
			stdout:    "saved picture/window_256.jpg\n",
			stderr:    []string{"[step 1] tool image_scaling(./picture/window.jpg 256)", "final_answer after 2 model calls"},
			wantImage: "picture/window_256.jpg", wantWidth: 256,
		},
		{
			name: "step budget is exit 1",
			script: []scriptedmodel.Turn{
				{Reply: "Action: echo\nAction Input: a"},
				{Reply: "Action: echo\nAction Input: b"},
			},
			args:     []string{"--max-steps", "2", "-q"},
			env:      map[string]string{"AGENTHUB_API_KEY": "test-key"},
			wantCode: exitFailed,
			stderr:   []string{"run: max_steps"},
		},
		{
			name: "json prompt variant and a key from another variable",
			script: []scriptedmodel.Turn{
				{Reply: `{"thought":"echo","action":"echo","action_input":"你好"}`},
				{Reply: `{"final_answer":"你好"}`},
			},
			args:     []string{"--prompt", "react-json", "--api-key-env", "GLM_KEY"},
			env:      map[string]string{"GLM_KEY": "k"},
			wantCode: exitOK,
			stdout:   "你好\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := httptest.NewServer(scriptedmodel.New(tt.script))
			defer model.Close()
			images := httptest.NewServer(imageservice.New(imageservice.Config{}, nil))
			defer images.Close()
			ws := t.TempDir()
			require.NoError(t, os.CopyFS(ws, os.DirFS("../../testdata/images")))
			trace := filepath.Join(t.TempDir(), "run.jsonl")

			var stdout, stderr bytes.Buffer
			e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return tt.env[k] }}
			args := append([]string{"run", "--base-url", model.URL + "/v1", "--image-url", images.URL, "--workspace", ws, "--trace", trace}, tt.args...)
			args = append(args, "scale ./picture/window.jpg to 256")
			code := exitCode(&stderr, e.run(context.Background(), args))
			require.Equal(t, tt.wantCode, code, "stderr: %s", stderr.String())
			if tt.stdout != "" {
				require.Equal(t, tt.stdout, stdout.String())
			}
			for _, s := range tt.stderr {
				require.Contains(t, stderr.String(), s)
			}
			f, err := os.Open(trace)
			require.NoError(t, err)
			defer f.Close()
			events, err := agent.ReadTrace(f)
			require.NoError(t, err)
			require.Equal(t, agent.EventDone, events[len(events)-1].Type)
			if tt.wantImage != "" {
				img, err := os.Open(filepath.Join(ws, tt.wantImage))
				require.NoError(t, err)
				defer img.Close()
				cfg, format, err := image.DecodeConfig(img)
				require.NoError(t, err)
				require.Equal(t, "jpeg", format)
				require.Equal(t, tt.wantWidth, cfg.Width)
			}
		})
	}
}

// TestRunImageServiceDown warns, names the imaged command, and the tool's
// error observation tells the model the service is unavailable.
func TestRunImageServiceDown(t *testing.T) {
	model := httptest.NewServer(scriptedmodel.New([]scriptedmodel.Turn{
		{Reply: "Action: image_scaling\nAction Input: picture/window.jpg 64"},
		{Reply: "Final Answer: the image service is down"},
	}))
	defer model.Close()
	dead := httptest.NewServer(nil)
	deadURL := dead.URL
	dead.Close()
	ws := t.TempDir()
	require.NoError(t, os.CopyFS(ws, os.DirFS("../../testdata/images")))
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "k" }}
	code := exitCode(&stderr, e.run(context.Background(), []string{"run", "--base-url", model.URL, "--image-url", deadURL, "--workspace", ws, "scale"}))
	require.Equal(t, exitOK, code, stderr.String())
	require.Contains(t, stderr.String(), "image service not reachable")
	require.Contains(t, stderr.String(), "go run ./cmd/imaged")
	require.True(t, strings.Contains(stderr.String(), "service_unavailable"), stderr.String())
}
