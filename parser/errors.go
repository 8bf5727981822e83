package parser

import "fmt"

// Code is a stable identifier of a parse failure. Codes appear in
// observations, trace events, reports and golden files; they never change.
type Code string

// The parse error codes.
const (
	// CodeEmptyReply: the reply is empty or only whitespace.
	CodeEmptyReply Code = "empty_reply"
	// CodeMissingAction: neither an action nor a final answer was found;
	// also a native tool call without a function name.
	CodeMissingAction Code = "missing_action"
	// CodeMissingActionInput: an action without an Action Input.
	CodeMissingActionInput Code = "missing_action_input"
	// CodeNoAction: the action is "None"-like and there is no final answer.
	CodeNoAction Code = "no_action"
	// CodeEmptyFinalAnswer: a Final Answer label with no text.
	CodeEmptyFinalAnswer Code = "empty_final_answer"
	// CodeInvalidJSON: the JSON protocol reply is not a valid object; also
	// the arguments of a native tool call that are not valid JSON.
	CodeInvalidJSON Code = "invalid_json"
	// CodeInvalidArguments: the arguments of a native tool call are valid
	// JSON but not an object (an array, a string, a number, a boolean or
	// null).
	CodeInvalidArguments Code = "invalid_arguments"
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

// textFormat is the text-protocol format shown in every text error message.
const textFormat = `Reply in exactly this format, to use one tool:
Thought: <your reasoning>
Action: <one tool name>
Action Input: <the input for that tool>
or, when you know the answer:
Thought: <your reasoning>
Final Answer: <your answer>`

// jsonFormat is the JSON-protocol format shown in JSON error messages.
const jsonFormat = `Reply with exactly one JSON object, to use one tool:
{"thought": "<your reasoning>", "action": "<one tool name>", "action_input": <the input for that tool>}
or, when you know the answer:
{"thought": "<your reasoning>", "final_answer": "<your answer>"}`

// nativeFormat is the native-protocol format shown in native error
// messages.
const nativeFormat = `To use a tool, call it with its arguments as one JSON object that matches the tool's parameters; ` +
	`when you know the answer, reply with the answer as plain text and no tool call.`

func errEmptyNative(thinkOnly bool) *Error {
	what := "your reply was empty: no tool call and no text. "
	if thinkOnly {
		what = "your reply held only your reasoning: no tool call and no text after it. "
	}
	return &Error{Code: CodeEmptyReply, Message: what + nativeFormat}
}

func errCallName(i int) *Error {
	return &Error{Code: CodeMissingAction,
		Message: fmt.Sprintf("your tool call %d has no function name. %s", i+1, nativeFormat)}
}

func errCallJSON(name string, err error) *Error {
	return &Error{Code: CodeInvalidJSON,
		Message: fmt.Sprintf("the arguments of your call to %q are not valid JSON (%v). %s", name, err, nativeFormat)}
}

func errCallNotObject(name, kind string) *Error {
	return &Error{Code: CodeInvalidArguments,
		Message: fmt.Sprintf("the arguments of your call to %q are a JSON %s, not an object. %s", name, kind, nativeFormat)}
}

func errEmptyReply(json bool) *Error {
	format := textFormat
	if json {
		format = jsonFormat
	}
	return &Error{Code: CodeEmptyReply, Message: "your reply was empty. " + format}
}

func errMissingAction() *Error {
	return &Error{Code: CodeMissingAction,
		Message: `your reply has no "Action:" line and no "Final Answer:" line. ` + textFormat}
}

func errInputWithoutAction(line int) *Error {
	return &Error{Code: CodeMissingAction, Line: line,
		Message: `"Action Input:" without an "Action:" line before it. ` + textFormat}
}

func errEmptyActionName(line int) *Error {
	return &Error{Code: CodeMissingAction, Line: line,
		Message: `"Action:" without a tool name. ` + textFormat}
}

func errMissingActionInput(action string, line int) *Error {
	return &Error{Code: CodeMissingActionInput, Line: line,
		Message: fmt.Sprintf("Action %q has no \"Action Input:\" line. Put the input on the line right after the action "+
			"(write \"Action Input:\" with nothing after it when the tool takes no input):\nAction: %s\nAction Input: <the input for %s>",
			action, action, action)}
}

func errNoAction(line int) *Error {
	return &Error{Code: CodeNoAction, Line: line,
		Message: `your "Action:" names no tool and there is no "Final Answer:". ` + textFormat}
}

func errEmptyFinalAnswer(line int) *Error {
	return &Error{Code: CodeEmptyFinalAnswer, Line: line,
		Message: `your "Final Answer:" is empty: write the answer after the label, on the same line or the lines below it:
Thought: <your reasoning>
Final Answer: <your answer>`}
}

func errJSON(code Code, line int, problem string) *Error {
	return &Error{Code: code, Line: line, Message: problem + ". " + jsonFormat}
}
