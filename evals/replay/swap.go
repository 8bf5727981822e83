package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// swapFS is the part of *os.Root the swap uses; tests put a
// fault-injecting double in its place.
type swapFS interface {
	Rename(oldname, newname string) error
	RemoveAll(name string) error
	Remove(name string) error
	WriteFile(name string, data []byte, perm fs.FileMode) error
	ReadFile(name string) ([]byte, error)
	Lstat(name string) (fs.FileInfo, error)
}

// journal is the swap journal ".<trial>.swap" beside the run's folder:
// while it exists, a swap of the stage into the run's folder is under way.
// Names are relative to the run's parent folder.
type journal struct {
	Stage string `json:"stage"`
	Old   string `json:"old"`
}

func (r *Recording) journalPath() string {
	return path.Join(path.Dir(r.id.rel()), "."+strconv.Itoa(r.id.Trial)+".swap")
}

// Commit puts a closed, complete stage in place of the run's folder. The
// swap is journaled so that a crash at any step leaves either the old or
// the new recording, whole, once the next OpenRecording of the run (by
// record or eval) has completed it:
//
//  1. write the journal (a temporary file renamed into place), naming the
//     stage and where the old folder goes;
//  2. rename the run's folder, if any, to the old name;
//  3. rename the stage to the run's folder;
//  4. remove the old folder;
//  5. remove the journal.
//
// The journal is written only after the stage is complete, so recovery
// always rolls forward: a stage named by a journal is put in place.
func (r *Recording) Commit() error {
	if r.mode == ModeReplay || r.closed {
		return fmt.Errorf("commit %s: nothing staged", r.id)
	}
	if r.workDir != nil {
		r.workDir.Close()
	}
	parent := path.Dir(r.id.rel())
	j := journal{Stage: path.Base(r.work), Old: strings.Replace(path.Base(r.work), ".tmp-", ".old-", 1)}
	data, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("commit %s: %w", r.id, err)
	}
	jp := r.journalPath()
	tmp := jp + ".tmp"
	if err := r.fs.WriteFile(tmp, data, 0o644); err != nil {
		r.fs.Remove(tmp)
		return fmt.Errorf("commit %s: write journal: %w", r.id, err)
	}
	if err := r.fs.Rename(tmp, jp); err != nil {
		r.fs.Remove(tmp)
		return fmt.Errorf("commit %s: write journal: %w", r.id, err)
	}
	r.closed = true // the stage belongs to the journal now
	if err := r.finish(parent, j); err != nil {
		return fmt.Errorf("commit %s: %w (the next record or eval of this run completes it)", r.id, err)
	}
	return nil
}

// recover completes a swap that a crash interrupted (see Commit). Without a
// journal it does nothing.
func (r *Recording) recover() error {
	jp := r.journalPath()
	if _, err := r.fs.Lstat(jp); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	data, err := readRegular(r.base, jp, r.display(jp), maxJournalBytes, "swap journal")
	if err != nil {
		return fmt.Errorf("recover %s: %w; remove it by hand", r.id, err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || !r.journalNames(j) {
		shown := data
		if len(shown) > 200 {
			shown = shown[:200]
		}
		return fmt.Errorf("recover %s: the swap journal %s is damaged (%q): it must name this run's stage (.%d.tmp-<16 hex>) and old folder (.%d.old-<16 hex>); check the hidden folders beside it and remove the journal by hand",
			r.id, r.display(jp), shown, r.id.Trial, r.id.Trial)
	}
	if err := r.finish(path.Dir(r.id.rel()), j); err != nil {
		return fmt.Errorf("recover %s: complete the interrupted swap: %w", r.id, err)
	}
	return nil
}

// journalNames reports whether a journal names this run's own stage and
// old folders, with the same random suffix, as Commit writes them: a
// journal naming ".", "..", another run's folder or anything else is never
// acted on.
func (r *Recording) journalNames(j journal) bool {
	prefix := "." + strconv.Itoa(r.id.Trial) + "."
	suffix, ok := strings.CutPrefix(j.Stage, prefix+"tmp-")
	if !ok || len(suffix) != 16 || strings.Trim(suffix, "0123456789abcdef") != "" {
		return false
	}
	return j.Old == prefix+"old-"+suffix
}

// finish does steps 2–5 of a journaled swap from whatever state a crash
// left: it is idempotent. The stage is put in place only when it is a
// folder (not a symlink) holding a meta.json.
func (r *Recording) finish(parent string, j journal) error {
	final, stage, old := r.id.rel(), path.Join(parent, j.Stage), path.Join(parent, j.Old)
	if r.exists(stage) {
		if fi, err := r.fs.Lstat(stage); err != nil || !fi.IsDir() {
			return fmt.Errorf("the journal names %s, which is not a staged recording folder: remove the journal %s by hand", r.display(stage), r.display(r.journalPath()))
		}
		if fi, err := r.fs.Lstat(path.Join(stage, MetaFile)); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("the journal names %s, which holds no meta.json: not a complete recording; remove the journal %s by hand", r.display(stage), r.display(r.journalPath()))
		}
		if r.exists(final) {
			if err := r.fs.Rename(final, old); err != nil {
				return err
			}
		}
		if err := r.fs.Rename(stage, final); err != nil {
			return err
		}
	}
	if err := r.fs.RemoveAll(old); err != nil {
		return err
	}
	return r.fs.Remove(r.journalPath())
}

func (r *Recording) exists(name string) bool {
	_, err := r.fs.Lstat(name)
	return err == nil
}

// sweep removes what crashed recordings of this run left beside its folder
// (stage folders, old folders and journal temporaries not named by a
// journal; recover has run first). Record modes call it before staging.
func (r *Recording) sweep() {
	parent := path.Dir(r.id.rel())
	f, err := r.base.Open(parent)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	prefix := "." + strconv.Itoa(r.id.Trial) + "."
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if ok && (strings.HasPrefix(rest, "tmp-") || strings.HasPrefix(rest, "old-") || rest == "swap.tmp") {
			r.base.RemoveAll(path.Join(parent, n))
		}
	}
}
