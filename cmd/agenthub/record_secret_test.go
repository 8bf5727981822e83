package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordScripted runs `agenthub record --scripted` on one scenario of a
// fresh root whose task is task, with the key (if any) in
// AGENTHUB_API_KEY; it returns the exit code, the output and the files
// recorded (path → content).
func recordScripted(t *testing.T, task, key string) (int, string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	src, err := os.ReadFile("../../fixtures/scenarios/echo-hello.yaml")
	require.NoError(t, err)
	old := `task: 'Use the echo tool to echo the phrase "hello, agent world", then tell me exactly what it returned.'`
	require.Contains(t, string(src), old)
	scenario := strings.Replace(string(src), old, "task: '"+task+"'", 1)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "fixtures", "scenarios"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "fixtures", "scenarios", "echo-hello.yaml"), []byte(scenario), 0o644))
	cas := filepath.Join(root, "cas")
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		return map[string]string{"AGENTHUB_API_KEY": key}[k]
	}}
	code := exitCode(&stderr, e.run(context.Background(), []string{"record", "--root", root, "--cassettes", cas, "--scripted", "--prompt", "react-text"}))
	files := map[string]string{}
	filepath.WalkDir(cas, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(cas, path)
			files[rel] = string(data)
		}
		return nil
	})
	return code, stdout.String() + stderr.String(), files
}

// TestRecordScriptedScansKey: with --scripted, a key set in the
// environment is still a secret: a task that quotes it is not saved, and
// the scripted model is not sent it.
func TestRecordScriptedScansKey(t *testing.T) {
	const key = "test-key-ABCDEFGH12345678" // no key shape: only the exact value finds it
	task := "Use the echo tool to echo " + key + ", then tell me what it returned."

	code, out, files := recordScripted(t, task, key)
	require.NotEqual(t, exitOK, code, out)
	require.Contains(t, out, "secret in use")
	require.NotContains(t, out, key[4:])
	for path, data := range files {
		require.NotContains(t, data, key, path)
	}
	require.NotContains(t, files, filepath.Join("echo-hello", "react-text", "1", "llm.yaml"), "a leaking recording was saved")

	// The scripted model is never sent the key: the cassettes do not
	// depend on the environment (no Authorization header appears).
	code, out, files = recordScripted(t, "Use the echo tool to echo hello, then tell me what it returned.", key)
	require.Equal(t, exitOK, code, out)
	llm := files[filepath.Join("echo-hello", "react-text", "1", "llm.yaml")]
	require.Contains(t, llm, "Content-Type:")
	require.NotContains(t, llm, "Authorization")
}
