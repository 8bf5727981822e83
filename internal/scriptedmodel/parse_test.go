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
			"parse script: line 1: a mapping: want a list of turns (a scenario file is read by scenario.ParseScript)"},
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
		{"delay that would overflow (attack round 3)", "- reply: a\n  fault: {kind: slow, delay_ms: 9223372036854775807}\n", nil,
			"parse script: line 1: turn 1: fault slow: delay_ms 9223372036854775807 is over 3600000 (one hour)"},
		{"retry_after on server_error", "- fault: {kind: server_error, retry_after_s: 5}\n", nil,
			"parse script: line 1: turn 1: fault server_error: retry_after_s only applies to rate_limit"},
		{"code on malformed", "- fault: {kind: malformed, code: x}\n", nil,
			"parse script: line 1: turn 1: fault malformed: code only applies to rate_limit, business_error and error_body"},
		{"missing kind", "- fault: {code: \"1301\"}\n", nil,
			"parse script: line 1: turn 1: fault: kind is missing (want one of rate_limit, server_error, business_error, error_body, malformed, slow, stream_cut)"},
		{"tool calls with content and reasoning", `
- reasoning: "The user wants a smaller cat."
  reply: "Scaling, then echoing."
  tool_calls:
    - name: image_scaling
      arguments: {path: cat.png, width: 100}
    - id: call_echo
      name: echo
      arguments: {"text": "a<b & c>d", "n": [1, 2.50, -3e2], "ok": true, "none": null}
`, []Turn{{Reasoning: "The user wants a smaller cat.", Reply: "Scaling, then echoing.", ToolCalls: []ToolCall{
			{Name: "image_scaling", Arguments: `{"path":"cat.png","width":100}`},
			{ID: "call_echo", Name: "echo", Arguments: `{"text":"a<b & c>d","n":[1,2.50,-3e2],"ok":true,"none":null}`},
		}}}, ""},
		{"arguments keep the order written", "- tool_calls: [{name: f, arguments: {z: 1, a: {y: x, b: [c]}}}]\n",
			[]Turn{{ToolCalls: []ToolCall{{Name: "f", Arguments: `{"z":1,"a":{"y":"x","b":["c"]}}`}}}}, ""},
		{"YAML numbers that are not JSON numbers are converted", "- tool_calls: [{name: f, arguments: {hex: 0x10, plus: +5, oct: 0o17, float: .5}}]\n",
			[]Turn{{ToolCalls: []ToolCall{{Name: "f", Arguments: `{"hex":16,"plus":5,"oct":15,"float":0.5}`}}}}, ""},
		{"quoted scalars stay strings", "- tool_calls: [{name: f, arguments: {w: \"100\", d: 2026-01-01, k: 'yes'}}]\n",
			[]Turn{{ToolCalls: []ToolCall{{Name: "f", Arguments: `{"w":"100","d":"2026-01-01","k":"yes"}`}}}}, ""},
		{"string arguments are sent byte for byte", "- tool_calls:\n    - name: image_scaling\n      arguments: '{\"path\": \"cat.png\", \"width\": '\n",
			[]Turn{{ToolCalls: []ToolCall{{Name: "image_scaling", Arguments: `{"path": "cat.png", "width": `}}}}, ""},
		{"block scalar keeps its line break", "- tool_calls:\n    - name: f\n      arguments: |\n        {\"a\": 1}\n",
			[]Turn{{ToolCalls: []ToolCall{{Name: "f", Arguments: "{\"a\": 1}\n"}}}}, ""},
		{"missing arguments are {}", "- tool_calls: [{name: now}]\n", []Turn{{ToolCalls: []ToolCall{{Name: "now", Arguments: "{}"}}}}, ""},
		{"empty arguments stay empty", "- tool_calls: [{name: now, arguments: ''}]\n", []Turn{{ToolCalls: []ToolCall{{Name: "now"}}}}, ""},
		{"a list as arguments", "- tool_calls: [{name: f, arguments: [1, two]}]\n", []Turn{{ToolCalls: []ToolCall{{Name: "f", Arguments: `[1,"two"]`}}}}, ""},
		{"reasoning alone", "- reasoning: hmm\n", []Turn{{Reasoning: "hmm"}}, ""},
		{"stream cut with a reply", "- reply: partial answer\n  fault: {kind: stream_cut, after_chunks: 3}\n",
			[]Turn{{Reply: "partial answer", Fault: &Fault{Kind: FaultStreamCut, AfterChunks: 3}}}, ""},
		{"stream cut alone", "- fault: {kind: stream_cut}\n", []Turn{{Fault: &Fault{Kind: FaultStreamCut}}}, ""},
		{"tool calls with slow", "- tool_calls: [{name: echo}]\n  fault: {kind: slow, delay_ms: 1}\n",
			[]Turn{{ToolCalls: []ToolCall{{Name: "echo", Arguments: "{}"}}, Fault: &Fault{Kind: FaultSlow, DelayMS: 1}}}, ""},
		{"tool_calls a mapping", "- tool_calls: {name: echo}\n", nil, "parse script: line 1: tool_calls: want a list, got a mapping"},
		{"tool_calls empty", "- reply: a\n  tool_calls: []\n", nil,
			"parse script: line 2: tool_calls: empty list (omit tool_calls for a reply without calls)"},
		{"tool call a string", "- tool_calls:\n    - echo\n", nil, `parse script: line 2: tool_calls[0]: want a mapping, got "echo"`},
		{"tool call unknown field", "- tool_calls:\n    - name: echo\n    - name: echo\n      args: {}\n", nil,
			`parse script: line 4: tool_calls[1]: unknown field "args"`},
		{"tool call without name", "- tool_calls:\n    - name: echo\n    - arguments: {}\n", nil,
			"parse script: line 3: tool_calls[1]: name is missing"},
		{"tool call null name", "- tool_calls: [{name: ~}]\n", nil, "parse script: line 1: tool_calls[0]: name is missing"},
		{"tool call name a list", "- tool_calls:\n    - name: [echo]\n", nil, "parse script: line 2: tool_calls[0].name: want a string, got a list"},
		{"tool call id a mapping", "- tool_calls:\n    - name: echo\n      id: {a: b}\n", nil,
			"parse script: line 3: tool_calls[0].id: want a string, got a mapping"},
		{"repeated id", "- tool_calls:\n    - {id: c1, name: echo}\n    - {id: c1, name: echo}\n", nil,
			`parse script: line 3: tool_calls[1].id: "c1" is also the id of tool_calls[0]`},
		{"alias as arguments", "- tool_calls:\n    - name: echo\n      arguments: &a {x: 1}\n    - name: echo\n      arguments: *a\n", nil,
			"parse script: line 5: tool_calls[1]: arguments: YAML aliases are not supported"},
		{"alias inside arguments", "- tool_calls:\n    - name: echo\n      arguments:\n        a: &x [1]\n        b: *x\n", nil,
			"parse script: line 5: tool_calls[0].arguments: YAML aliases are not supported"},
		{"alias in an arguments list", "- tool_calls:\n    - name: echo\n      arguments: {a: &x 1, b: [*x]}\n", nil,
			"parse script: line 3: tool_calls[0].arguments.b[0]: YAML aliases are not supported"},
		{"merge key in arguments", "- tool_calls:\n    - name: echo\n      arguments:\n        <<: {a: 1}\n", nil,
			"parse script: line 4: tool_calls[0].arguments: YAML merge keys are not supported"},
		{"repeated key in arguments", "- tool_calls:\n    - name: echo\n      arguments:\n        a: 1\n        a: 2\n", nil,
			`parse script: line 5: tool_calls[0].arguments: key "a" repeated`},
		{"list key in arguments", "- tool_calls:\n    - name: echo\n      arguments:\n        ? [a]\n        : 1\n", nil,
			"parse script: line 4: tool_calls[0].arguments: a key must be a string, got a list"},
		{"infinity in arguments", "- tool_calls:\n    - name: echo\n      arguments:\n        w: .inf\n", nil,
			"parse script: line 4: tool_calls[0].arguments.w: .inf is not a JSON number"},
		{"tool_calls twice", "- tool_calls: [{name: a}]\n  reply: x\n  tool_calls: [{name: b}]\n", nil,
			`parse script: line 3: mapping key "tool_calls" already defined at line 1`},
		{"tool calls with a non-slow fault", "- tool_calls: [{name: echo}]\n  fault: {kind: rate_limit}\n", nil,
			"parse script: line 1: turn 1: fault rate_limit: reply, reasoning, tool_calls and finish_reason are not sent with this fault (only with slow and stream_cut)"},
		{"reasoning with a non-slow fault", "- reasoning: hmm\n  fault: {kind: malformed}\n", nil,
			"parse script: line 1: turn 1: fault malformed: reply, reasoning, tool_calls and finish_reason are not sent with this fault (only with slow and stream_cut)"},
		{"negative after_chunks", "- fault: {kind: stream_cut, after_chunks: -1}\n", nil,
			"parse script: line 1: turn 1: fault stream_cut: after_chunks -1 is negative"},
		{"after_chunks on slow", "- reply: a\n  fault: {kind: slow, after_chunks: 2}\n", nil,
			"parse script: line 1: turn 1: fault slow: after_chunks only applies to stream_cut"},
		{"reasoning not a string", "- reasoning: [a]\n", nil, "parse script: line 1: cannot unmarshal !!seq into string"},
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
		{"tool call", "tool_calls:\n  - {name: echo, arguments: {text: hi}}\n", Turn{ToolCalls: []ToolCall{{Name: "echo", Arguments: `{"text":"hi"}`}}}, ""},
		{"tool call error has its line", "reply: a\ntool_calls:\n  - {name: echo}\n  - {id: x}\n", Turn{}, "parse script: line 4: tool_calls[1]: name is missing"},
		{"stream cut validated", "fault: {kind: stream_cut, delay_ms: 5}\n", Turn{}, "parse script: line 1: fault stream_cut: delay_ms only applies to slow"},
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
		"- reasoning: hmm\n  reply: ok\n  tool_calls:\n    - {id: c1, name: echo, arguments: {text: hi, n: [1, 2.5, 0x10, ~, true]}}\n    - {name: f, arguments: '{\"a\": '}\n",
		"- tool_calls: [{name: f, arguments: {a: &x 1, b: *x}}]\n",
		"- tool_calls: [{name: f, arguments: {<<: {a: 1}, a: 2, [k]: v, w: .inf}}]\n",
		"- tool_calls: []\n- tool_calls: {name: f}\n- tool_calls: [{id: a, name: x}, {id: a, name: y}]\n",
		"- fault: {kind: stream_cut, after_chunks: 3}\n  reply: partial\n",
		"- fault: {kind: stream_cut, after_chunks: -1}\n",
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
			for j, c := range turn.ToolCalls {
				if c.Name == "" {
					t.Fatalf("turn %d: tool_calls[%d] parsed without a name", i+1, j)
				}
			}
		}
	})
}
