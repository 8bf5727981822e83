package replay

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/agenthub/agent/llm"
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
	start := time.Now()
	resp, err := t.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body []byte
	if isEventStream(resp.Header) {
		var offsets []int64
		body, offsets, err = readEvents(resp.Body, t.max, start)
		resp.Header.Set(EventTimesHeader, formatOffsets(offsets))
		if err != nil && r.Context().Err() == nil && !strings.HasPrefix(err.Error(), "response ") {
			// The provider broke the stream off: what came is its answer,
			// kept with the break (see StreamErrorHeader).
			resp.Header.Set(StreamErrorHeader, err.Error())
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			return resp, nil
		}
	} else {
		body, err = io.ReadAll(io.LimitReader(resp.Body, t.max+1))
	}
	if err == nil && int64(len(body)) > t.max {
		err = fmt.Errorf("response over %s", byteSize(t.max))
	}
	if err == nil && resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength && !isEventStream(resp.Header) {
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
	_, err := inflate(encoding, body, max, io.Discard)
	return err
}

// inflate writes to w the body a Content-Encoding of gzip or deflate
// compresses, at most max bytes of it, and reports whether the encoding was
// one of those. "deflate" is the zlib format (RFC 9110 §8.4.1.2); a raw
// deflate stream, which some servers send instead, is accepted too.
func inflate(encoding string, body []byte, max int64, w io.Writer) (bool, error) {
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return true, fmt.Errorf("response body is not valid gzip: %w", err)
		}
		r = zr
	case "deflate":
		if zr, err := zlib.NewReader(bytes.NewReader(body)); err == nil {
			r = zr
		} else {
			r = flate.NewReader(bytes.NewReader(body))
		}
	default:
		return false, nil
	}
	n, err := io.Copy(w, io.LimitReader(r, max+1))
	if err != nil {
		return true, fmt.Errorf("response body does not inflate: %w", err)
	}
	if n > max {
		return true, fmt.Errorf("response over %s after inflating", byteSize(max))
	}
	return true, nil
}

// byteSize renders a byte count for messages: "8 MiB", "1000 bytes".
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// EventTimesHeader is the response header a recorded server-sent-event
// stream carries: the arrival time of each event (each block ended by a
// blank line), in whole milliseconds since the request was sent, separated
// by spaces. go-vcr records a response body whole, so the stream itself is
// kept byte for byte in the body and its timing here; replay serves the
// whole body at once (the client reads the events in order, nothing
// sleeps), and reports read time to first token from the first offset
// (InteractionInfo.EventMS).
const EventTimesHeader = "X-Agenthub-Event-Ms"

// StreamErrorHeader marks a recorded server-sent-event stream that broke
// off before its end (the connection closed or reset mid-body, after the
// headers): the body holds the events that came, and the value is the read
// error's text. The caller reads those events and then an error with that
// text, while recording and in replay alike, so that a stream cut before
// "data: [DONE]" is recorded as what the provider did instead of being
// refused as a lost response.
const StreamErrorHeader = "X-Agenthub-Stream-Error"

// isEventStream reports whether a response is a server-sent-event stream
// by its Content-Type, as the model client decides it (llm.IsEventStream).
func isEventStream(h http.Header) bool { return llm.IsEventStream(h.Get("Content-Type"), nil) }

// readEvents reads a stream body to its end (at most max bytes) and notes
// when each event's terminating blank line arrived.
func readEvents(r io.Reader, max int64, start time.Time) ([]byte, []int64, error) {
	var (
		body    []byte
		offsets []int64
		buf     = make([]byte, 32<<10)
		scan    int // where the search for the next blank line resumes
	)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if int64(len(body)+n) > max {
				return body, offsets, fmt.Errorf("response over %s", byteSize(max))
			}
			body = append(body, buf[:n]...)
			ms := time.Since(start).Milliseconds()
			for {
				i := eventEnd(body[scan:])
				if i < 0 {
					break
				}
				done := isDoneEvent(body[scan : scan+i])
				scan += i
				offsets = append(offsets, ms)
				if done {
					// The stream's own end: a provider that keeps the
					// connection open after it (pings, a slow close) has
					// answered in full; what follows is not read.
					return body[:scan], offsets, nil
				}
			}
		}
		if err == io.EOF {
			return body, offsets, nil
		}
		if err != nil {
			return body, offsets, err
		}
	}
}

// isDoneEvent reports whether an event block is the chat-completions
// stream's terminator, "data: [DONE]".
func isDoneEvent(ev []byte) bool {
	for _, line := range bytes.FieldsFunc(ev, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok && string(bytes.TrimSpace(v)) == "[DONE]" {
			return true
		}
	}
	return false
}

// eventEnd returns the index just after the first blank line that ends an
// event in b ("\n\n", "\r\n\r\n" or "\r\r", per the WHATWG HTML
// event-stream format), or -1.
func eventEnd(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		switch {
		case b[i] == '\n' && b[i+1] == '\n':
			return i + 2
		case b[i] == '\r' && b[i+1] == '\r':
			return i + 2
		case b[i] == '\r' && b[i+1] == '\n' && i+3 < len(b) && b[i+2] == '\r' && b[i+3] == '\n':
			return i + 4
		}
	}
	return -1
}

func formatOffsets(offsets []int64) string {
	parts := make([]string, len(offsets))
	for i, o := range offsets {
		parts[i] = strconv.FormatInt(o, 10)
	}
	return strings.Join(parts, " ")
}

// parseOffsets reads EventTimesHeader; a damaged value gives nil.
func parseOffsets(v string) []int64 {
	if v == "" {
		return nil
	}
	fields := strings.Fields(v)
	out := make([]int64, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return nil
		}
		out = append(out, n)
	}
	return out
}
