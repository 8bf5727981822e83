package replay

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Size limits of the small files of a recording (cassettes have
// DefaultMaxCassetteBytes).
const (
	// maxMetaBytes caps meta.json.
	maxMetaBytes = 1 << 20
	// maxDecisionsBytes caps decisions.json.
	maxDecisionsBytes = 64 << 20
	// maxJournalBytes caps a swap journal.
	maxJournalBytes = 4 << 10
)

// readRegular reads name inside root when it is a regular file of at most
// max bytes (what names the limit in messages: "cassette", "meta.json"). Anything else — a folder, a FIFO, a device, a symlink (os.Root
// follows none that leaves root, and this refuses the rest), a file over the
// limit — is an error naming the file (path, for messages) and what it is,
// before any byte is read: a FIFO put where a cassette belongs cannot hang
// the run. The file is opened non-blocking, so one swapped in after the
// check cannot hang it either.
func readRegular(root *os.Root, name, path string, max int64, what string) ([]byte, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if err := regularWithin(fi, path, max, what); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regularWithin(fi, path, max, what); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over the %d-byte %s limit", path, max, what)
	}
	return data, nil
}

func regularWithin(fi os.FileInfo, path string, max int64, what string) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > max {
		return fmt.Errorf("%s is %d bytes, over the %d-byte %s limit", path, fi.Size(), max, what)
	}
	return nil
}
