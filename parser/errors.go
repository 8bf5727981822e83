package parser

import "fmt"

// Code is a stable identifier of a parse failure. Codes appear in
// observations, trace events, reports and golden files; they never change.
type Code string

// The parse error codes.
const (
	// CodeEmptyReply: the reply is empty or only whitespace.
	CodeEmptyReply Code = "empty_reply"
	// CodeMissingAction: neither an action nor a final answer was found.
	CodeMissingAction Code = "missing_action"
	// CodeMissingActionInput: an action without an Action Input.
	CodeMissingActionInput Code = "missing_action_input"
	// CodeNoAction: the action is "None"-like and there is no final answer.
	CodeNoAction Code = "no_action"
	// CodeEmptyFinalAnswer: a Final Answer label with no text.
	CodeEmptyFinalAnswer Code = "empty_final_answer"
	// CodeInvalidJSON: the JSON protocol reply is not a valid object.
	CodeInvalidJSON Code = "invalid_json"
)

// Error is a reply the parser could not turn into a decision.
type Error struct {
	// Code is the stable error code.
	Code Code `json:"code"`
	// Message is written for the model: it is sent back as a
	// format-correction observation and shows the expected format.
	Message string `json:"message"`
	// Line is the 1-based line of the reply the error refers to, 0 when
	// the error concerns the whole reply.
	Line int `json:"line,omitempty"`
}

// Error implements the error interface: "parse reply: line N: CODE: message".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("parse reply: line %d: %s: %s", e.Line, e.Code, e.Message)
	}
	return fmt.Sprintf("parse reply: %s: %s", e.Code, e.Message)
}
