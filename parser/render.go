package parser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// errorResult is the JSON shape of a parse error.
type errorResult struct {
	Kind  string `json:"kind"`
	Error *Error `json:"error"`
}

// Render returns the JSON object that describes the result of Parse or
// DecideCalls, as `agenthub parse` prints it and as the golden files hold
// it: the Decision's non-empty fields (kind first; for KindToolCalls,
// "calls": [{"id","name","arguments","error"}] in the calls' order, with
// "arguments" as a JSON string), or {"kind":"error","error":{"code",
// "message","line"}} when err is a *Error. The object is indented by two
// spaces, ends with a newline, and does not escape <, > and &. Render fails
// when err is not a *Error.
func Render(d Decision, err error) ([]byte, error) {
	var v any = d
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			return nil, fmt.Errorf("render decision: not a parse error: %w", err)
		}
		v = errorResult{Kind: "error", Error: pe}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("render decision: %w", err)
	}
	return buf.Bytes(), nil
}
