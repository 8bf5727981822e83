package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/evals/report"
)

// TestIsLocalURL: only a URL whose host is this machine skips the API-key
// check; a remote name that starts like a loopback address does not.
func TestIsLocalURL(t *testing.T) {
	tests := []struct {
		url  string
		want bool
		why  string
	}{
		{"http://127.0.0.1:11434/v1", true, "Ollama on loopback"},
		{"http://127.0.0.1", true, "no port"},
		{"http://127.1.2.3:8000/v1", true, "all of 127.0.0.0/8 is loopback"},
		{"http://localhost:8000/v1", true, "localhost"},
		{"http://LOCALHOST:8000", true, "host names are case-insensitive"},
		{"https://localhost:8443/v1", true, "https on loopback"},
		{"http://[::1]:8081/v1", true, "IPv6 loopback"},
		{"http://0.0.0.0:8080", true, "the unspecified address connects to this machine"},
		{"http://[::ffff:127.0.0.1]:80", true, "IPv4-mapped loopback"},
		{"http://127.0.0.1.example.com/v1", false, "a remote name starting like 127.0.0.1"},
		{"http://localhost.example.com/v1", false, "a remote name starting like localhost"},
		{"http://127.0.0.1@api.example.com/v1", false, "userinfo that looks like loopback"},
		{"http://[::1].example.com", false, "not a host"},
		{"https://open.bigmodel.cn/api/paas/v4", false, "the default provider"},
		{"http://10.0.0.5:8000/v1", false, "another machine on the LAN"},
		{"ftp://127.0.0.1/", false, "not http"},
		{"127.0.0.1:8080", false, "no scheme"},
		{"", false, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			require.Equal(t, tt.want, isLocalURL(tt.url), tt.why)
		})
	}
}

// TestFindRoot: from a sub-folder of a repository, the --root to pass is
// the nearest ancestor with the scenarios folder.
func TestFindRoot(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "fixtures", "scenarios"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "evals", "replay"), 0o755))
	t.Chdir(filepath.Join(repo, "evals", "replay"))
	tests := []struct {
		name, root, scenarios, want string
	}{
		{"two levels down", ".", "fixtures/scenarios", "../.."},
		{"--root one level up is still short by one", "..", "fixtures/scenarios", "../.."},
		{"an absolute root gives an absolute hint", filepath.Join(repo, "evals"), "fixtures/scenarios", repo},
		{"no ancestor has the folder", ".", "no/such/folder", ""},
		{"an absolute --scenarios has no root to find", ".", filepath.Join(repo, "nope"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, findRoot(tt.root, tt.scenarios))
		})
	}
}

// TestVerdictError: a verdict error beats a failure, and only an all-pass
// group exits 0.
func TestVerdictError(t *testing.T) {
	tests := []struct {
		name     string
		group    report.Group
		wantCode int
		wantMsg  string
	}{
		{"all passed", report.Group{Total: 2, Pass: 2}, exitOK, ""},
		{"nothing ran", report.Group{}, exitOK, ""},
		{"a failure", report.Group{Total: 2, Pass: 1, Fail: 1}, exitFailed, "failed"},
		{"an error beats a failure", report.Group{Total: 3, Pass: 1, Fail: 1, Error: 1}, exitUsage, "not judged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := verdictError(tt.group, "failed", "not judged")
			require.Equal(t, tt.wantCode, exitCode(&stderr, err))
			if tt.wantMsg == "" {
				require.NoError(t, err)
				require.Empty(t, stderr.String())
				return
			}
			require.Equal(t, "agenthub: "+tt.wantMsg+"\n", stderr.String())
		})
	}
}

// TestExitCode: the one mapping from a command's error to the exit code.
func TestExitCode(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, exitOK, ""},
		{"help", errHelp, exitOK, ""},
		{"usage", usageErrorf("eval: bad %s", "flag"), exitUsage, "agenthub: eval: bad flag\n"},
		{"failed", failedErrorf("run: gave up"), exitFailed, "agenthub: run: gave up\n"},
		{"silent failure", errSilentFailure, exitFailed, ""},
		{"any other error is a harness error", errors.New("render: disk full"), exitUsage, "agenthub: render: disk full\n"},
		{"control characters are shown, not sent", failedErrorf("run: \x1b[2J"), exitFailed, "agenthub: run: ^[[2J\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			require.Equal(t, tt.code, exitCode(&stderr, tt.err))
			require.Equal(t, tt.stderr, stderr.String())
		})
	}
}
