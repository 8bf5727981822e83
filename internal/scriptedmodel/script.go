// Package scriptedmodel is an OpenAI-compatible chat-completions server that
// answers each call with the next turn of a script. It is the stand-in
// provider for recording the bundled suite and for tests.
package scriptedmodel

// Turn is one scripted answer: a reply, or a fault injected instead of it.
// Scenario files embed turns under `script:`; the YAML names are stable.
type Turn struct {
	// Reply is the assistant message content returned with HTTP 200.
	Reply string `yaml:"reply,omitempty" json:"reply,omitempty"`
	// Fault, when set, replaces the reply with a failure.
	Fault *Fault `yaml:"fault,omitempty" json:"fault,omitempty"`
}

// FaultKind names a scripted model failure.
type FaultKind string

// The scripted failures.
const (
	// FaultRateLimit answers HTTP 429 (with Retry-After when RetryAfterS > 0).
	FaultRateLimit FaultKind = "rate_limit"
	// FaultServerError answers HTTP 500 with an OpenAI-style error body.
	FaultServerError FaultKind = "server_error"
	// FaultBusinessError answers HTTP 400 with a GLM-style business error
	// body ({"error":{"code":"1301","message":…}}).
	FaultBusinessError FaultKind = "business_error"
	// FaultErrorBody answers HTTP 200 with an error body and no choices.
	FaultErrorBody FaultKind = "error_body"
	// FaultMalformed answers HTTP 200 with a body that is not JSON.
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
	// Code is the provider error code to put in the body (business_error,
	// error_body); a default is used when empty.
	Code string `yaml:"code,omitempty" json:"code,omitempty"`
}
