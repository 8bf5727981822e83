package replay

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestMetaRoundTrip(t *testing.T) {
	want := Meta{
		RecordedAt:       "2026-11-30T12:00:00Z",
		ProviderHost:     "open.bigmodel.cn",
		ProviderBasePath: "/api/paas/v4",
		Model:            "glm-4-flash",
		Prompt:           "react-text",
		PromptHash:       PromptHash("system", "echo", "image_scaling"),
		AgentHubVersion:  "v0.1.0",
		Scenario:         "resize",
		Trial:            1,
	}
	data, err := encodeMeta(want)
	require.NoError(t, err)
	got, err := decodeMeta(data, "meta.json")
	require.NoError(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("meta mismatch (-want +got):\n%s", diff)
	}
}

func TestMetaErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not JSON", "{", "read meta x/meta.json: unexpected end of JSON input"},
		{"negative trial", `{"trial":-1}`, "trial -1 is negative"},
		{"wrong type", `{"trial":"1"}`, "read meta x/meta.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeMeta([]byte(tt.data), "x/meta.json")
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// writeRecording lays out a recording of s/p/1 with one empty llm cassette
// and the given meta.
func writeRecording(t *testing.T, m Meta) (*os.Root, RunID) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "s", "p", "1")
	data, err := encodeMeta(m)
	require.NoError(t, err)
	writeRun(t, dir, map[string]string{MetaFile: string(data), DecisionsFile: "[]",
		LLMCassette: "version: 1\ninteractions: []\n", ImageCassette: "version: 1\ninteractions: []\n"})
	root, err := os.OpenRoot(base)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	return root, RunID{Scenario: "s", Prompt: "p", Trial: 1}
}

func TestCheckPrompt(t *testing.T) {
	recorded := PromptHash("You are helpful.", "echo")
	root, id := writeRecording(t, Meta{Prompt: "p", PromptHash: recorded})
	rec, err := OpenRecording(root, id, ModeReplay)
	require.NoError(t, err)
	defer rec.Discard()

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
			err := rec.CheckPrompt(tt.hash)
			if !tt.wantErr {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrStaleCassette)
			require.ErrorContains(t, err, "stale cassette: prompt changed")
			require.ErrorContains(t, err, filepath.ToSlash(filepath.Join(root.Name(), "s", "p", "1", MetaFile)))
			require.ErrorContains(t, err, recorded[:12])
		})
	}
}

// TestOpenRecordingChecksIdentity: a recording copied to another trial, or
// without decisions, is refused before any request.
func TestOpenRecordingChecksIdentity(t *testing.T) {
	root, id := writeRecording(t, Meta{Scenario: "s", Prompt: "p", Trial: 2})
	_, err := OpenRecording(root, id, ModeReplay)
	require.ErrorContains(t, err, "says it records s/p/2: a copied or moved recording")

	root, id = writeRecording(t, Meta{Scenario: "s", Prompt: "p", Trial: 1})
	require.NoError(t, os.Remove(filepath.Join(root.Name(), "s", "p", "1", DecisionsFile)))
	_, err = OpenRecording(root, id, ModeReplay)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, DecisionsFile)

	_, err = OpenRecording(root, RunID{Scenario: "s", Prompt: "p", Trial: 9}, ModeReplay)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, "no recording in")

	_, err = OpenRecording(root, RunID{Scenario: "..", Prompt: "p", Trial: 1}, ModeReplay)
	require.ErrorContains(t, err, `".." is not a folder name`)
}

// TestRecordingStaysInRoot: a trial folder that is a symlink out of the
// cassette folder is refused.
func TestRecordingStaysInRoot(t *testing.T) {
	root, id := writeRecording(t, Meta{Scenario: "s", Prompt: "p", Trial: 1})
	outside := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.Rename(filepath.Join(root.Name(), "s", "p", "1"), outside))
	require.NoError(t, os.Symlink(outside, filepath.Join(root.Name(), "s", "p", "1")))
	_, err := OpenRecording(root, id, ModeReplay)
	require.ErrorContains(t, err, "escapes")
	_, err = OpenRecording(root, id, ModeReplayOrRecord)
	require.ErrorContains(t, err, "escapes")
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

// TestRecordingFilesMustBeRegular: a FIFO, a folder or an oversized file
// where a recording's file belongs is an error naming it, never a hang or
// a read of the whole thing (attack round 2).
func TestRecordingFilesMustBeRegular(t *testing.T) {
	tests := []struct {
		file string
		make func(t *testing.T, path string)
		want string
	}{
		{LLMCassette, func(t *testing.T, p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) }, "llm.yaml is not a regular file"},
		{ImageCassette, func(t *testing.T, p string) { require.NoError(t, os.Mkdir(p, 0o755)) }, "image.yaml is not a regular file"},
		{MetaFile, func(t *testing.T, p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) }, "meta.json is not a regular file"},
		{MetaFile, func(t *testing.T, p string) {
			f, err := os.Create(p)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(2<<30))
			require.NoError(t, f.Close())
		}, "over the 1048576-byte meta.json limit"},
		{DecisionsFile, func(t *testing.T, p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) }, "decisions.json is not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.want, func(t *testing.T) {
			root, id := writeRecording(t, Meta{Scenario: "s", Prompt: "p", Trial: 1})
			p := filepath.Join(root.Name(), "s", "p", "1", tt.file)
			require.NoError(t, os.Remove(p))
			tt.make(t, p)
			_, err := OpenRecording(root, id, ModeReplay)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
