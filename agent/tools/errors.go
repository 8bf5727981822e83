// Package tools holds the agent's tools (echo, image_scaling), their list
// (Names, and Build to construct them by name), and the workspace sandbox
// that every file-touching tool goes through (an os.Root: no path the
// model writes can leave it).
package tools

import "fmt"

// Code is a stable identifier of a tool failure, as parser.Code is of a
// parse failure. Codes reach the model inside observations, and the trace
// and reports as failure paths; they never change.
type Code string

// The tool error codes.
const (
	// CodeInvalidInput: the input is malformed or names something the
	// tool cannot take (a folder, a width out of range).
	CodeInvalidInput Code = "invalid_input"
	// CodeFileNotFound: nothing exists at the path.
	CodeFileNotFound Code = "file_not_found"
	// CodePathOutsideWorkspace: the path, or a symbolic link on it, leads
	// outside the workspace.
	CodePathOutsideWorkspace Code = "path_outside_workspace"
	// CodeUnsupportedFormat: the file's extension or content is not a
	// supported format.
	CodeUnsupportedFormat Code = "unsupported_format"
	// CodePayloadTooLarge: the input file is over the tool's size limit.
	CodePayloadTooLarge Code = "payload_too_large"
	// CodeServiceUnavailable: the service behind the tool cannot be
	// reached or is overloaded (retryable).
	CodeServiceUnavailable Code = "service_unavailable"
	// CodeServiceError: the service refused the call or answered
	// something unusable.
	CodeServiceError Code = "service_error"
	// CodeOutputExists: the output file exists already; it is never
	// overwritten.
	CodeOutputExists Code = "output_exists"
	// CodeToolError is what the agent reports for an error that is not
	// an *Error.
	CodeToolError Code = "tool_error"
	// CodeToolPanic is what the agent reports for a tool that panicked.
	CodeToolPanic Code = "tool_panic"
	// CodeToolTimeout is what the agent reports for a tool that ran past
	// its per-call timeout.
	CodeToolTimeout Code = "tool_timeout"
	// CodeToolNotFound is what the agent reports for an unknown tool name.
	CodeToolNotFound Code = "tool_not_found"
)

// Error is a tool failure with a stable code. The agent turns it into an
// error observation for the model.
type Error struct {
	// Code is one of the Code* constants.
	Code Code
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
