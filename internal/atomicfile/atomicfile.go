// Package atomicfile writes files so that a reader sees either the old
// content or the whole new one, never a partial file.
//
// Two functions, for two kinds of path:
//   - [Write] is for files the program owns (cassette metadata, recorded
//     decisions in a staging folder): whatever is at the path, a symlink
//     included, is replaced by a renamed temporary file.
//   - [WriteTarget] is for a path a user named (report files, baselines):
//     a regular file is replaced the same way, but a FIFO, a device or a
//     descriptor such as /dev/stdout is written in place, and a symlink is
//     followed rather than replaced. Every file cmd/agenthub writes for a
//     flag goes through it.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// Write writes a file by calling write on a temporary file in the
// same directory and renaming it over path, so readers never see a partial
// file. The file gets mode 0644. On error the temporary file is removed and
// path is untouched.
func Write(path string, write func(w io.Writer) error) error {
	if err := replace(path, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteTarget writes the file a user named at path by calling write:
//   - a regular file, or a name that does not exist yet, is written as by
//     [Write] (atomically, mode 0644);
//   - a symlink is followed, through any number of links, and the file it
//     points to is written by these rules (created when missing); the link
//     stays a link;
//   - anything else that can be opened for writing (a FIFO, a character
//     device such as /dev/null or a terminal, a socket) and a file
//     descriptor alias (/dev/stdout, /dev/fd/N, /proc/PID/fd/N, whatever it
//     refers to) is opened without creating or truncating it and written in
//     place, appending: such a file cannot be replaced without breaking
//     whoever holds it open;
//   - a directory is an error.
//
// Errors start with "write PATH:" (PATH as given).
func WriteTarget(path string, write func(w io.Writer) error) error {
	if err := writeTarget(path, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeTarget(path string, write func(w io.Writer) error) error {
	target, alias, err := resolve(path)
	if err != nil {
		return err
	}
	if alias {
		return writeInPlace(target, write)
	}
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode().IsRegular():
		return replace(target, write)
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", target)
	}
	return writeInPlace(target, write)
}

// maxLinks bounds the symlinks resolve follows (the kernel's own limit).
const maxLinks = 40

// fdDir matches the directories whose entries are aliases of a process's
// open files: their links point at pipes and terminals by pseudo-names, and
// at regular files whose other holders (a shell's "> file") would lose their
// writes if the file were replaced.
var fdDir = regexp.MustCompile(`^(/proc/[^/]+|/dev)/fd$`)

// resolve follows the symlinks at path's last element and returns the name
// that is not a link (it may not exist), with its directory resolved, or a
// file-descriptor alias (alias true) it must not look behind.
func resolve(path string) (target string, alias bool, err error) {
	for range maxLinks {
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil {
			return "", false, err
		}
		path = filepath.Join(dir, filepath.Base(path))
		if fdDir.MatchString(dir) {
			return path, true, nil
		}
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return path, false, nil
		}
		if err != nil {
			return "", false, err
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", false, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(dir, link)
		}
		path = link
	}
	return "", false, fmt.Errorf("more than %d symlinks", maxLinks)
}

// writeInPlace writes to an existing file that must not be replaced.
func writeInPlace(path string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replace writes path through a renamed temporary file in its directory.
func replace(path string, write func(w io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
