package replay

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// wire is the transport directly above the real one while recording: it
// reads each response body to its end itself, before go-vcr buffers
// anything, so that
//   - a body over max bytes (counted as it arrives, and again after
//     inflating a body still compressed by Content-Encoding gzip or
//     deflate) stops at max+1 bytes with "response over N bytes";
//   - a body cut short (connection reset, fewer bytes than Content-Length)
//     is an error saying how many bytes came, not a silently truncated
//     recording;
//   - a body that drips until the caller's deadline ends as that deadline
//     (recorded by errorRecorder as a cut-off that replays the same way).
//
// Each failure is returned as a transport error, which errorRecorder turns
// into a recorded transport failure: the interaction is never lost, and
// Recording refuses to save a run holding one that is not a deadline.
type wire struct {
	rt  http.RoundTripper
	max int64
}

func (t wire) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.max+1))
	if err == nil && int64(len(body)) > t.max {
		err = fmt.Errorf("response over %s", byteSize(t.max))
	}
	if err == nil && resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength {
		err = fmt.Errorf("response body cut after %d of %d bytes", len(body), resp.ContentLength)
	}
	if err == nil {
		err = inflatedSize(resp.Header.Get("Content-Encoding"), body, t.max)
	}
	if err != nil {
		if ctxErr := r.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if !strings.HasPrefix(err.Error(), "response ") {
			if resp.ContentLength > 0 {
				err = fmt.Errorf("response body cut after %d of %d bytes: %w", len(body), resp.ContentLength, err)
			} else {
				err = fmt.Errorf("response body cut after %d bytes: %w", len(body), err)
			}
		}
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// inflatedSize checks that a body still compressed by its Content-Encoding
// inflates to at most max bytes, without keeping the inflated bytes.
func inflatedSize(encoding string, body []byte, max int64) error {
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("response body is not valid gzip: %w", err)
		}
		r = zr
	case "deflate":
		r = flate.NewReader(bytes.NewReader(body))
	default:
		return nil
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, max+1))
	if err != nil {
		return fmt.Errorf("response body does not inflate: %w", err)
	}
	if n > max {
		return fmt.Errorf("response over %s after inflating", byteSize(max))
	}
	return nil
}

// byteSize renders a byte count for messages: "8 MiB", "1000 bytes".
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
