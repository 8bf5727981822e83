package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("render failed")
	})
	require.EqualError(t, err, "write "+path+": render failed")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "old", string(b), "a failed write leaves the old file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "temporary file removed")

	require.NoError(t, Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	err = Write(filepath.Join(dir, "no", "such", "dir.json"), func(io.Writer) error { return nil })
	require.ErrorIs(t, err, os.ErrNotExist)
}
