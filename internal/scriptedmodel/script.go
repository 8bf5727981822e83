// Package scriptedmodel is an OpenAI-compatible chat-completions server that
// answers each call with the next turn of a script, plainly or as an SSE
// stream. It is the stand-in provider for recording the bundled suite and
// for tests.
//
// A script is a YAML list of turns (see DecodeTurn):
//
//	# turns.yaml
//	- reply: "Thought: scale it\nAction: image_scaling\nAction Input: cat.png 100"
//	- reasoning: "The user wants cat.png at width 100, then an echo."
//	  reply: "Scaling, then echoing."        # content beside the calls (optional)
//	  tool_calls:
//	    - name: image_scaling                 # no id: call_2_0 (turn 2, call 0)
//	      arguments: {path: cat.png, width: 100}
//	    - id: call_echo
//	      name: echo
//	      arguments: '{"text": "done"'        # a string is sent as written: invalid JSON
//	- reply: "Final Answer: partial"
//	  fault: {kind: stream_cut, after_chunks: 3}
//	- fault: {kind: rate_limit, retry_after_s: 2}
package scriptedmodel

import (
	"fmt"
	"strconv"
	"strings"
)

// Turn is one scripted answer: a reply (content, reasoning, tool calls), or
// a fault injected instead of it. Scenario files embed turns under
// `script:`; the YAML names are stable.
type Turn struct {
	// Reply is the assistant message content returned with HTTP 200,
	// verbatim: the server does not apply the request's stop sequence, so a
	// script can exercise the client-side cut. Beside ToolCalls it is the
	// content sent with the calls (may be empty).
	Reply string `yaml:"reply,omitempty" json:"reply,omitempty"`
	// Reasoning is the reasoning_content sent beside the reply (DeepSeek,
	// GLM and other reasoning models); empty sends none.
	Reasoning string `yaml:"reasoning,omitempty" json:"reasoning,omitempty"`
	// ToolCalls are the native tool calls of the reply, in order. They are
	// sent as scripted, whether or not the request offered those tools.
	ToolCalls []ToolCall `yaml:"tool_calls,omitempty" json:"tool_calls,omitempty"`
	// FinishReason is the finish_reason of the reply (default "tool_calls"
	// when ToolCalls is set, else "stop"); set it to "length", "sensitive",
	// "network_error", … to script those.
	FinishReason string `yaml:"finish_reason,omitempty" json:"finish_reason,omitempty"`
	// Fault, when set, replaces the reply with a failure.
	Fault *Fault `yaml:"fault,omitempty" json:"fault,omitempty"`
}

// ToolCall is one scripted native tool call (type "function").
type ToolCall struct {
	// ID is the call's id; empty sends "call_<turn>_<index>" (turn 1-based,
	// index 0-based as on the wire), e.g. "call_1_0".
	ID string `yaml:"id,omitempty" json:"id,omitempty"`
	// Name is the function name, required; it need not be a tool the
	// request offered.
	Name string `yaml:"name" json:"name"`
	// Arguments is the arguments text sent, byte for byte: in a script, a
	// YAML/JSON mapping or list is sent as compact JSON (keys in the order
	// written), a string as written (so invalid JSON can be scripted), and
	// a missing arguments field as "{}".
	Arguments string `yaml:"arguments" json:"arguments"`
}

// callID is the id sent for the i-th (0-based) call of the turn-th
// (1-based) turn: c.ID, or "call_<turn>_<i>" when it is empty.
func (c ToolCall) callID(turn, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return "call_" + strconv.Itoa(turn) + "_" + strconv.Itoa(i)
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
	// (code "1234", GLM's network error, unless Code is set); a streaming
	// call gets that body as its only event, without [DONE].
	FaultErrorBody FaultKind = "error_body"
	// FaultMalformed answers HTTP 200 with a JSON body cut short; a
	// streaming call gets the first chunk cut short as its only event,
	// then [DONE].
	FaultMalformed FaultKind = "malformed"
	// FaultSlow waits DelayMS before answering with the reply (for deadline
	// scenarios); the wait ends early if the client goes away.
	FaultSlow FaultKind = "slow"
	// FaultStreamCut sends the first AfterChunks chunks of the streamed
	// reply, then closes the connection without "data: [DONE]"; a
	// non-streaming call gets the first half of the JSON body, then the
	// connection is closed.
	FaultStreamCut FaultKind = "stream_cut"
)

// Fault is an injected model failure.
type Fault struct {
	// Kind is the failure to inject.
	Kind FaultKind `yaml:"kind" json:"kind"`
	// RetryAfterS is the Retry-After header value in seconds (rate_limit).
	RetryAfterS int `yaml:"retry_after_s,omitempty" json:"retry_after_s,omitempty"`
	// DelayMS is the delay before answering, in milliseconds (slow), at
	// most MaxDelayMS.
	DelayMS int `yaml:"delay_ms,omitempty" json:"delay_ms,omitempty"`
	// Code is the provider error code to put in the body (rate_limit,
	// business_error, error_body); a default is used when empty.
	Code string `yaml:"code,omitempty" json:"code,omitempty"`
	// AfterChunks is how many SSE chunks are sent before the cut
	// (stream_cut; default 0: none). The role chunk counts; a count beyond
	// the stream's chunks sends them all, still without [DONE].
	AfterChunks int `yaml:"after_chunks,omitempty" json:"after_chunks,omitempty"`
}

// validate reports what is wrong with the turn: a tool call without a
// name or with a repeated id, an unknown fault kind, a negative delay,
// Retry-After or chunk count, fields that the fault ignores, or a turn with
// neither a reply, reasoning, tool calls, a finish reason nor a fault.
func (t Turn) validate() error {
	ids := map[string]int{}
	for i, c := range t.ToolCalls {
		if err := c.check(i, ids); err != nil {
			return err
		}
	}
	answers := t.Reply != "" || t.Reasoning != "" || len(t.ToolCalls) > 0 || t.FinishReason != ""
	if t.Fault == nil {
		if !answers {
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
	if f.DelayMS > MaxDelayMS {
		return fmt.Errorf("fault %s: delay_ms %d is over %d (one hour)", f.Kind, f.DelayMS, MaxDelayMS)
	}
	if f.AfterChunks < 0 {
		return fmt.Errorf("fault %s: after_chunks %d is negative", f.Kind, f.AfterChunks)
	}
	switch f.Kind {
	case FaultSlow:
		if !answers {
			return fmt.Errorf("fault slow: needs the reply to send after the delay")
		}
	case FaultStreamCut:
	case FaultRateLimit, FaultServerError, FaultBusinessError, FaultErrorBody, FaultMalformed:
		if answers {
			return fmt.Errorf("fault %s: reply, reasoning, tool_calls and finish_reason are not sent with this fault (only with slow and stream_cut)", f.Kind)
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
	if f.AfterChunks != 0 && f.Kind != FaultStreamCut {
		return fmt.Errorf("fault %s: after_chunks only applies to stream_cut", f.Kind)
	}
	if f.Code != "" && f.Kind != FaultRateLimit && f.Kind != FaultBusinessError && f.Kind != FaultErrorBody {
		return fmt.Errorf("fault %s: code only applies to rate_limit, business_error and error_body", f.Kind)
	}
	return nil
}

// check reports what is wrong with the i-th call of a turn: a missing name,
// or an id already used by an earlier call (ids maps the ids seen so far to
// their call's index; check adds c's).
func (c ToolCall) check(i int, ids map[string]int) error {
	if c.Name == "" {
		return fmt.Errorf("tool_calls[%d]: name is missing", i)
	}
	if c.ID == "" {
		return nil
	}
	if j, dup := ids[c.ID]; dup {
		return fmt.Errorf("tool_calls[%d].id: %q is also the id of tool_calls[%d]", i, c.ID, j)
	}
	ids[c.ID] = i
	return nil
}

// faultKinds returns every fault kind in a fixed order (rate_limit,
// server_error, business_error, error_body, malformed, slow, stream_cut);
// the slice is fresh on every call.
func faultKinds() []FaultKind {
	return []FaultKind{FaultRateLimit, FaultServerError, FaultBusinessError, FaultErrorBody, FaultMalformed, FaultSlow, FaultStreamCut}
}

// kindList is faultKinds for messages: "rate_limit, server_error, …".
// MaxDelayMS is the longest slow-fault delay a script may ask for (one
// hour, in milliseconds); a larger value would overflow time.Duration.
const MaxDelayMS = 3_600_000

var kindList = func() string {
	kinds := faultKinds()
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}()
