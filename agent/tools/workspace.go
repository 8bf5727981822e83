package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Workspace is the folder a file-touching tool may read and write. Every
// path a model supplies is checked lexically first (empty, NUL, "..",
// absolute outside), and every open, create, stat, link and rename goes
// through an os.Root opened on the folder, so no path component — a
// symbolic link, "..", or one swapped in while the tool runs — can lead
// outside it. Symbolic links inside the workspace are
// followed when they are relative and stay inside; absolute links are
// refused (os.Root's rule).
type Workspace struct {
	root     string   // absolute, cleaned
	realRoot string   // root with symlinks evaluated
	fs       *os.Root // every file access goes through it
}

// NewWorkspace returns the workspace rooted at root (made absolute). The
// root must be an existing directory. The workspace holds the folder open
// until Close (or until it is garbage collected).
func NewWorkspace(root string) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("new workspace: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("new workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("new workspace: %s is not a directory", abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("new workspace: %w", err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("new workspace: %w", err)
	}
	return &Workspace{root: abs, realRoot: real, fs: r}, nil
}

// Root returns the absolute path of the workspace root.
func (w *Workspace) Root() string { return w.root }

// Close releases the workspace's handle on its folder; the tools that use
// the workspace fail afterwards.
func (w *Workspace) Close() error { return w.fs.Close() }

// stat resolves a model-supplied path (relative to the root, optionally
// with a leading "./", or absolute inside the root) to a cleaned
// root-relative native path, the name every w.fs call takes, and stats
// what it points to. Symlinks are followed as long as they stay inside the
// root.
//
// Errors are *Error: invalid_input for an empty path or one with a NUL
// byte, path_outside_workspace for ".." escapes, absolute paths outside
// the root and symlinks that leave it, file_not_found when nothing exists
// at the path (the message names the path as the model wrote it).
func (w *Workspace) stat(p string) (string, fs.FileInfo, error) {
	rel, err := w.lexical(p)
	if err != nil {
		return "", nil, err
	}
	fi, err := w.fs.Stat(rel)
	if err != nil {
		return "", nil, w.statError(p, err)
	}
	return rel, fi, nil
}

// statError maps a failed w.fs call on the model's path p to an *Error.
func (w *Workspace) statError(p string, err error) *Error {
	switch {
	case escapes(err):
		return &Error{Code: CodePathOutsideWorkspace, Message: fmt.Sprintf("resolve path: %q leads outside the workspace through a symbolic link", p), Err: err}
	case missing(err):
		return &Error{Code: CodeFileNotFound, Message: fmt.Sprintf("resolve path: %q does not exist in the workspace", p), Err: err}
	}
	return &Error{Code: CodeInvalidInput, Message: fmt.Sprintf("resolve path: %q: %v", p, err), Err: err}
}

// nearestDir returns dir (root-relative) or its nearest parent that is a
// folder. ok is false when the walk meets a path that leads out of the
// root (the model then gets no listing of a folder outside).
func (w *Workspace) nearestDir(ctx context.Context, dir string) (string, bool, error) {
	for {
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		fi, err := w.fs.Stat(dir)
		if err == nil && fi.IsDir() {
			return dir, true, nil
		}
		if escapes(err) || dir == "." {
			return "", false, nil
		}
		dir = filepath.Dir(dir)
	}
}

// readDirNames returns the sorted names of the entries of the folder dir
// (root-relative) that keep accepts.
func (w *Workspace) readDirNames(dir string, keep func(fs.DirEntry) bool) ([]string, error) {
	f, err := w.fs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if keep(e) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Errors of readRegular besides those of the file system.
var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("over the size limit")
)

// readRegular reads the regular file at the root-relative path rel, at
// most limit bytes: a file that is not regular once opened is
// errNotRegular, a longer one errTooLarge. It opens without blocking, so a
// FIFO swapped in after a stat cannot hang the call.
func (w *Workspace) readRegular(rel string, limit int64) ([]byte, error) {
	f, err := w.fs.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// lexical turns p into a cleaned path relative to the root, checking
// without touching the file system that it names the root or a path
// below it.
func (w *Workspace) lexical(p string) (string, error) {
	if p == "" {
		return "", &Error{Code: CodeInvalidInput, Message: "resolve path: the path is empty"}
	}
	if strings.ContainsRune(p, 0) {
		return "", &Error{Code: CodeInvalidInput, Message: fmt.Sprintf("resolve path: %q contains a NUL byte", p)}
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, r := range []string{w.root, w.realRoot} {
			if rel, err := filepath.Rel(r, c); err == nil && local(rel) {
				return rel, nil
			}
		}
	} else if rel := filepath.Clean(p); local(rel) {
		return rel, nil
	}
	return "", &Error{Code: CodePathOutsideWorkspace, Message: fmt.Sprintf("resolve path: %q is outside the workspace; use a path relative to the workspace root", p)}
}

// local reports whether a cleaned relative path stays at or below ".".
func local(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// escapes reports whether err is os.Root refusing a path that leads out of
// the root (a symbolic link pointing outside, or an absolute one). The
// os package does not export that error, so its text is compared; the
// workspace tests fail if it ever changes.
func escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent"
}

// missing reports whether err says nothing is at the path: it does not
// exist, a component is a regular file ("a.jpg/b"), or symbolic links
// loop.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}
