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
