package tools

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// sandbox is a workspace with a few files and an outside folder that
// symlinks try to reach.
type sandbox struct {
	ws      *Workspace
	root    string
	outside string
}

// newSandbox builds root/{a.txt, sub/b.txt, sub/inner -> ../a.txt,
// leak.txt -> OUT/secret.txt, outdir -> OUT, dangling -> OUT/missing,
// loop -> loop} and OUT/secret.txt.
func newSandbox(t testing.TB) sandbox {
	t.Helper()
	root, outside := t.TempDir(), t.TempDir()
	write := func(p string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	write(filepath.Join(root, "a.txt"))
	write(filepath.Join(root, "sub", "b.txt"))
	write(filepath.Join(root, "with space", "c d.txt"))
	write(filepath.Join(outside, "secret.txt"))
	require.NoError(t, os.Symlink("../a.txt", filepath.Join(root, "sub", "inner")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak.txt")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "outdir")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "missing"), filepath.Join(root, "dangling")))
	require.NoError(t, os.Symlink("gone", filepath.Join(root, "dangling-inside")))
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	return sandbox{ws: ws, root: ws.Root(), outside: outside}
}

// errCode returns the Code of a *Error, "" for nil and "<not *Error>"
// for any other error.
func errCode(err error) Code {
	if err == nil {
		return ""
	}
	var te *Error
	if !errors.As(err, &te) {
		return "<not *Error>"
	}
	return te.Code
}

// resolve is stat's path as a slash path: what the tests compare.
func resolve(ws *Workspace, p string) (string, error) {
	rel, _, err := ws.stat(p)
	return filepath.ToSlash(rel), err
}

func TestResolve(t *testing.T) {
	sb := newSandbox(t)
	tests := []struct {
		name     string
		path     string
		want     string // workspace-relative result when ok
		wantCode Code
		reason   string
	}{
		{name: "relative", path: "a.txt", want: "a.txt", reason: "the ordinary case"},
		{name: "dot slash", path: "./sub/b.txt", want: "sub/b.txt", reason: "models often write ./"},
		{name: "spaces", path: "with space/c d.txt", want: "with space/c d.txt", reason: "spaces are part of names"},
		{name: "inner dotdot", path: "sub/../a.txt", want: "a.txt", reason: ".. that stays inside is fine"},
		{name: "root", path: ".", want: ".", reason: "the root itself exists"},
		{name: "absolute inside", path: filepath.Join(sb.root, "sub", "b.txt"), want: "sub/b.txt", reason: "absolute paths inside the root are allowed"},
		{name: "symlink inside", path: "sub/inner", want: "sub/inner", reason: "a symlink to a file inside stays allowed"},
		{name: "dotdot escape", path: "../x.txt", wantCode: CodePathOutsideWorkspace, reason: "lexical escape"},
		{name: "deep dotdot escape", path: "sub/../../" + filepath.Base(sb.outside) + "/secret.txt", wantCode: CodePathOutsideWorkspace, reason: "escape after descending"},
		{name: "absolute outside", path: filepath.Join(sb.outside, "secret.txt"), wantCode: CodePathOutsideWorkspace, reason: "absolute path elsewhere"},
		{name: "absolute etc", path: "/etc/passwd", wantCode: CodePathOutsideWorkspace, reason: "the classic"},
		{name: "symlink file escape", path: "leak.txt", wantCode: CodePathOutsideWorkspace, reason: "a symlink to a file outside"},
		{name: "symlink dir escape", path: "outdir/secret.txt", wantCode: CodePathOutsideWorkspace, reason: "a symlinked folder outside"},
		{name: "symlink dir escape missing file", path: "outdir/nothing.txt", wantCode: CodePathOutsideWorkspace, reason: "the deepest existing prefix is the escaping link"},
		{name: "dangling symlink escape", path: "dangling", wantCode: CodePathOutsideWorkspace, reason: "a dangling link pointing outside"},
		{name: "dangling symlink inside", path: "dangling-inside", wantCode: CodeFileNotFound, reason: "a dangling link inside is just missing"},
		{name: "missing", path: "nope.jpg", wantCode: CodeFileNotFound, reason: "nothing there"},
		{name: "missing folder", path: "no/such/dir/x.jpg", wantCode: CodeFileNotFound, reason: "walks up to the root"},
		{name: "through a file", path: "a.txt/x", wantCode: CodeFileNotFound, reason: "a file used as a folder"},
		{name: "empty", path: "", wantCode: CodeInvalidInput, reason: "nothing to resolve"},
		{name: "nul", path: "a\x00.txt", wantCode: CodeInvalidInput, reason: "NUL bytes never name a file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolve(sb.ws, tt.path)
			if diff := cmp.Diff(tt.wantCode, errCode(err)); diff != "" {
				t.Fatalf("resolve(%q) code mismatch (-want +got):\n%s\nerr: %v\nreason: %s", tt.path, diff, err, tt.reason)
			}
			if tt.wantCode != "" {
				if tt.wantCode == CodeFileNotFound {
					require.Contains(t, err.Error(), tt.path, "the message names the path as written")
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("resolve(%q) mismatch (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestNewWorkspace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		name    string
		root    string
		wantErr bool
	}{
		{name: "directory", root: dir},
		{name: "missing", root: filepath.Join(dir, "missing"), wantErr: true},
		{name: "file", root: file, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := NewWorkspace(tt.root)
			if tt.wantErr {
				require.Error(t, err)
				require.Contains(t, err.Error(), "new workspace: ")
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.root, ws.Root()); diff != "" {
				t.Errorf("Root mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkspaceSymlinkedRoot(t *testing.T) {
	// A root reached through a symlink (macOS /tmp, say) still accepts
	// absolute paths spelled through the real location.
	real := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(real, "a.txt"), nil, 0o644))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	ws, err := NewWorkspace(link)
	require.NoError(t, err)
	realRoot, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	for _, p := range []string{"a.txt", filepath.Join(link, "a.txt"), filepath.Join(realRoot, "a.txt")} {
		got, err := resolve(ws, p)
		require.NoError(t, err, p)
		if diff := cmp.Diff("a.txt", got); diff != "" {
			t.Errorf("resolve(%q) mismatch (-want +got):\n%s", p, diff)
		}
	}
}

func TestResolveThroughRoot(t *testing.T) {
	// Symbolic links os.Root refuses: absolute ones, even to a file
	// inside, and relative ones that climb out.
	sb := newSandbox(t)
	require.NoError(t, os.Symlink(filepath.Join(sb.root, "a.txt"), filepath.Join(sb.root, "abs-inside")))
	require.NoError(t, os.Symlink(filepath.Join("..", "..", filepath.Base(sb.outside), "secret.txt"), filepath.Join(sb.root, "sub", "climb")))
	require.NoError(t, os.Symlink("loop", filepath.Join(sb.root, "loop")))
	tests := []struct {
		path     string
		wantCode Code
	}{
		{"abs-inside", CodePathOutsideWorkspace},
		{"sub/climb", CodePathOutsideWorkspace},
		{"outdir/../a.txt", ""}, // cleaned lexically to a.txt, as before
		{"loop", CodeFileNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := resolve(sb.ws, tt.path)
			if diff := cmp.Diff(tt.wantCode, errCode(err)); diff != "" {
				t.Errorf("resolve(%q) code mismatch (-want +got):\n%s\nerr: %v", tt.path, diff, err)
			}
		})
	}
}

func TestReadRegularAfterSwap(t *testing.T) {
	// What Resolve saw is not trusted: a file swapped for a link to the
	// outside, a parent folder swapped for such a link, or a FIFO, between
	// the stat and the read, is refused (and the FIFO does not block).
	tests := []struct {
		name  string
		swap  func(t *testing.T, sb sandbox)
		check func(t *testing.T, err error)
	}{
		{"file becomes a link out", func(t *testing.T, sb sandbox) {
			p := filepath.Join(sb.root, "sub", "b.txt")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink(filepath.Join(sb.outside, "secret.txt"), p))
		}, func(t *testing.T, err error) { require.True(t, escapes(err), "err %v", err) }},
		{"folder becomes a link out", func(t *testing.T, sb sandbox) {
			require.NoError(t, os.Rename(filepath.Join(sb.root, "sub"), filepath.Join(sb.root, "sub.old")))
			require.NoError(t, os.WriteFile(filepath.Join(sb.outside, "b.txt"), []byte("secret"), 0o644))
			require.NoError(t, os.Symlink(sb.outside, filepath.Join(sb.root, "sub")))
		}, func(t *testing.T, err error) { require.True(t, escapes(err), "err %v", err) }},
		{"file becomes a FIFO", func(t *testing.T, sb sandbox) {
			p := filepath.Join(sb.root, "sub", "b.txt")
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		}, func(t *testing.T, err error) { require.ErrorIs(t, err, errNotRegular) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := newSandbox(t)
			rel, fi, err := sb.ws.stat("sub/b.txt")
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular())
			tt.swap(t, sb)
			data, err := sb.ws.readRegular(rel, 1<<20)
			require.Nil(t, data)
			tt.check(t, err)
		})
	}
}
