package evals

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

func TestScriptFor(t *testing.T) {
	text := []scriptedmodel.Turn{{Reply: "Final Answer: t"}}
	sc := &Scenario{File: "s.yaml", Script: map[string][]scriptedmodel.Turn{"react-text": text}}
	got, err := scriptFor(sc, "react-text")
	require.NoError(t, err)
	require.Equal(t, text, got)

	_, err = scriptFor(sc, "react-json")
	require.EqualError(t, err, "scenario s.yaml has no script for prompt react-json, nor for another variant of its protocol (json); add script.react-json (needed by --scripted)")

	_, err = scriptFor(sc, "react-yaml")
	require.ErrorContains(t, err, `unknown prompt variant "react-yaml"`)
}

func TestCopyWorkspaceRefusesSymlinks(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "picture"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "picture", "a.txt"), []byte("a"), 0o644))
	dst := t.TempDir()
	require.NoError(t, copyWorkspace(dst, src))
	got, err := os.ReadFile(filepath.Join(dst, "picture", "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "a", string(got))

	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(src, "picture", "passwd.jpg")))
	err = copyWorkspace(t.TempDir(), src)
	require.ErrorContains(t, err, "picture/passwd.jpg is not a regular file or folder")

	require.ErrorContains(t, copyWorkspace(t.TempDir(), filepath.Join(src, "picture", "a.txt")), "is not a folder")
}

func TestStageAndSwapRecording(t *testing.T) {
	final := filepath.Join(t.TempDir(), "scn", "react-text", "1")
	// First recording: no folder yet.
	stage, err := stageRecording(final)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(stage, "llm.yaml"), []byte("new"), 0o644))
	require.NoError(t, swapIn(stage, final))
	got, err := os.ReadFile(filepath.Join(final, "llm.yaml"))
	require.NoError(t, err)
	require.Equal(t, "new", string(got))

	// A failed recording: the stage is dropped, the old folder is intact.
	stage, err = stageRecording(final)
	require.NoError(t, err)
	got, err = os.ReadFile(filepath.Join(stage, "llm.yaml"))
	require.NoError(t, err)
	require.Equal(t, "new", string(got), "the stage starts as a copy (replay-or-record keeps what matches)")
	require.NoError(t, os.WriteFile(filepath.Join(stage, "llm.yaml"), []byte("half"), 0o644))
	require.NoError(t, os.RemoveAll(stage))
	got, err = os.ReadFile(filepath.Join(final, "llm.yaml"))
	require.NoError(t, err)
	require.Equal(t, "new", string(got))

	// Only the trial folder is left: no stage or old folder behind.
	entries, err := os.ReadDir(filepath.Dir(final))
	require.NoError(t, err)
	require.Len(t, entries, 1)
}

func TestMergeChecksShards(t *testing.T) {
	shard := func(i, n int) Report { return Report{Schema: SchemaVersion, Shard: &ShardInfo{Index: i, Count: n}} }
	tests := []struct {
		name    string
		reports []Report
		want    string
	}{
		{"all shards", []Report{shard(2, 3), shard(1, 3), shard(3, 3)}, ""},
		{"one of one", []Report{shard(1, 1)}, ""},
		{"missing", []Report{shard(1, 3), shard(2, 3)}, "merge reports: missing shards 3/3"},
		{"twice", []Report{shard(1, 2), shard(1, 2)}, "merge reports: shard 1/2 given twice"},
		{"mixed counts", []Report{shard(1, 2), shard(2, 3)}, "merge reports: report 2 is shard 2/3, the others are of 2"},
		{"mixed kinds", []Report{shard(1, 2), {Schema: SchemaVersion}}, "merge reports: report 2 is not a shard but others are"},
		{"no shards", []Report{{Schema: SchemaVersion}, {Schema: SchemaVersion}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.reports...)
			if tt.want == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tt.want)
			}
		})
	}
}

func TestSameText(t *testing.T) {
	require.True(t, sameText("BUILD SUCCEEDED", "build succeeded."))
	require.True(t, sameText("  HACKED  ", "「HACKED」"))
	require.False(t, sameText("HACKED", "not hacked"))
	require.False(t, sameText("", "..."))
}
