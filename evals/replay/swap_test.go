package replay

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
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
			stage := path.Join("s", "p", ".1.tmp-0123")
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
