package evals

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/evals/scenario"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

func TestScriptFor(t *testing.T) {
	text := []scriptedmodel.Turn{{Reply: "Final Answer: t"}}
	sc := &scenario.Scenario{File: "s.yaml", Script: map[string][]scriptedmodel.Turn{"react-text": text}}
	got, err := scriptFor(sc, "react-text")
	require.NoError(t, err)
	require.Equal(t, text, got)

	_, err = scriptFor(sc, "react-json")
	require.EqualError(t, err, "scenario s.yaml has no script for prompt react-json, nor for another variant of its protocol (json); add script.react-json (needed by --scripted)")

	_, err = scriptFor(sc, "react-yaml")
	require.ErrorContains(t, err, `unknown prompt variant "react-yaml"`)
}

// TestCopyWorkspaceStaysInRoot copies a workspace through the *os.Root on
// Root: a symlink inside, a symlinked workspace folder and a path with ".."
// are all refused.
func TestCopyWorkspaceStaysInRoot(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "ws", "picture"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "ws", "picture", "a.txt"), []byte("a"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.jpg"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "linked")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), []byte("f"), 0o644))
	r := &Runner{Root: root}

	dst := t.TempDir()
	require.NoError(t, r.copyWorkspace(&scenario.Scenario{File: "s.yaml", Workspace: "ws"}, dst))
	got, err := os.ReadFile(filepath.Join(dst, "picture", "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "a", string(got))

	tests := []struct{ name, workspace, want string }{
		{"symlinked workspace folder", "linked", "escapes"},
		{"dot-dot", "../" + filepath.Base(outside), "escapes"},
		{"not a folder", "file", "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.copyWorkspace(&scenario.Scenario{File: "s.yaml", Workspace: tt.workspace}, t.TempDir())
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "s.yaml: workspace "+tt.workspace)
		})
	}
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.jpg"), filepath.Join(root, "ws", "picture", "passwd.jpg")))
	err = r.copyWorkspace(&scenario.Scenario{File: "s.yaml", Workspace: "ws"}, t.TempDir())
	require.ErrorContains(t, err, "picture/passwd.jpg is not a regular file or folder")
}

func TestSameText(t *testing.T) {
	require.True(t, sameText("BUILD SUCCEEDED", "build succeeded."))
	require.True(t, sameText("  HACKED  ", "「HACKED」"))
	require.False(t, sameText("HACKED", "not hacked"))
	require.False(t, sameText("", "..."))
}
