package parser_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/parser"
)

func TestErrorString(t *testing.T) {
	tests := []struct {
		name string
		err  *parser.Error
		want string
	}{
		{"with a line", &parser.Error{Code: parser.CodeMissingActionInput, Message: "m", Line: 4},
			"parse reply: line 4: missing_action_input: m"},
		{"whole reply", &parser.Error{Code: parser.CodeEmptyReply, Message: "m"},
			"parse reply: empty_reply: m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.err.Error()); diff != "" {
				t.Errorf("Error() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrorsAreTyped(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		proto parser.Protocol
		code  parser.Code
		line  int
	}{
		{"empty", "", parser.Auto, parser.CodeEmptyReply, 0},
		{"empty json shows json format", " ", parser.JSON, parser.CodeEmptyReply, 0},
		{"no label", "hello", parser.Auto, parser.CodeMissingAction, 0},
		{"input without action", "x\n\nAction Input: y", parser.Text, parser.CodeMissingAction, 3},
		{"missing input", "Thought: t\n\nAction: a", parser.Auto, parser.CodeMissingActionInput, 3},
		{"none action", "Action: None", parser.Auto, parser.CodeNoAction, 1},
		{"empty final", "\nFinal Answer:  ", parser.Auto, parser.CodeEmptyFinalAnswer, 2},
		{"invalid json line", "prose\n{\"a\": }", parser.JSON, parser.CodeInvalidJSON, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := parser.Parse(tt.reply, parser.WithProtocol(tt.proto))
			var pe *parser.Error
			require.True(t, errors.As(err, &pe), "Parse error %v is not a *parser.Error", err)
			if diff := cmp.Diff(parser.Decision{}, d); diff != "" {
				t.Errorf("decision on error mismatch (-want +got):\n%s", diff)
			}
			got := struct {
				Code parser.Code
				Line int
			}{pe.Code, pe.Line}
			want := struct {
				Code parser.Code
				Line int
			}{tt.code, tt.line}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
			require.Regexp(t, `\n(Action: |Final Answer: <your answer>|\{"thought")`, pe.Message, "the message must show the expected format")
		})
	}
}

func TestUnknownProtocolIsAuto(t *testing.T) {
	reply := `{"action": "a", "args": "b"}`
	want, wantErr := parser.Parse(reply)
	got, gotErr := parser.Parse(reply, parser.WithProtocol("yaml"))
	require.NoError(t, wantErr)
	require.NoError(t, gotErr)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse with an unknown protocol mismatch (-want +got):\n%s", diff)
	}
}

func TestRenderRejectsOtherErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"plain error", errors.New("boom"), false},
		{"wrapped parse error", fmt.Errorf("step 3: %w", &parser.Error{Code: parser.CodeNoAction, Message: "m"}), true},
		{"no error", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := parser.Render(parser.Decision{Kind: parser.KindGiveUp, GiveUp: "r"}, tt.err)
			if tt.ok {
				require.NoError(t, err)
				require.NotEmpty(t, out)
				return
			}
			require.ErrorContains(t, err, "render decision: not a parse error: boom")
			require.Nil(t, out)
		})
	}
}
