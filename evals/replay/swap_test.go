package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var errCrash = errors.New("crashed")

// crashFS is a swapFS that performs the first n calls and then fails every
// call, as a process killed at that point would do nothing more.
type crashFS struct {
	swapFS
	n, calls int
}

func (c *crashFS) step() error {
	c.calls++
	if c.calls > c.n {
		return errCrash
	}
	return nil
}

func (c *crashFS) Rename(a, b string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.swapFS.Rename(a, b)
}

func (c *crashFS) RemoveAll(n string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.swapFS.RemoveAll(n)
}

func (c *crashFS) Remove(n string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.swapFS.Remove(n)
}

func (c *crashFS) WriteFile(n string, d []byte, p fs.FileMode) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.swapFS.WriteFile(n, d, p)
}

// runFiles reads every file of a run folder: name → content.
func runFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(data)
	}
	return out
}

func recordingFiles(tag string) map[string]string {
	return map[string]string{
		LLMCassette:   "version: 1\ninteractions: [] # " + tag + "\n",
		ImageCassette: "version: 1\ninteractions: [] # " + tag + "\n",
		MetaFile:      `{"scenario":"s","prompt":"p","trial":1,"model":"` + tag + `"}`,
		DecisionsFile: "[] # " + tag,
	}
}

func writeRun(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
}

// TestCommitSurvivesACrashAtEveryStep kills the swap after each of its
// filesystem calls (a test double, not timing) and requires that the next
// OpenRecording leaves the old or the new recording, whole, and no journal.
func TestCommitSurvivesACrashAtEveryStep(t *testing.T) {
	id := RunID{Scenario: "s", Prompt: "p", Trial: 1}
	oldFiles, newFiles := recordingFiles("old"), recordingFiles("new")
	for _, first := range []bool{false, true} {
		for n := 0; ; n++ {
			base := t.TempDir()
			if !first {
				writeRun(t, filepath.Join(base, "s", "p", "1"), oldFiles)
			}
			stage := path.Join("s", "p", ".1.tmp-0123456789abcdef")
			writeRun(t, filepath.Join(base, filepath.FromSlash(stage)), newFiles)
			root, err := os.OpenRoot(base)
			require.NoError(t, err)
			defer root.Close()

			crash := &crashFS{swapFS: root, n: n}
			r := &Recording{id: id, base: root, fs: crash, mode: ModeRecord, work: stage}
			err = r.Commit()
			done := err == nil
			if !done {
				require.ErrorIs(t, err, errCrash, "n=%d", n)
			}

			// The next eval of the run completes the swap.
			again, err := OpenRecording(root, id, ModeReplay)
			if first && errors.Is(err, fs.ErrNotExist) {
				require.Less(t, n, 2, "n=%d: only a crash before the journal leaves no recording", n)
			} else {
				require.NoError(t, err, "n=%d", n)
				again.Discard()
			}
			got := runFiles(t, filepath.Join(base, "s", "p", "1"))
			journaled := n >= 2 // the journal was written and renamed into place
			want := newFiles
			if !journaled {
				want = oldFiles
				if first {
					want = nil
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("n=%d: run folder mismatch (-want +got):\n%s", n, d)
			}
			_, err = os.Stat(filepath.Join(base, "s", "p", ".1.swap"))
			require.ErrorIs(t, err, fs.ErrNotExist, "n=%d: the journal is gone", n)
			if journaled {
				left := hidden(t, filepath.Join(base, "s", "p"))
				require.Empty(t, left, "n=%d: nothing left beside the run", n)
			}
			if done {
				require.Equal(t, 6-boolInt(first), n, "a clean swap takes this many calls")
				break
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hidden lists the dot-names in dir.
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.Name()[0] == '.' {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// TestRecordSweepsCrashLeftovers: stage folders of a crashed recording are
// removed by the next recording of the run.
func TestRecordSweepsCrashLeftovers(t *testing.T) {
	base := t.TempDir()
	parent := filepath.Join(base, "s", "p")
	writeRun(t, filepath.Join(parent, ".1.tmp-dead"), recordingFiles("x"))
	writeRun(t, filepath.Join(parent, ".1.old-dead"), recordingFiles("x"))
	writeRun(t, filepath.Join(parent, ".2.tmp-other"), recordingFiles("x"))
	root, err := os.OpenRoot(base)
	require.NoError(t, err)
	defer root.Close()
	r, err := OpenRecording(root, RunID{Scenario: "s", Prompt: "p", Trial: 1}, ModeRecord)
	require.NoError(t, err)
	r.Discard()
	require.Equal(t, []string{".2.tmp-other"}, hidden(t, parent), "only trial 1's leftovers go; the discarded stage too")
}

// TestHostileJournals: a journal that names anything but this run's own
// stage and old folders, or a stage that is not a recording folder, or
// that is not a small regular file, is refused with a clear error and the
// committed recording (and everything around it) is left alone.
func TestHostileJournals(t *testing.T) {
	const stage, old = ".1.tmp-0123456789abcdef", ".1.old-0123456789abcdef"
	tests := []struct {
		name    string
		journal string // "" : see setup
		setup   func(t *testing.T, parent string)
		want    string
	}{
		{name: "old is the parent folder", journal: `{"stage":".nope","old":".."}`, want: "is damaged"},
		{name: "old is this folder", journal: `{"stage":"` + stage + `","old":"."}`, want: "is damaged"},
		{name: "stage is the parent", journal: `{"stage":"..","old":"` + old + `"}`, want: "is damaged"},
		{name: "another run's names", journal: `{"stage":".2.tmp-0123456789abcdef","old":".2.old-0123456789abcdef"}`, want: "is damaged"},
		{name: "stage and old disagree", journal: `{"stage":"` + stage + `","old":".1.old-fedcba9876543210"}`, want: "is damaged"},
		{name: "stage is a symlink to a sibling run", journal: `{"stage":"` + stage + `","old":"` + old + `"}`,
			setup: func(t *testing.T, parent string) {
				writeRun(t, filepath.Join(parent, "..", "q", "1"), recordingFiles("sibling"))
				require.NoError(t, os.Symlink(filepath.Join("..", "q", "1"), filepath.Join(parent, stage)))
			}, want: "not a staged recording folder"},
		{name: "stage is a file", journal: `{"stage":"` + stage + `","old":"` + old + `"}`,
			setup: func(t *testing.T, parent string) {
				require.NoError(t, os.WriteFile(filepath.Join(parent, stage), []byte("x"), 0o644))
			}, want: "not a staged recording folder"},
		{name: "stage is an empty folder", journal: `{"stage":"` + stage + `","old":"` + old + `"}`,
			setup: func(t *testing.T, parent string) {
				require.NoError(t, os.Mkdir(filepath.Join(parent, stage), 0o755))
			}, want: "holds no meta.json"},
		{name: "journal is a FIFO", setup: func(t *testing.T, parent string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(parent, ".1.swap"), 0o644))
		}, want: "not a regular file"},
		{name: "journal is huge", setup: func(t *testing.T, parent string) {
			f, err := os.Create(filepath.Join(parent, ".1.swap"))
			require.NoError(t, err)
			require.NoError(t, f.Truncate(2<<30))
			require.NoError(t, f.Close())
		}, want: "over the 4096-byte swap journal limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			parent := filepath.Join(base, "s", "p")
			writeRun(t, filepath.Join(parent, "1"), recordingFiles("old"))
			writeRun(t, filepath.Join(base, "s", "r", "1"), recordingFiles("other prompt"))
			if tt.setup != nil {
				tt.setup(t, parent)
			}
			if tt.journal != "" {
				require.NoError(t, os.WriteFile(filepath.Join(parent, ".1.swap"), []byte(tt.journal), 0o644))
			}
			before := tree(t, base)
			root, err := os.OpenRoot(base)
			require.NoError(t, err)
			defer root.Close()
			_, err = OpenRecording(root, RunID{Scenario: "s", Prompt: "p", Trial: 1}, ModeReplay)
			require.ErrorContains(t, err, tt.want)
			if d := cmp.Diff(before, tree(t, base)); d != "" {
				t.Fatalf("files changed (-before +after):\n%s", d)
			}
		})
	}
}

// tree lists every regular file and symlink under dir with its content
// (a symlink as "-> target").
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			fi, _ := d.Info()
			if fi.Size() > 1<<20 {
				out[rel] = fmt.Sprintf("%d bytes", fi.Size())
				return nil
			}
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = string(data)
		case !d.IsDir():
			out[rel] = d.Type().String()
		}
		return nil
	}))
	return out
}
