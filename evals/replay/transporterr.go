package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// TransportErrorHeader marks a recorded interaction whose request never got
// a response: the real transport failed (connection refused, or the
// caller's deadline cut the request off). Its value is the error text.
//
// go-vcr records only completed responses, so without this a run whose
// model call was cut off by the run's deadline could never be replayed.
// While recording, such a failure is stored as a synthetic response with
// status TransportErrorStatus and this header; the caller still receives
// the original error. In replay the interaction turns back into that error:
// a deadline or cancellation is replayed by waiting until the replaying
// request's own context ends — at once when the cassette was opened
// WithDeadlineClock (the harness's virtual clock moves to that deadline),
// in real time otherwise, never longer than that deadline — and any other
// error is returned at once.
const TransportErrorHeader = "X-Agenthub-Transport-Error"

// TransportErrorStatus is the status code of a recorded transport failure
// (outside the HTTP range on purpose).
const TransportErrorStatus = 599

// errHolder carries the real error of a recorded failure from
// errorRecorder back to errorReplayer through the request context, so that
// while recording the caller gets the original error value.
type errHolder struct{ err error }

type errHolderKey struct{}

// errorRecorder wraps the real transport while recording: a failed round
// trip is turned into a synthetic response that go-vcr records.
type errorRecorder struct{ rt http.RoundTripper }

func (t errorRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		// go-vcr records the body the transport reads (a tee). Read it
		// whole here, before the transport starts, and hand the transport
		// its own copy: the recorded body is complete even when the
		// connection is refused, and no goroutine of the transport is
		// still reading go-vcr's tee when a failure is recorded.
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		return resp, nil
	}
	if h, ok := r.Context().Value(errHolderKey{}).(*errHolder); ok {
		h.err = err
	}
	msg := err.Error()
	if ctxErr := r.Context().Err(); ctxErr != nil {
		msg = "context: " + ctxErr.Error()
	}
	h := http.Header{}
	h.Set(TransportErrorHeader, msg)
	return &http.Response{
		Status:     fmt.Sprintf("%d transport error", TransportErrorStatus),
		StatusCode: TransportErrorStatus,
		Header:     h,
		Body:       io.NopCloser(strings.NewReader("")),
		Request:    r,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}, nil
}

// errorReplayer is the outermost transport: it turns a recorded transport
// failure back into an error, in every mode.
type errorReplayer struct {
	rt http.RoundTripper
	// reach, when set, is called before waiting for the replaying
	// request's deadline (WithDeadlineClock): it moves a virtual clock to
	// that deadline, so that nothing waits on real time.
	reach func(context.Context)
}

func (t errorReplayer) RoundTrip(r *http.Request) (*http.Response, error) {
	holder := &errHolder{}
	resp, err := t.rt.RoundTrip(r.WithContext(context.WithValue(r.Context(), errHolderKey{}, holder)))
	if err != nil {
		return resp, err
	}
	if msg := resp.Header.Get(StreamErrorHeader); msg != "" {
		resp.Body = brokenBody{resp.Body, errors.New(msg)}
		return resp, nil
	}
	if resp.StatusCode != TransportErrorStatus {
		return resp, nil
	}
	msg := resp.Header.Get(TransportErrorHeader)
	if msg == "" {
		return resp, nil
	}
	resp.Body.Close()
	if holder.err != nil { // recording: the caller gets the real error
		return nil, holder.err
	}
	ctx := r.Context()
	if !strings.HasPrefix(msg, "context: ") {
		return nil, fmt.Errorf("replayed transport failure: %s", msg)
	}
	if _, ok := ctx.Deadline(); !ok && ctx.Err() == nil {
		return nil, fmt.Errorf("replayed transport failure: %s (the replaying request has no deadline to wait for)", msg)
	}
	if t.reach != nil && strings.HasPrefix(msg, "context: "+contextDeadline) {
		t.reach(ctx)
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// brokenBody is the body of a stream recorded with StreamErrorHeader: its
// bytes, then err where io.EOF would be.
type brokenBody struct {
	io.ReadCloser
	err error
}

func (b brokenBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		err = b.err
	}
	return n, err
}
