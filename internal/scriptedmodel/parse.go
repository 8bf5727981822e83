package scriptedmodel

import (
	"errors"
	"fmt"
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

// ParseScript reads a script: a YAML list of turns, or a mapping (such as a
// scenario file) whose "script" key holds that list; other keys of the
// mapping are ignored. Unknown turn or fault fields and invalid turns (see
// Turn.Validate) are errors. Errors are *ScriptError with the line.
func ParseScript(data []byte) ([]Turn, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(err, 0)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &ScriptError{Message: "empty script: want a list of turns"}
	}
	list := doc.Content[0]
	if list.Kind == yaml.MappingNode {
		var found *yaml.Node
		for i := 0; i+1 < len(list.Content); i += 2 {
			if list.Content[i].Value == "script" {
				found = list.Content[i+1]
			}
		}
		if found == nil {
			return nil, &ScriptError{Line: list.Line, Message: `mapping without a "script" key: want a list of turns`}
		}
		list = found
	}
	if list.Kind != yaml.SequenceNode {
		return nil, &ScriptError{Line: list.Line, Message: "want a list of turns"}
	}
	turns := make([]Turn, 0, len(list.Content))
	for i, item := range list.Content {
		if err := checkKeys(item, turnKeys, "turn"); err != nil {
			return nil, err
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			if item.Content[j].Value == "fault" {
				if err := checkKeys(item.Content[j+1], faultKeys, "fault"); err != nil {
					return nil, err
				}
			}
		}
		var t Turn
		if err := item.Decode(&t); err != nil {
			return nil, yamlError(err, item.Line)
		}
		if err := t.Validate(); err != nil {
			return nil, &ScriptError{Line: item.Line, Message: fmt.Sprintf("turn %d: %v", i+1, err)}
		}
		turns = append(turns, t)
	}
	return turns, nil
}

// checkKeys reports a node that is not a mapping, or a key not in known.
func checkKeys(n *yaml.Node, known map[string]bool, what string) error {
	if n.Kind != yaml.MappingNode {
		return &ScriptError{Line: n.Line, Message: fmt.Sprintf("%s: want a mapping, got %s", what, kindName(n))}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			return &ScriptError{Line: k.Line, Message: fmt.Sprintf("%s: unknown field %q", what, k.Value)}
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
