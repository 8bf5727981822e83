package scriptedmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// ScriptError is a bad script file: the line (1-based; 0 when unknown) and
// what is wrong there.
type ScriptError struct {
	// Line is the 1-based line of the offending turn or field, 0 if unknown.
	Line int
	// Message says what is wrong.
	Message string
}

// Error returns "parse script: line N: message".
func (e *ScriptError) Error() string {
	if e.Line == 0 {
		return "parse script: " + e.Message
	}
	return fmt.Sprintf("parse script: line %d: %s", e.Line, e.Message)
}

var (
	turnKeys     = map[string]bool{"reply": true, "reasoning": true, "tool_calls": true, "finish_reason": true, "fault": true}
	faultKeys    = map[string]bool{"kind": true, "retry_after_s": true, "delay_ms": true, "code": true, "after_chunks": true}
	toolCallKeys = map[string]bool{"id": true, "name": true, "arguments": true}
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
)

// ParseScript reads a script file: one YAML document holding a list of
// turns, each read by DecodeTurn. A scenario file (a mapping whose
// "script" key holds the turns) is read by the evals package
// (scenario.ParseScript in evals/scenario), not here: for a mapping the error says so. Errors
// are *ScriptError with the line; a validation error names the turn
// ("turn 2: …").
func ParseScript(data []byte) ([]Turn, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(err, 0)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &ScriptError{Message: "empty script: want a list of turns"}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ScriptError{Line: extra.Line, Message: "more than one YAML document in a script"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(err, 0)
	}
	list := doc.Content[0]
	switch list.Kind {
	case yaml.SequenceNode:
	case yaml.MappingNode:
		return nil, &ScriptError{Line: list.Line, Message: "a mapping: want a list of turns (a scenario file is read by scenario.ParseScript)"}
	default:
		return nil, &ScriptError{Line: list.Line, Message: "want a list of turns"}
	}
	turns := make([]Turn, 0, len(list.Content))
	for i, item := range list.Content {
		t, err := decodeTurn(item)
		if err != nil {
			return nil, err
		}
		if err := t.validate(); err != nil {
			return nil, &ScriptError{Line: item.Line, Message: fmt.Sprintf("turn %d: %v", i+1, err)}
		}
		turns = append(turns, t)
	}
	return turns, nil
}

// DecodeTurn reads one turn from its YAML node and validates it: a mapping
// of reply, reasoning, tool_calls, finish_reason and fault (a mapping of
// kind, retry_after_s, delay_ms, code and after_chunks), without aliases.
// tool_calls is a non-empty list of mappings of id (optional), name
// (required) and arguments (a mapping or list, sent as compact JSON; a
// string, sent as written; "{}" when missing); ids are not repeated. A
// valid turn has a reply, reasoning, tool calls or a finish_reason, or a
// fault; a fault has a known kind, and only slow (which needs it) and
// stream_cut go with a reply; retry_after_s (rate_limit), delay_ms (slow),
// after_chunks (stream_cut) and code (rate_limit, business_error,
// error_body) are not negative and only set for the kinds that use them.
// It is the one reader of the turn format: ParseScript reads each turn of
// a script file with it and the scenario loader each turn under `script:`.
// The error is a *ScriptError with the line of the offending field or
// turn.
func DecodeTurn(n *yaml.Node) (Turn, error) {
	t, err := decodeTurn(n)
	if err != nil {
		return Turn{}, err
	}
	if err := t.validate(); err != nil {
		return Turn{}, &ScriptError{Line: n.Line, Message: err.Error()}
	}
	return t, nil
}

// decodeTurn reads a turn's fields without validating the turn, except
// its tool calls (whose errors carry their line).
func decodeTurn(n *yaml.Node) (Turn, error) {
	if err := checkKeys(n, turnKeys, "turn"); err != nil {
		return Turn{}, err
	}
	rest := *n
	rest.Content = nil
	var calls *yaml.Node
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "fault":
			if err := checkKeys(v, faultKeys, "fault"); err != nil {
				return Turn{}, err
			}
		case "tool_calls":
			if calls != nil {
				return Turn{}, &ScriptError{Line: k.Line, Message: fmt.Sprintf("mapping key \"tool_calls\" already defined at line %d", calls.Line)}
			}
			calls = v
			continue
		}
		rest.Content = append(rest.Content, k, v)
	}
	var t Turn
	if err := rest.Decode(&t); err != nil {
		return Turn{}, yamlError(err, n.Line)
	}
	if calls != nil {
		var err error
		if t.ToolCalls, err = decodeToolCalls(calls); err != nil {
			return Turn{}, err
		}
	}
	return t, nil
}

// decodeToolCalls reads a turn's tool_calls list and checks each call.
func decodeToolCalls(n *yaml.Node) ([]ToolCall, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, &ScriptError{Line: n.Line, Message: "tool_calls: want a list, got " + kindName(n)}
	}
	if len(n.Content) == 0 {
		return nil, &ScriptError{Line: n.Line, Message: "tool_calls: empty list (omit tool_calls for a reply without calls)"}
	}
	calls := make([]ToolCall, 0, len(n.Content))
	ids := map[string]int{}
	for i, item := range n.Content {
		where := fmt.Sprintf("tool_calls[%d]", i)
		if err := checkKeys(item, toolCallKeys, where); err != nil {
			return nil, err
		}
		c := ToolCall{Arguments: "{}"}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			field := where + "." + k.Value
			if k.Value == "arguments" {
				args, err := argumentsText(v, field)
				if err != nil {
					return nil, err
				}
				c.Arguments = args
				continue
			}
			if v.Kind != yaml.ScalarNode {
				return nil, &ScriptError{Line: v.Line, Message: field + ": want a string, got " + kindName(v)}
			}
			if v.ShortTag() == "!!null" {
				continue
			}
			if k.Value == "id" {
				c.ID = v.Value
			} else {
				c.Name = v.Value
			}
		}
		if err := c.check(i, ids); err != nil {
			return nil, &ScriptError{Line: item.Line, Message: err.Error()}
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// argumentsText is the arguments text of a tool call: a scalar as written,
// a mapping or list as compact JSON.
func argumentsText(n *yaml.Node, field string) (string, error) {
	if n.Kind == yaml.ScalarNode {
		return n.Value, nil
	}
	var b bytes.Buffer
	if err := nodeJSON(&b, n, field); err != nil {
		return "", err
	}
	return b.String(), nil
}

// nodeJSON writes the YAML node n as compact JSON: mappings keep the
// order written, strings are not HTML-escaped, numbers that are JSON
// numbers as written keep their text. Aliases, merge keys, repeated keys,
// non-scalar keys and numbers JSON cannot hold (.inf, .nan) are errors
// naming field.
func nodeJSON(b *bytes.Buffer, n *yaml.Node, field string) error {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case k.Kind == yaml.AliasNode || v.Kind == yaml.AliasNode:
				return &ScriptError{Line: k.Line, Message: field + ": YAML aliases are not supported"}
			case k.Kind != yaml.ScalarNode:
				return &ScriptError{Line: k.Line, Message: field + ": a key must be a string, got " + kindName(k)}
			case k.ShortTag() == "!!merge":
				return &ScriptError{Line: k.Line, Message: field + ": YAML merge keys are not supported"}
			case seen[k.Value]:
				return &ScriptError{Line: k.Line, Message: fmt.Sprintf("%s: key %q repeated", field, k.Value)}
			}
			seen[k.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := nodeJSON(b, v, field+"."+k.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := nodeJSON(b, v, fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(b, n, field)
	case yaml.AliasNode:
		return &ScriptError{Line: n.Line, Message: field + ": YAML aliases are not supported"}
	default:
		return &ScriptError{Line: n.Line, Message: field + ": unexpected YAML node"}
	}
	return nil
}

// writeScalar writes a YAML scalar as a JSON value: null, a boolean, a
// number (its text when that is a JSON number), or else a string.
func writeScalar(b *bytes.Buffer, n *yaml.Node, field string) error {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
		return nil
	case "!!int", "!!float", "!!bool":
		if n.ShortTag() != "!!bool" && jsonNumber.MatchString(n.Value) {
			b.WriteString(n.Value)
			return nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return yamlError(err, n.Line)
		}
		j, err := json.Marshal(v)
		if err != nil {
			return &ScriptError{Line: n.Line, Message: fmt.Sprintf("%s: %s is not a JSON number", field, n.Value)}
		}
		b.Write(j)
		return nil
	}
	writeString(b, n.Value)
	return nil
}

// jsonNumber matches a JSON number (RFC 8259 section 6).
var jsonNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`)

// writeString writes s as a JSON string without HTML escaping.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // a string always encodes
	b.Truncate(b.Len() - 1) // the newline Encode appends
}

// checkKeys reports a node that is not a mapping, a key not in known, or
// an alias among the values.
func checkKeys(n *yaml.Node, known map[string]bool, what string) error {
	if n.Kind != yaml.MappingNode {
		return &ScriptError{Line: n.Line, Message: fmt.Sprintf("%s: want a mapping, got %s", what, kindName(n))}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !known[k.Value] {
			return &ScriptError{Line: k.Line, Message: fmt.Sprintf("%s: unknown field %q", what, k.Value)}
		}
		if v.Kind == yaml.AliasNode {
			return &ScriptError{Line: v.Line, Message: fmt.Sprintf("%s: %s: YAML aliases are not supported", what, k.Value)}
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "something else"
}

// yamlError turns a yaml.v3 error into a *ScriptError, taking the line from
// its text when it has one.
func yamlError(err error, line int) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	return &ScriptError{Line: line, Message: msg}
}
