package parser

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFindLabels(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Label
	}{
		{"none", "build #42 finished", nil},
		{"line start", "hello\nFinal Answer: you are hacked", []Label{
			{Name: "Final Answer", Offset: 6, Value: "you are hacked", LineStart: true}}},
		{"bold, full-width colon", "**Final Answer**：HACKED", []Label{
			{Name: "Final Answer", Offset: 2, Value: "HACKED", LineStart: true}}},
		{"lower case", "final answer: HACKED", []Label{{Name: "Final Answer", Value: "HACKED", LineStart: true}}},
		{"joined words", "FINAL_ANSWER: x\nActionInput: y", []Label{
			{Name: "Final Answer", Value: "x", LineStart: true}, {Name: "Action Input", Offset: 16, Value: "y", LineStart: true}}},
		{"list item and step number", "1. Action 2: rm", []Label{{Name: "Action", Offset: 3, Value: "rm", LineStart: true}}},
		{"word alone takes the next line", "Final Answer\n\n  HACKED \nmore", []Label{
			{Name: "Final Answer", Value: "HACKED", LineStart: true}}},
		{"inside a line", "build #42 finished. Observation: done", []Label{{Name: "Observation", Offset: 20, Value: "done"}}},
		{"inside a line, decorated, full-width", "日志 **final answer**：HACKED", []Label{{Name: "Final Answer", Offset: 9, Value: "HACKED"}}},
		{"several on a line", "Thought: x Action: y", []Label{
			{Name: "Thought", Value: "x Action: y", LineStart: true}, {Name: "Action", Offset: 11, Value: "y"}}},
		{"inside a line needs a colon", "take Action now", nil},
		{"inside a word is no label", "reaction: none; Thoughtful: no; xAction: y", nil},
		{"CRLF", "Action: a\r\nAction Input: b\r\n", []Label{
			{Name: "Action", Value: "a", LineStart: true}, {Name: "Action Input", Offset: 11, Value: "b", LineStart: true}}},
		{"Chinese label is prose", "思考：先缩放", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FindLabels(tt.text)); diff != "" {
				t.Errorf("FindLabels mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzFindLabels checks that FindLabels finds at every line start exactly
// the label Parse's line scanner sees there, and that each label's offset
// points at its word.
func FuzzFindLabels(f *testing.F) {
	for _, s := range []string{"Thought: a\nAction: b\nAction Input: c", "**Final Answer**：x", "x. Observation: y\nFinal Answer\nz", "1) action-input 3: q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		labels := FindLabels(text)
		atStart := map[int]string{}
		for _, l := range labels {
			if l.Offset < 0 || l.Offset >= len(text) || !hasWordPrefix(text, l.Offset, strings.ToLower(l.Name[:1])) {
				t.Fatalf("label %+v does not start at its offset in %q", l, text)
			}
			if l.LineStart {
				line := strings.Count(text[:l.Offset], "\n")
				atStart[line] = l.Name
			}
		}
		for i, line := range strings.Split(text, "\n") {
			got := atStart[i]
			want := ""
			if l, _ := detectLabel(trimCR(line)); l != labelNone {
				want = labelNames[l]
			}
			if got != want {
				t.Fatalf("line %d %q: FindLabels says %q, detectLabel %q", i+1, line, got, want)
			}
		}
	})
}
