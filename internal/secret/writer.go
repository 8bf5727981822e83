package secret

import (
	"bytes"
	"io"
	"sync"
)

// Writer masks the findings of a Detector in what is written through it
// (console traces, JSON Lines traces). It is line-buffered: a line is
// passed on, masked, once its "\n" is written, so a key split across two
// Write calls is masked all the same; the bytes after the last "\n" wait
// for the next Write, Flush or Close. A secret that spans a line break is
// not found. Memory grows with the longest line. A Writer is safe for
// concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	d   *Detector
	buf []byte
	err error
}

// NewWriter returns a Writer that writes to w what is written to it, with
// the findings of d masked. Flush or Close must be called to pass on a
// last line without "\n".
func NewWriter(w io.Writer, d *Detector) *Writer { return &Writer{w: w, d: d} }

// Write buffers p and writes every complete line, masked. It returns
// len(p) unless an earlier or this write to the underlying writer failed;
// that error is sticky.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	w.buf = append(w.buf, p...)
	i := bytes.LastIndexByte(w.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	if err := w.pass(w.buf[:i+1]); err != nil {
		return 0, err
	}
	w.buf = append(w.buf[:0], w.buf[i+1:]...)
	return len(p), nil
}

// Flush writes the buffered partial line, masked; a secret written after
// it is matched without what was flushed.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	err := w.pass(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Close flushes the Writer. It does not close the underlying writer.
func (w *Writer) Close() error { return w.Flush() }

// pass writes chunk masked to the underlying writer, keeping its error.
func (w *Writer) pass(chunk []byte) error {
	out := chunk
	if _, ok := w.d.Find(chunk); ok {
		out = w.d.Mask(chunk)
	}
	if _, err := w.w.Write(out); err != nil {
		w.err = err
	}
	return w.err
}
