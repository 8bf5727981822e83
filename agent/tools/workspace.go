package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Workspace is the folder a file-touching tool may read and write. Every
// path a model supplies goes through Resolve, which keeps it inside the
// root. The check is lexical plus a symlink check of the deepest existing
// prefix; it guards against a model's mistakes and prompt-injected paths,
// not against a concurrent local attacker swapping symlinks.
type Workspace struct {
	root     string // absolute, cleaned
	realRoot string // root with symlinks evaluated
}

// NewWorkspace returns the workspace rooted at root (made absolute). The
// root must be an existing directory.
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
	return &Workspace{root: abs, realRoot: real}, nil
}

// Root returns the absolute path of the workspace root.
func (w *Workspace) Root() string { return w.root }

// Resolve turns a model-supplied path (relative to the root, optionally
// with a leading "./", or absolute inside the root) into an absolute path
// inside the root. The returned path keeps the model's spelling below the
// root; symlinks in it are allowed as long as they stay inside the root.
//
// Errors are *Error: invalid_input for an empty path or one with a NUL
// byte, path_outside_workspace for ".." escapes, absolute paths outside
// the root and symlinks that leave it, file_not_found when nothing exists
// at the path (the message names the path as the model wrote it).
func (w *Workspace) Resolve(p string) (string, error) {
	abs, err := w.resolveLexical(p)
	if err != nil {
		return "", err
	}
	exists, err := w.checkSymlinks(p, abs)
	if err != nil {
		return "", err
	}
	if !exists {
		return "", &Error{Code: CodeFileNotFound, Message: fmt.Sprintf("resolve path: %q does not exist in the workspace", p)}
	}
	return abs, nil
}

// Rel returns the workspace-relative slash path of an absolute path inside
// the root ("." for the root itself). A path outside the root is returned
// unchanged.
func (w *Workspace) Rel(abs string) string {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil || !local(rel) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// resolveLexical makes p absolute and checks, without touching the file
// system, that it stays inside the root.
func (w *Workspace) resolveLexical(p string) (string, error) {
	if p == "" {
		return "", &Error{Code: CodeInvalidInput, Message: "resolve path: the path is empty"}
	}
	if strings.ContainsRune(p, 0) {
		return "", &Error{Code: CodeInvalidInput, Message: fmt.Sprintf("resolve path: %q contains a NUL byte", p)}
	}
	outside := &Error{Code: CodePathOutsideWorkspace, Message: fmt.Sprintf("resolve path: %q is outside the workspace; use a path relative to the workspace root", p)}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, r := range []string{w.root, w.realRoot} {
			if rel, err := filepath.Rel(r, c); err == nil && local(rel) {
				return filepath.Join(w.root, rel), nil
			}
		}
		return "", outside
	}
	c := filepath.Join(w.root, p)
	rel, err := filepath.Rel(w.root, c)
	if err != nil || !local(rel) {
		return "", outside
	}
	return c, nil
}

// checkSymlinks evaluates the symlinks of the deepest existing prefix of
// abs and refuses the path if they lead outside the root. It reports
// whether abs itself exists.
func (w *Workspace) checkSymlinks(p, abs string) (bool, error) {
	outside := &Error{Code: CodePathOutsideWorkspace, Message: fmt.Sprintf("resolve path: %q leads outside the workspace through a symbolic link", p)}
	q := abs
	for {
		if _, err := os.Lstat(q); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
			return false, &Error{Code: CodeInvalidInput, Message: fmt.Sprintf("resolve path: %q: %v", p, err), Err: err}
		}
		parent := filepath.Dir(q)
		if parent == q || !w.inside(parent, w.root) {
			// Nothing exists down to the root: the root itself vanished.
			return false, nil
		}
		q = parent
	}
	real, err := filepath.EvalSymlinks(q)
	if err != nil {
		// q exists but does not resolve: a dangling symlink (or a loop).
		// Refuse it if its target lies outside; otherwise it is missing.
		if target, lerr := os.Readlink(q); lerr == nil {
			if !filepath.IsAbs(target) {
				dir, derr := filepath.EvalSymlinks(filepath.Dir(q))
				if derr != nil {
					return false, nil
				}
				target = filepath.Join(dir, target)
			}
			if !w.inside(filepath.Clean(target), w.realRoot) {
				return false, outside
			}
		}
		return false, nil
	}
	if !w.inside(real, w.realRoot) {
		return false, outside
	}
	return q == abs, nil
}

// inside reports whether path is root or below it (both cleaned).
func (w *Workspace) inside(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && local(rel)
}

// local reports whether a cleaned relative path stays at or below ".".
func local(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// isNotDir reports whether err says a path component is a regular file
// ("a.jpg/b"), which for our purpose means the path does not exist.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
