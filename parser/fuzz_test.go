package parser

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks the invariants of Parse on arbitrary replies, seeded
// from the golden fixtures: no panic; an error is a *Error with a known
// code, a message and a line inside the reply; an action has a non-empty
// name; ActionInput holds no Observation label line; the decision's text
// is never longer than the reply; the result renders as JSON.
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("..", "fixtures", "parser", "*.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), uint8(0))
	}
	f.Add("Action: a\nAction Input: ```\nx\nObservation: y\n```", uint8(1))
	f.Add("Action: a(Observation: x)", uint8(1))
	f.Add(`{"action":"a","args":"x\nObservation: y"}`, uint8(2))
	f.Fuzz(func(t *testing.T, reply string, proto uint8) {
		p := []Protocol{Auto, Text, JSON}[int(proto)%3]
		d, err := Parse(reply, WithProtocol(p))
		checkInvariants(t, reply, d, err)
		d2, err2 := Parse(reply, WithProtocol(p))
		if !reflect.DeepEqual(d2, d) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Parse is not deterministic: %+v, %v then %+v, %v", d, err, d2, err2)
		}
	})
}

var knownCodes = map[Code]bool{
	CodeEmptyReply: true, CodeMissingAction: true, CodeMissingActionInput: true,
	CodeNoAction: true, CodeEmptyFinalAnswer: true, CodeInvalidJSON: true,
}

// checkInvariants fails t when the result of Parse(reply) breaks an
// invariant of the package.
func checkInvariants(t *testing.T, reply string, d Decision, err error) {
	t.Helper()
	out, rerr := Render(d, err)
	if rerr != nil {
		t.Fatalf("Render: %v", rerr)
	}
	if !json.Valid(out) {
		t.Fatalf("Render produced invalid JSON: %s", out)
	}
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v (%T) is not a *Error", err, err)
		}
		if !knownCodes[pe.Code] || pe.Message == "" {
			t.Fatalf("error %+v has an unknown code or no message", pe)
		}
		if lines := strings.Count(reply, "\n") + 1; pe.Line < 0 || pe.Line > lines {
			t.Fatalf("error line %d outside the reply's %d lines", pe.Line, lines)
		}
		if !reflect.DeepEqual(d, Decision{}) {
			t.Fatalf("error %v with a non-zero decision %+v", err, d)
		}
		return
	}
	switch d.Kind {
	case KindAction:
		if d.Action == "" {
			t.Fatalf("action decision without an action: %+v", d)
		}
		for _, line := range strings.Split(d.ActionInput, "\n") {
			l, _ := detectLabel(trimCR(line))
			if l == labelObservation || strings.HasPrefix(strings.TrimSpace(line), "Observation:") {
				t.Fatalf("ActionInput %q holds an Observation line %q", d.ActionInput, line)
			}
		}
	case KindFinal:
		if d.FinalAnswer == "" {
			t.Fatalf("final decision without an answer: %+v", d)
		}
	case KindGiveUp:
	default:
		t.Fatalf("unknown kind %q", d.Kind)
	}
	if d.Kind != KindAction && (d.Action != "" || d.ActionInput != "" || d.ExtraActionsIgnored != 0) {
		t.Fatalf("%s decision with action fields: %+v", d.Kind, d)
	}
	size := len(d.Thought) + len(d.Action) + len(d.ActionInput) + len(d.FinalAnswer) + len(d.GiveUp) + len(d.Discarded)
	if size > len(reply) {
		t.Fatalf("decision holds %d bytes of text, the reply only %d: %+v", size, len(reply), d)
	}
	if utf8.ValidString(reply) {
		for _, s := range []string{d.Thought, d.Action, d.ActionInput, d.FinalAnswer, d.GiveUp, d.Discarded} {
			if !utf8.ValidString(s) {
				t.Fatalf("valid UTF-8 reply gave invalid UTF-8 field %q", s)
			}
		}
	}
}
