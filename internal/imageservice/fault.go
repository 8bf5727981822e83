package imageservice

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// Fault is an injected image-service failure, used when recording
// scenarios that exercise the image_scaling tool's error paths. Scenario
// files embed faults under `image_faults:`; the YAML names are stable.
type Fault struct {
	// Call is the 1-based number of the /resize request to fail.
	Call int `yaml:"call" json:"call"`
	// Status is the HTTP status to answer with (for example 503).
	Status int `yaml:"status" json:"status"`
	// RetryAfterS is the Retry-After header value in seconds (0: none).
	RetryAfterS int `yaml:"retry_after_s,omitempty" json:"retry_after_s,omitempty"`
}

// validate reports whether f can be injected: Call at least 1, Status an
// HTTP error status (400–599) and RetryAfterS not negative.
func (f Fault) validate() error {
	if f.Call < 1 {
		return fmt.Errorf("image fault: call %d is not a 1-based request number", f.Call)
	}
	if f.Status < 400 || f.Status > 599 {
		return fmt.Errorf("image fault: status %d is not an HTTP error status (400-599)", f.Status)
	}
	if f.RetryAfterS < 0 {
		return fmt.Errorf("image fault: retry_after_s %d is negative", f.RetryAfterS)
	}
	return nil
}

// faultCode is the error code an injected fault answers with: the code the
// real service uses for that status, "busy" for 503.
func faultCode(status int) Code {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalidRequest
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		return CodePayloadTooLarge
	case http.StatusUnsupportedMediaType:
		return CodeUnsupportedFormat
	case http.StatusUnprocessableEntity:
		return CodeImageTooLarge
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return CodeBusy
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return CodeTimeout
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeInvalidRequest
}

// maxFaultDrain bounds the request body an injected fault reads and
// discards (so the client sees the answer rather than a reset connection).
const maxFaultDrain = 32 << 20

// faultInjector answers chosen /resize calls with a fault.
type faultInjector struct {
	next   http.Handler
	faults map[int]Fault // by Call
	calls  atomic.Int64  // /resize requests seen
}

// CheckFaults returns, for each fault of the list, what keeps it from
// being injected (nil when nothing does): a Call below 1, a Status that is
// not an HTTP error status (400–599), a negative RetryAfterS, or a Call
// that an earlier fault of the list already fails ("call N is failed by
// an earlier fault"). The scenario loader reports these errors at the
// fault's line; WithFaults accepts only a list without any. Errors start
// with "image fault: ".
func CheckFaults(faults []Fault) []error {
	errs := make([]error, len(faults))
	seen := make(map[int]bool, len(faults))
	for i, f := range faults {
		if err := f.validate(); err != nil {
			errs[i] = err
			continue
		}
		if seen[f.Call] {
			errs[i] = fmt.Errorf("image fault: call %d is failed by an earlier fault (one fault per call)", f.Call)
			continue
		}
		seen[f.Call] = true
	}
	return errs
}

// WithFaults wraps h so that the Nth request to path /resize (counting
// from 1, every method, in arrival order) is answered with the fault whose
// Call is N instead of reaching h: its Status, a Retry-After header when
// RetryAfterS > 0, and a JSON error body whose code is "busy" for 503 and
// 429, "timeout" for 408 and 504, "internal" for other 5xx, and the code
// the service uses for that status otherwise (413 payload_too_large, 415
// unsupported_format, 422 image_too_large, 400 invalid_request). Other
// calls and other paths pass through to h. The faults must pass
// CheckFaults (the scenario loader checks them where they are written):
// WithFaults panics otherwise rather than drop a fault unnoticed. The
// wrapper is safe for concurrent use; with concurrent callers, "Nth" is
// the order the requests arrived in.
func WithFaults(h http.Handler, faults []Fault) http.Handler {
	if err := errors.Join(CheckFaults(faults)...); err != nil {
		panic("imageservice: WithFaults: " + err.Error())
	}
	fi := &faultInjector{next: h, faults: make(map[int]Fault, len(faults))}
	for _, f := range faults {
		fi.faults[f.Call] = f
	}
	return fi
}

func (fi *faultInjector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/resize" {
		fi.next.ServeHTTP(w, r)
		return
	}
	n := int(fi.calls.Add(1))
	f, ok := fi.faults[n]
	if !ok {
		fi.next.ServeHTTP(w, r)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxFaultDrain))
	e := newError(f.Status, faultCode(f.Status),
		fmt.Sprintf("resize: injected fault for call %d: %d %s", n, f.Status, http.StatusText(f.Status)))
	e.retryAfter = f.RetryAfterS
	writeError(w, e)
}
