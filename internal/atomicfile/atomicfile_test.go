package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
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

	require.NoError(t, Write(path, writeString("new")))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	err = Write(filepath.Join(dir, "no", "such", "dir.json"), func(io.Writer) error { return nil })
	require.ErrorIs(t, err, os.ErrNotExist)
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// TestWriteTargetFiles covers regular files and symlinks: a regular file is
// replaced (a new inode, so a reader holding the old one sees the old
// content), a symlink is followed and stays a symlink.
func TestWriteTargetFiles(t *testing.T) {
	tests := []struct {
		name string
		// setup makes the files in dir and returns the path to write.
		setup func(t *testing.T, dir string) string
		// file is the regular file that must hold "new" afterwards.
		file string
		// links are paths that must still be symlinks afterwards, with
		// their old destination.
		links []string
	}{
		{
			name:  "a regular file is replaced atomically",
			setup: func(t *testing.T, dir string) string { return write(t, dir, "r.json", "old") },
			file:  "r.json",
		},
		{
			name:  "a missing file is created",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "new.json") },
			file:  "new.json",
		},
		{
			name: "a symlink to a regular file stays a symlink",
			setup: func(t *testing.T, dir string) string {
				write(t, dir, "real.json", "old")
				return link(t, "real.json", filepath.Join(dir, "link.json"))
			},
			file:  "real.json",
			links: []string{"link.json"},
		},
		{
			name: "a chain of symlinks is followed to its end",
			setup: func(t *testing.T, dir string) string {
				write(t, dir, "real.json", "old")
				link(t, filepath.Join(dir, "real.json"), filepath.Join(dir, "b.json"))
				return link(t, "b.json", filepath.Join(dir, "a.json"))
			},
			file:  "real.json",
			links: []string{"a.json", "b.json"},
		},
		{
			name: "a dangling symlink gets its file created",
			setup: func(t *testing.T, dir string) string {
				return link(t, "later.json", filepath.Join(dir, "link.json"))
			},
			file:  "later.json",
			links: []string{"link.json"},
		},
		{
			name: "a relative link in a symlinked folder resolves from the real folder",
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755))
				write(t, filepath.Join(dir, "real"), "r.json", "old")
				link(t, "../r.json", filepath.Join(dir, "real", "sub", "link.json"))
				link(t, filepath.Join(dir, "real", "sub"), filepath.Join(dir, "alias"))
				return filepath.Join(dir, "alias", "link.json")
			},
			file:  "real/r.json",
			links: []string{"real/sub/link.json", "alias"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before, _ := os.Stat(filepath.Join(dir, tt.file))
			dests := map[string]string{}
			for _, l := range tt.links {
				d, err := os.Readlink(filepath.Join(dir, l))
				require.NoError(t, err)
				dests[l] = d
			}

			require.NoError(t, WriteTarget(path, writeString("new")))

			after, err := os.Lstat(filepath.Join(dir, tt.file))
			require.NoError(t, err)
			require.True(t, after.Mode().IsRegular(), "%s: %s", tt.file, after.Mode())
			require.Equal(t, os.FileMode(0o644), after.Mode().Perm())
			if before != nil {
				require.False(t, os.SameFile(before, after), "replaced by a new file, not rewritten in place")
			}
			b, err := os.ReadFile(filepath.Join(dir, tt.file))
			require.NoError(t, err)
			require.Equal(t, "new", string(b))
			got := map[string]string{}
			for _, l := range tt.links {
				d, err := os.Readlink(filepath.Join(dir, l))
				require.NoError(t, err, "%s must still be a symlink", l)
				got[l] = d
			}
			if diff := cmp.Diff(dests, got); diff != "" {
				t.Errorf("links mismatch (-want +got):\n%s", diff)
			}
			require.Empty(t, temporaries(t, dir), "no temporary file left")
		})
	}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func link(t *testing.T, dest, at string) string {
	t.Helper()
	require.NoError(t, os.Symlink(dest, at))
	return at
}

// temporaries lists the leftover temporary files below dir.
func temporaries(t *testing.T, dir string) []string {
	t.Helper()
	var tmps []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if m, _ := filepath.Match(".*.tmp-*", d.Name()); m {
			tmps = append(tmps, p)
		}
		return err
	})
	require.NoError(t, err)
	return tmps
}

// TestWriteTargetFailureKeepsOld: a render error leaves the file (and the
// link to it) as they were.
func TestWriteTargetFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "real.json", "old")
	path := link(t, "real.json", filepath.Join(dir, "link.json"))
	err := WriteTarget(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("render failed")
	})
	require.EqualError(t, err, "write "+path+": render failed")
	b, err := os.ReadFile(filepath.Join(dir, "real.json"))
	require.NoError(t, err)
	require.Equal(t, "old", string(b))
	require.Empty(t, temporaries(t, dir))
}

// TestWriteTargetErrors: what cannot be written says so, naming the path
// as given.
func TestWriteTargetErrors(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop")
	link(t, "loop", loop)
	tests := []struct {
		name, path string
		want       string
		is         error
	}{
		{name: "a directory", path: dir, want: "write " + dir + ": " + dir + " is a directory"},
		{name: "a missing folder", path: filepath.Join(dir, "no", "r.json"), is: fs.ErrNotExist},
		{name: "a symlink loop", path: loop, want: "write " + loop + ": more than 40 symlinks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteTarget(tt.path, writeString("x"))
			require.Error(t, err)
			if tt.want != "" {
				require.EqualError(t, err, tt.want)
			}
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
		})
	}
}

// TestWriteTargetFIFO: a named pipe is written into, not replaced by a
// regular file (a reader waiting on it gets the content).
func TestWriteTargetFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.fifo")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	type result struct {
		data []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		// Blocks until WriteTarget opens the FIFO for writing (with the old
		// behaviour it never does: the test fails below, and the test
		// binary's exit ends this goroutine).
		data, err := os.ReadFile(path)
		got <- result{data, err}
	}()
	require.NoError(t, WriteTarget(path, writeString("new")))
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, fs.ModeNamedPipe, fi.Mode().Type(), "still a FIFO")
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, "new", string(r.data))
}

// TestWriteTargetCharDevice: a character device is written in place, never
// replaced (as root, renaming over /dev/null would replace it for every
// process).
func TestWriteTargetCharDevice(t *testing.T) {
	t.Run("/dev/null", func(t *testing.T) {
		require.NoError(t, WriteTarget("/dev/null", writeString("new")))
		fi, err := os.Lstat("/dev/null")
		require.NoError(t, err)
		require.Equal(t, fs.ModeDevice|fs.ModeCharDevice, fi.Mode().Type(), "still a character device")
	})
	t.Run("a private null device", func(t *testing.T) {
		// The same as /dev/null in a folder of its own, so that a writer
		// that replaces devices fails here without harming the machine.
		dir := t.TempDir()
		path := filepath.Join(dir, "null")
		if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Skipf("mknod needs privileges: %v", err)
		}
		require.NoError(t, WriteTarget(path, writeString("new")))
		fi, err := os.Lstat(path)
		require.NoError(t, err)
		require.Equal(t, fs.ModeDevice|fs.ModeCharDevice, fi.Mode().Type(), "still a character device")
		require.Empty(t, temporaries(t, dir))
	})
}

// TestWriteTargetDescriptorAlias: /proc/self/fd/N (what /dev/stdout points
// at) is written through the descriptor, appending, even when it refers to
// a regular file: replacing that file would lose the writes of whoever
// holds it (a shell's "> out.txt").
func TestWriteTargetDescriptorAlias(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	path := filepath.Join(t.TempDir(), "stdout.txt")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	defer f.Close()
	before, err := f.Stat()
	require.NoError(t, err)
	_, err = io.WriteString(f, "table\n")
	require.NoError(t, err)

	require.NoError(t, WriteTarget(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), writeString("report\n")))

	after, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, os.SameFile(before, after), "the file the descriptor refers to is not replaced")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "table\nreport\n", string(b))
}
