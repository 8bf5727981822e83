// Package tools holds the agent's tools (echo, image_scaling) and the
// workspace sandbox that every file-touching tool goes through.
package tools

import "fmt"

// The stable tool error codes. They reach the model inside observations and
// the reports as failure paths; they never change.
const (
	CodeInvalidInput         = "invalid_input"
	CodeFileNotFound         = "file_not_found"
	CodePathOutsideWorkspace = "path_outside_workspace"
	CodeUnsupportedFormat    = "unsupported_format"
	CodePayloadTooLarge      = "payload_too_large"
	CodeServiceUnavailable   = "service_unavailable"
	CodeServiceError         = "service_error"
	CodeOutputExists         = "output_exists"
	// CodeToolError is what the agent reports for an error that is not
	// an *Error.
	CodeToolError = "tool_error"
	// CodeToolPanic is what the agent reports for a tool that panicked.
	CodeToolPanic = "tool_panic"
	// CodeToolTimeout is what the agent reports for a tool that ran past
	// its per-call timeout.
	CodeToolTimeout = "tool_timeout"
	// CodeToolNotFound is what the agent reports for an unknown tool name.
	CodeToolNotFound = "tool_not_found"
)

// Error is a tool failure with a stable code. The agent turns it into an
// error observation for the model.
type Error struct {
	// Code is one of the Code* constants.
	Code string
	// Message says what went wrong, for the model and the trace.
	Message string
	// Retryable says whether the same call may succeed if repeated.
	Retryable bool
	// Err is the underlying cause, if any (not shown to the model).
	Err error
}

// Error implements the error interface: "CODE: message".
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }
