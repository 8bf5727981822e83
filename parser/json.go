package parser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Key aliases of the JSON protocol, in order of preference.
var (
	actionKeys  = []string{"action", "name", "tool", "tool_name"}
	inputKeys   = []string{"action_input", "args", "arguments", "input", "parameters", "tool_input"}
	thoughtKeys = []string{"thought", "thoughts"}
	finalKeys   = []string{"final_answer", "answer", "final"}
)

// object is a decoded JSON object: lower-cased key to raw value, the first
// occurrence of a key winning.
type object map[string]json.RawMessage

// decodeObject decodes the JSON object text.
func decodeObject(text string) (object, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not an object")
	}
	o := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		key = strings.ToLower(key)
		if _, dup := o[key]; !dup {
			o[key] = raw
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

// get returns the raw value of the first key present.
func (o object) get(keys []string) (json.RawMessage, bool) {
	for _, k := range keys {
		if raw, ok := o[k]; ok {
			return raw, true
		}
	}
	return nil, false
}

// text returns a value as text: a string decoded, null as "", anything
// else as its compact JSON.
func text(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case raw[0] == '"':
		if s, ok := unquote(raw); ok {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// parseJSON parses the JSON protocol: the first JSON object in the region,
// bare, fenced or with prose around it.
func parseJSON(r region) (Decision, error) {
	s := r.s
	i := strings.IndexByte(s[r.a:r.b], '{')
	if i < 0 {
		return Decision{}, errJSON(CodeInvalidJSON, 0, "your reply has no JSON object")
	}
	i += r.a
	line := lineAt(s, i)
	end := balancedEnd(s[:r.b], i)
	if end < 0 {
		return Decision{}, errJSON(CodeInvalidJSON, line, "the JSON object that starts on this line is not closed")
	}
	o, err := decodeObject(s[i:end])
	if err != nil {
		return Decision{}, errJSON(CodeInvalidJSON, line, "your JSON object is invalid ("+err.Error()+")")
	}

	var d Decision
	d.Discarded, d.ExtraActionsIgnored = jsonTrailer(s[end:r.b])
	if raw, ok := o.get(thoughtKeys); ok {
		d.Thought = trim(text(raw))
	}
	if r.think != "" {
		d.Thought = strings.TrimSpace(r.think + "\n" + d.Thought)
	}

	actionRaw, hasAction := o.get(actionKeys)
	inputRaw, hasInput := o.get(inputKeys)
	if hasAction {
		if nested, err := decodeObject(string(actionRaw)); err == nil {
			// {"action": {"name": "search", "args": {...}}}
			actionRaw, hasAction = nested.get(actionKeys)
			if in, ok := nested.get(inputKeys); ok {
				inputRaw, hasInput = in, true
			}
		}
	}
	name := ""
	if hasAction {
		name = cleanName(text(actionRaw))
	}
	finalRaw, hasFinal := o.get(finalKeys)
	final := ""
	if hasFinal {
		final = trim(text(finalRaw))
	}

	switch {
	case name != "" && !isNoneName(name):
		if !hasInput {
			return Decision{}, errJSON(CodeMissingActionInput, line,
				fmt.Sprintf("action %q has no \"action_input\" (use {} when the tool takes no input)", name))
		}
		var cut string
		d.Kind, d.Action = KindAction, name
		d.ActionInput, cut = cutObservation(text(inputRaw))
		d.Discarded = joinDiscarded(cut, d.Discarded)
		return d, nil
	case final != "":
		d.Kind, d.FinalAnswer = KindFinal, final
		return d, nil
	}
	if reason, ok := giveUp(o); ok {
		d.Kind, d.GiveUp = KindGiveUp, reason
		return d, nil
	}
	switch {
	case hasFinal:
		return Decision{}, errJSON(CodeEmptyFinalAnswer, line, `your "final_answer" is empty`)
	case name != "":
		return Decision{}, errJSON(CodeNoAction, line, fmt.Sprintf("action %q names no tool and there is no \"final_answer\"", name))
	}
	return Decision{}, errJSON(CodeMissingAction, line, `your JSON object has no "action" and no "final_answer"`)
}

// jsonTrailer returns the text after the decision's object (without the
// closing fence of a fenced object), and the number of further objects in
// it that ask for an action: both are dropped, one decision per reply.
func jsonTrailer(rest string) (discarded string, extra int) {
	t := strings.TrimLeft(rest, " \t\r\n")
	if strings.HasPrefix(t, "```") {
		if nl := strings.IndexByte(t, '\n'); nl >= 0 {
			t = t[nl+1:]
		} else {
			t = ""
		}
	}
	discarded = trim(t)
	for i := 0; i < len(t); {
		j := strings.IndexByte(t[i:], '{')
		if j < 0 {
			break
		}
		j += i
		end := balancedEnd(t, j)
		if end < 0 {
			break
		}
		if o, err := decodeObject(t[j:end]); err == nil {
			if raw, ok := o.get(actionKeys); ok && !isNoneName(cleanName(text(raw))) && cleanName(text(raw)) != "" {
				extra++
			}
		}
		i = end
	}
	return discarded, extra
}

// giveUp reads the "give_up" field: a non-empty string is the reason; true
// takes the reason from a "reason" field.
func giveUp(o object) (string, bool) {
	raw, ok := o["give_up"]
	if !ok {
		return "", false
	}
	switch v := strings.TrimSpace(string(raw)); {
	case v == "true":
		if r, ok := o["reason"]; ok {
			return trim(text(r)), true
		}
		return "", true
	case v == "false" || v == "null":
		return "", false
	}
	reason := trim(text(raw))
	return reason, reason != ""
}

// unquote decodes a JSON string literal. Unlike encoding/json it keeps
// bytes that are not valid UTF-8 as they are, so a decoded value is never
// longer than its literal.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	raw = raw[1 : len(raw)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			b = append(b, raw[i])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw, i+3); ok && i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						b = utf8.AppendRune(b, pair)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return string(b), true
}

// hex4 decodes the four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 32)
	return rune(n), err == nil
}
