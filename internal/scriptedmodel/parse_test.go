package scriptedmodel

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestParseScript(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Turn
		wantErr string
	}{
		{"list of turns", `
- reply: "Thought: go\nAction: echo\nAction Input: hi"
- fault: {kind: rate_limit, retry_after_s: 2}
- fault: {kind: slow, delay_ms: 10}
  reply: "Final Answer: hi"
- reply: ""
  finish_reason: sensitive
`, []Turn{
			{Reply: "Thought: go\nAction: echo\nAction Input: hi"},
			{Fault: &Fault{Kind: FaultRateLimit, RetryAfterS: 2}},
			{Reply: "Final Answer: hi", Fault: &Fault{Kind: FaultSlow, DelayMS: 10}},
			{FinishReason: "sensitive"},
		}, ""},
		{"a scenario is not read here", "id: x\nscript:\n  react-text:\n    - reply: done\n", nil,
			"parse script: line 1: a mapping: want a list of turns (a scenario file is read by evals.ParseScript)"},
		{"two documents", "- reply: a\n---\n- reply: b\n", nil, "parse script: line 2: more than one YAML document in a script"},
		{"explicit document start", "---\n- reply: a\n", []Turn{{Reply: "a"}}, ""},
		{"alias value", "- reply: &r a\n- reply: *r\n", nil, "parse script: line 2: turn: reply: YAML aliases are not supported"},
		{"empty list", "[]", []Turn{}, ""},
		{"empty file", "", nil, "parse script: empty script: want a list of turns"},
		{"syntax error", "- reply: \"open\n- x", nil, "parse script: line 2: found unexpected end of stream"},
		{"scalar", "hello", nil, "parse script: line 1: want a list of turns"},
		{"turn not a mapping", "- reply: a\n- just text\n", nil, `parse script: line 2: turn: want a mapping, got "just text"`},
		{"unknown turn field", "- reply: a\n- replay: b\n", nil, `parse script: line 2: turn: unknown field "replay"`},
		{"unknown fault field", "- fault:\n    kind: slow\n    delay: 5\n", nil, `parse script: line 3: fault: unknown field "delay"`},
		{"wrong type", "- fault:\n    kind: rate_limit\n    retry_after_s: soon\n", nil,
			"parse script: line 3: cannot unmarshal !!str `soon` into int"},
		{"unknown kind", "- reply: a\n- fault: {kind: teapot}\n", nil,
			`parse script: line 2: turn 2: fault: unknown kind "teapot" (want one of rate_limit, server_error, business_error, error_body, malformed, slow, stream_cut)`},
		{"empty turn", "- {}\n", nil, "parse script: line 1: turn 1: turn has neither reply nor fault"},
		{"reply with a non-slow fault", "- reply: a\n  fault: {kind: server_error}\n", nil,
			"parse script: line 1: turn 1: fault server_error: reply, reasoning, tool_calls and finish_reason are not sent with this fault (only with slow and stream_cut)"},
		{"slow without reply", "- fault: {kind: slow, delay_ms: 5}\n", nil,
			"parse script: line 1: turn 1: fault slow: needs the reply to send after the delay"},
		{"negative delay", "- reply: a\n  fault: {kind: slow, delay_ms: -5}\n", nil,
			"parse script: line 1: turn 1: fault slow: delay_ms -5 is negative"},
		{"retry_after on server_error", "- fault: {kind: server_error, retry_after_s: 5}\n", nil,
			"parse script: line 1: turn 1: fault server_error: retry_after_s only applies to rate_limit"},
		{"code on malformed", "- fault: {kind: malformed, code: x}\n", nil,
			"parse script: line 1: turn 1: fault malformed: code only applies to rate_limit, business_error and error_body"},
		{"missing kind", "- fault: {code: \"1301\"}\n", nil,
			"parse script: line 1: turn 1: fault: kind is missing (want one of rate_limit, server_error, business_error, error_body, malformed, slow, stream_cut)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScript([]byte(tt.in))
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				var se *ScriptError
				require.True(t, errors.As(err, &se), "want a *ScriptError")
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeTurn(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Turn
		wantErr string
	}{
		{"reply", "reply: hi\n", Turn{Reply: "hi"}, ""},
		{"fault", "fault: {kind: rate_limit, retry_after_s: 2}\n", Turn{Fault: &Fault{Kind: FaultRateLimit, RetryAfterS: 2}}, ""},
		{"validated", "fault: {kind: server_error, retry_after_s: 2}\n", Turn{},
			"parse script: line 1: fault server_error: retry_after_s only applies to rate_limit"},
		{"unknown field", "reply: a\nreplay: b\n", Turn{}, `parse script: line 2: turn: unknown field "replay"`},
		{"not a mapping", "[a]\n", Turn{}, "parse script: line 1: turn: want a mapping, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			require.NoError(t, yaml.Unmarshal([]byte(tt.in), &doc))
			got, err := DecodeTurn(doc.Content[0])
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turn mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseScript checks that any input either parses into valid turns or
// fails with a *ScriptError, without panicking.
func FuzzParseScript(f *testing.F) {
	for _, s := range []string{
		"- reply: a\n- fault: {kind: rate_limit, retry_after_s: 2}\n",
		"- reply: done\n  finish_reason: length\n",
		"- fault:\n    kind: slow\n    delay_ms: 5\n  reply: x\n",
		"- fault: {kind: business_error, code: \"1301\"}\n",
		"- &a {reply: x}\n- *a\n", "[]", "{}", "- [1, 2]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		turns, err := ParseScript(data)
		if err != nil {
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *ScriptError", err)
			}
			return
		}
		for i, turn := range turns {
			if verr := turn.validate(); verr != nil {
				t.Fatalf("turn %d parsed but invalid: %v", i+1, verr)
			}
		}
	})
}
