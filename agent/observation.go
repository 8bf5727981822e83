package agent

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Status is how a tool call (or an automatic recovery) went, as an
// observation and a tool_result or recovery_result event report it.
type Status string

// The statuses.
const (
	// StatusSuccess: the tool returned data.
	StatusSuccess Status = "success"
	// StatusError: the tool failed, or the reply could not be acted on;
	// the observation's Error says why.
	StatusError Status = "error"
)

// Observation is the envelope every tool result, tool failure and
// format correction reaches the model in, rendered as compact JSON after
// "Observation: ". Tool text sits inside the JSON string Data, so text a
// tool prints ("Final Answer: …") cannot pose as protocol labels.
type Observation struct {
	// Status is StatusSuccess or StatusError.
	Status Status `json:"status"`
	// Data is the tool output (success only).
	Data string `json:"data,omitempty"`
	// Error describes the failure (error only).
	Error *ObservationError `json:"error,omitempty"`
	// Recovery is extra data from an automatic error recovery, such as
	// the image files that do exist in the folder the model named.
	Recovery any `json:"recovery,omitempty"`
	// Note tells the model what part of its reply was not acted on
	// (further actions, text after the action input); empty otherwise.
	Note string `json:"note,omitempty"`
	// Truncated says Data or the error message was cut to
	// Config.MaxObservationBytes, or the recovery data to its own limit.
	Truncated bool `json:"truncated"`
}

// ObservationError is the error part of an Observation.
type ObservationError struct {
	// Code is a stable error code (a tools.Code*, a parser code, …).
	Code string `json:"code"`
	// Message says what went wrong and how to correct the call.
	Message string `json:"message"`
	// Retryable says whether the same call may succeed if repeated.
	Retryable bool `json:"retryable"`
}

// String renders the observation as compact JSON without HTML escaping.
func (o Observation) String() string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		// Only a Recovery value that cannot be marshalled gets here.
		o.Recovery = nil
		buf.Reset()
		_ = enc.Encode(o)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
