package tools

import (
	"bytes"
	"context"
	"encoding/json"
)

// Echo is the echo tool: it returns its input unchanged. It is the
// smallest tool that proves dispatch and observation plumbing work. The
// zero value is ready to use.
type Echo struct{}

var (
	_ Tool          = Echo{}
	_ Parameterized = Echo{}
)

// echoParameters is the JSON Schema of echo's native arguments.
const echoParameters = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// Name returns "echo".
func (Echo) Name() string { return "echo" }

// Description tells the model what echo does and what it takes.
func (Echo) Description() string {
	return "Returns its input unchanged. Input: any text, e.g. `hello world`. Output: the same text."
}

// Parameters returns echo's arguments schema:
// {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}.
func (Echo) Parameters() json.RawMessage { return json.RawMessage(echoParameters) }

// Execute returns input unchanged, except that a compact JSON object whose
// only key is "text", holding a string — {"text":"…"} as native tool
// calls deliver it (parser.DecideCalls compacts arguments) — returns that
// string decoded. The same object written with spaces, as a text-protocol
// model may type it, is ordinary text and comes back as written, as does
// any other JSON. Execute never fails.
func (Echo) Execute(_ context.Context, input string) (string, error) {
	if text, ok := echoText(input); ok {
		return text, nil
	}
	return input, nil
}

// echoText returns the text of a compact {"text":"…"} object.
func echoText(input string) (string, bool) {
	if len(input) < len(`{"text":""}`) || input[0] != '{' {
		return "", false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(input)) != nil || buf.Len() != len(input) {
		return "", false // not JSON, or not compact
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(input), &fields) != nil || len(fields) != 1 {
		return "", false
	}
	raw, ok := fields["text"]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return "", false
	}
	return text, true
}
