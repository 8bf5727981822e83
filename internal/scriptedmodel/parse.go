package scriptedmodel

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

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

// ParseScript reads a script: a YAML list of turns, or a scenario file (a
// mapping) whose "script" key maps prompt variants to lists of turns; other
// keys of the mapping are ignored. variant picks the scenario's list; it may
// be empty when the scenario scripts one variant only, and is ignored for a
// plain list. Unknown turn or fault fields and invalid turns (see
// Turn.Validate) are errors. Errors are *ScriptError with the line.
func ParseScript(data []byte, variant string) ([]Turn, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(err, 0)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &ScriptError{Message: "empty script: want a list of turns"}
	}
	list := doc.Content[0]
	if list.Kind == yaml.MappingNode {
		script := lookup(list, "script")
		if script == nil {
			return nil, &ScriptError{Line: list.Line, Message: `mapping without a "script" key: want a list of turns or a scenario`}
		}
		if script.Kind != yaml.MappingNode {
			return nil, &ScriptError{Line: script.Line, Message: "script: want a mapping from prompt variant to turns"}
		}
		var names []string
		for i := 0; i+1 < len(script.Content); i += 2 {
			names = append(names, script.Content[i].Value)
		}
		switch {
		case variant != "":
			list = lookup(script, variant)
			if list == nil {
				return nil, &ScriptError{Line: script.Line, Message: fmt.Sprintf("script: no variant %q (have %s)", variant, strings.Join(names, ", "))}
			}
		case len(names) == 1:
			list = script.Content[1]
		default:
			return nil, &ScriptError{Line: script.Line, Message: fmt.Sprintf("script: %d variants (%s): pick one with --prompt VARIANT", len(names), strings.Join(names, ", "))}
		}
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

// lookup returns the value of key in mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
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
