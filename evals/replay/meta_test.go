package replay

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestMetaRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "resize", "react-text", "1")
	want := Meta{
		RecordedAt:      "2026-11-30T12:00:00Z",
		ProviderHost:    "open.bigmodel.cn",
		Model:           "glm-4-flash",
		Prompt:          "react-text",
		PromptHash:      PromptHash("system", "echo", "image_scaling"),
		AgentHubVersion: "v0.1.0",
		Scenario:        "resize",
		Trial:           1,
	}
	require.NoError(t, WriteMeta(dir, want))
	got, err := ReadMeta(dir)
	require.NoError(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("meta mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, []string{MetaFile}, dirFiles(t, dir), "WriteMeta left a temporary file")

	// Overwriting replaces the file.
	want.Model = "other"
	require.NoError(t, WriteMeta(dir, want))
	got, err = ReadMeta(dir)
	require.NoError(t, err)
	require.Equal(t, "other", got.Model)
}

func TestMetaErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadMeta(dir)
	require.ErrorIs(t, err, fs.ErrNotExist)

	require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), []byte("{"), 0o644))
	_, err = ReadMeta(dir)
	require.ErrorContains(t, err, "read meta "+filepath.Join(dir, MetaFile))

	// A file where the directory should be.
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	require.ErrorContains(t, WriteMeta(filepath.Join(blocker, "sub"), Meta{}), "write meta")
}

func TestCheckPrompt(t *testing.T) {
	dir := t.TempDir()
	recorded := PromptHash("You are helpful.", "echo")
	require.NoError(t, WriteMeta(dir, Meta{Prompt: "react-text", PromptHash: recorded}))

	tests := []struct {
		name    string
		hash    string
		wantErr bool
	}{
		{name: "same prompt", hash: recorded},
		{name: "changed prompt text", hash: PromptHash("You are very helpful.", "echo"), wantErr: true},
		{name: "changed tool list", hash: PromptHash("You are helpful.", "echo", "image_scaling"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPrompt(dir, tt.hash)
			if !tt.wantErr {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrStaleCassette)
			require.ErrorContains(t, err, "stale cassette: prompt changed")
			require.ErrorContains(t, err, dir)
			require.ErrorContains(t, err, recorded[:12])
		})
	}
	require.ErrorIs(t, CheckPrompt(t.TempDir(), recorded), fs.ErrNotExist)
}

// TestOpenChecksPromptFirst: a stale cassette fails at Open, before any
// request, with the re-record hint.
func TestOpenChecksPromptFirst(t *testing.T) {
	srv := newChatServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, LLMCassette)
	record(t, path, srv, chatBody("old prompt", "q"))
	require.NoError(t, WriteMeta(dir, Meta{Prompt: "react-text", PromptHash: PromptHash("old prompt")}))

	_, err := Open(path, ModeReplay, WithPromptHash(PromptHash("new prompt")), WithRerecordHint("agenthub record --run x"))
	require.ErrorIs(t, err, ErrStaleCassette)
	require.ErrorContains(t, err, "re-record with: agenthub record --run x")

	c, err := Open(path, ModeReplay, WithPromptHash(PromptHash("old prompt")))
	require.NoError(t, err)
	require.NoError(t, c.Discard())
}

func TestPromptHash(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		same bool
	}{
		{name: "deterministic", a: []string{"p", "echo"}, b: []string{"p", "echo"}, same: true},
		{name: "field boundaries count", a: []string{"ab", "c"}, b: []string{"a", "bc"}},
		{name: "tool order counts", a: []string{"p", "a", "b"}, b: []string{"p", "b", "a"}},
		{name: "an empty tool counts", a: []string{"p"}, b: []string{"p", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := PromptHash(tt.a[0], tt.a[1:]...), PromptHash(tt.b[0], tt.b[1:]...)
			require.Len(t, a, 64)
			require.Equal(t, tt.same, a == b)
		})
	}
}

func TestDir(t *testing.T) {
	require.Equal(t, filepath.Join("cassettes", "resize", "react-text", "2"), Dir("cassettes", "resize", "react-text", 2))
}
