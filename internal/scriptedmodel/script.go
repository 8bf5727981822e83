// Package scriptedmodel is an OpenAI-compatible chat-completions server that
// answers each call with the next turn of a script. It is the stand-in
// provider for recording the bundled suite and for tests.
package scriptedmodel

import (
	"fmt"
	"strings"
)

// Turn is one scripted answer: a reply, or a fault injected instead of it.
// Scenario files embed turns under `script:`; the YAML names are stable.
type Turn struct {
	// Reply is the assistant message content returned with HTTP 200,
	// verbatim: the server does not apply the request's stop sequence, so a
	// script can exercise the client-side cut.
	Reply string `yaml:"reply,omitempty" json:"reply,omitempty"`
	// FinishReason is the finish_reason of the reply (default "stop"); set
	// it to "length", "sensitive", "network_error", … to script those.
	FinishReason string `yaml:"finish_reason,omitempty" json:"finish_reason,omitempty"`
	// Fault, when set, replaces the reply with a failure.
	Fault *Fault `yaml:"fault,omitempty" json:"fault,omitempty"`
}

// FaultKind names a scripted model failure.
type FaultKind string

// The scripted failures.
const (
	// FaultRateLimit answers HTTP 429 with a GLM-style body (code "1302"
	// unless Code is set; "1113" scripts a non-retryable quota error), with
	// Retry-After when RetryAfterS > 0.
	FaultRateLimit FaultKind = "rate_limit"
	// FaultServerError answers HTTP 500 with an OpenAI-style error body
	// (null code).
	FaultServerError FaultKind = "server_error"
	// FaultBusinessError answers HTTP 400 with a GLM-style business error
	// body ({"error":{"code":"1301","message":…}}; Code overrides 1301).
	FaultBusinessError FaultKind = "business_error"
	// FaultErrorBody answers HTTP 200 with an error body and no choices
	// (code "1234", GLM's network error, unless Code is set).
	FaultErrorBody FaultKind = "error_body"
	// FaultMalformed answers HTTP 200 with a JSON body cut short.
	FaultMalformed FaultKind = "malformed"
	// FaultSlow waits DelayMS before answering with Reply (for deadline
	// scenarios); the wait ends early if the client goes away.
	FaultSlow FaultKind = "slow"
)

// Fault is an injected model failure.
type Fault struct {
	// Kind is the failure to inject.
	Kind FaultKind `yaml:"kind" json:"kind"`
	// RetryAfterS is the Retry-After header value in seconds (rate_limit).
	RetryAfterS int `yaml:"retry_after_s,omitempty" json:"retry_after_s,omitempty"`
	// DelayMS is the delay before answering, in milliseconds (slow).
	DelayMS int `yaml:"delay_ms,omitempty" json:"delay_ms,omitempty"`
	// Code is the provider error code to put in the body (rate_limit,
	// business_error, error_body); a default is used when empty.
	Code string `yaml:"code,omitempty" json:"code,omitempty"`
}

// validate reports what is wrong with the turn: an unknown fault kind, a
// negative delay or Retry-After, fields that the fault ignores, or a turn
// with neither a reply, a finish reason nor a fault.
func (t Turn) validate() error {
	if t.Fault == nil {
		if t.Reply == "" && t.FinishReason == "" {
			return fmt.Errorf("turn has neither reply nor fault")
		}
		return nil
	}
	f := t.Fault
	if f.RetryAfterS < 0 {
		return fmt.Errorf("fault %s: retry_after_s %d is negative", f.Kind, f.RetryAfterS)
	}
	if f.DelayMS < 0 {
		return fmt.Errorf("fault %s: delay_ms %d is negative", f.Kind, f.DelayMS)
	}
	switch f.Kind {
	case FaultSlow:
		if t.Reply == "" && t.FinishReason == "" {
			return fmt.Errorf("fault slow: needs the reply to send after the delay")
		}
	case FaultRateLimit, FaultServerError, FaultBusinessError, FaultErrorBody, FaultMalformed:
		if t.Reply != "" || t.FinishReason != "" {
			return fmt.Errorf("fault %s: reply and finish_reason are not sent with this fault (only with slow)", f.Kind)
		}
	case "":
		return fmt.Errorf("fault: kind is missing (want one of %s)", kindList)
	default:
		return fmt.Errorf("fault: unknown kind %q (want one of %s)", f.Kind, kindList)
	}
	if f.RetryAfterS != 0 && f.Kind != FaultRateLimit {
		return fmt.Errorf("fault %s: retry_after_s only applies to rate_limit", f.Kind)
	}
	if f.DelayMS != 0 && f.Kind != FaultSlow {
		return fmt.Errorf("fault %s: delay_ms only applies to slow", f.Kind)
	}
	if f.Code != "" && f.Kind != FaultRateLimit && f.Kind != FaultBusinessError && f.Kind != FaultErrorBody {
		return fmt.Errorf("fault %s: code only applies to rate_limit, business_error and error_body", f.Kind)
	}
	return nil
}

// faultKinds returns every fault kind in a fixed order (rate_limit,
// server_error, business_error, error_body, malformed, slow); the slice is
// fresh on every call.
func faultKinds() []FaultKind {
	return []FaultKind{FaultRateLimit, FaultServerError, FaultBusinessError, FaultErrorBody, FaultMalformed, FaultSlow}
}

// kindList is faultKinds for messages: "rate_limit, server_error, …".
var kindList = func() string {
	kinds := faultKinds()
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}()
