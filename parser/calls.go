package parser

import (
	"bytes"
	"encoding/json"
)

// Call is one native tool call as the model sent it: an element of the
// "tool_calls" array of an OpenAI chat-completions assistant message,
// {"id", "type": "function", "function": {"name", "arguments"}}, with the
// function's fields lifted up.
type Call struct {
	// ID is the provider's id for the call, which the tool message that
	// answers it repeats as tool_call_id; "" when the provider sent none
	// (not an error).
	ID string `json:"id,omitempty"`
	// Name is the function name exactly as sent; resolving it to a tool is
	// the agent's job.
	Name string `json:"name"`
	// Arguments is the arguments' JSON text as sent: compacted when it is a
	// JSON object, verbatim when the call carries Err.
	Arguments string `json:"arguments"`
	// Err is set, by DecideCalls, when the call cannot be run: a blank Name
	// (code missing_action), Arguments that are not valid JSON
	// (invalid_json) or valid JSON but not an object (invalid_arguments).
	// Its Line is 0 and its Message is written for the model.
	Err *Error `json:"error,omitempty"`
}

// DecideCalls turns one assistant message of the native tool-calling
// protocol, its content and its tool calls in the order given, into a
// Decision: KindToolCalls holding every call (each checked, an unusable
// one carrying Err) when there are calls, KindFinal with the trimmed
// content when there are none. The Err of the given calls is ignored and
// set afresh; calls is not modified.
//
// The error, when not nil, is a *Error with code empty_reply: no call and
// no content (beyond a <think> block). DecideCalls is pure and runs in
// time and memory linear in the total length of content and calls; see
// "Native tool calls" in the package documentation for every rule.
func DecideCalls(content string, calls []Call) (Decision, error) {
	a, b := trimBounds(content, 0, len(content))
	think, a, b := splitThink(content, a, b)
	rest := content[a:b]
	if len(calls) == 0 {
		if rest == "" {
			return Decision{}, errEmptyNative(think != "")
		}
		return Decision{Kind: KindFinal, Thought: think, FinalAnswer: rest}, nil
	}
	d := Decision{Kind: KindToolCalls, Thought: rest, Calls: make([]Call, len(calls))}
	if think != "" && rest != "" {
		d.Thought = think + "\n" + rest
	} else if think != "" {
		d.Thought = think
	}
	for i, c := range calls {
		d.Calls[i] = checkCall(i, c)
	}
	return d, nil
}

// checkCall applies rules N5 and N6 to the call at index i.
func checkCall(i int, c Call) Call {
	c.Err = nil
	if trim(c.Name) == "" {
		c.Err = errCallName(i)
		return c
	}
	var buf bytes.Buffer
	buf.Grow(len(c.Arguments))
	if err := json.Compact(&buf, []byte(c.Arguments)); err != nil {
		c.Err = errCallJSON(c.Name, err)
		return c
	}
	compact := buf.Bytes()
	if compact[0] != '{' {
		c.Err = errCallNotObject(c.Name, jsonKind(compact[0]))
		return c
	}
	if len(compact) != len(c.Arguments) { // compacting only removes bytes
		c.Arguments = string(compact)
	}
	return c
}

// jsonKind names the JSON value that starts with the byte c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
