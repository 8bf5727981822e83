package scriptedmodel

import (
	"bytes"
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
	turnKeys  = map[string]bool{"reply": true, "finish_reason": true, "fault": true}
	faultKeys = map[string]bool{"kind": true, "retry_after_s": true, "delay_ms": true, "code": true}
	yamlLine  = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
)

// ParseScript reads a script file: one YAML document holding a list of
// turns, each read by DecodeTurn. A scenario file (a mapping whose
// "script" key holds the turns) is read by the evals package
// (evals.ParseScript), not here: for a mapping the error says so. Errors
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
		return nil, &ScriptError{Line: list.Line, Message: "a mapping: want a list of turns (a scenario file is read by evals.ParseScript)"}
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
// of reply, finish_reason and fault (a mapping of kind, retry_after_s,
// delay_ms and code), without aliases. A valid turn has a reply or a
// finish_reason, or a fault; a fault has a known kind, and only a slow
// fault goes with a reply (which it needs); retry_after_s (rate_limit),
// delay_ms (slow) and code (rate_limit, business_error, error_body) are
// not negative and only set for the kinds that use them. It is the one
// reader of the turn format: ParseScript reads each turn of a script file
// with it and the scenario loader each turn under `script:`. The error is
// a *ScriptError with the line of the offending field or turn.
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

// decodeTurn reads a turn's fields without validating the turn.
func decodeTurn(n *yaml.Node) (Turn, error) {
	if err := checkKeys(n, turnKeys, "turn"); err != nil {
		return Turn{}, err
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == "fault" {
			if err := checkKeys(n.Content[j+1], faultKeys, "fault"); err != nil {
				return Turn{}, err
			}
		}
	}
	var t Turn
	if err := n.Decode(&t); err != nil {
		return Turn{}, yamlError(err, n.Line)
	}
	return t, nil
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
