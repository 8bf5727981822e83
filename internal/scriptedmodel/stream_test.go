package scriptedmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// wireDir holds the one-turn scripts and their golden bodies.
const wireDir = "testdata/wire"

const (
	plainRequest  = `{"model":"m","messages":[{"role":"system","content":"You are an agent."},{"role":"user","content":"Scale cat.png"}],"stream":false}`
	streamRequest = `{"model":"m","messages":[{"role":"system","content":"You are an agent."},{"role":"user","content":"Scale cat.png"}],"stream":true,"stream_options":{"include_usage":true}}`
)

// serve sends body to h and returns the answer and whether the handler
// aborted (panicked with http.ErrAbortHandler, as for a stream_cut).
func serve(t testing.TB, h http.Handler, body string) (rec *httptest.ResponseRecorder, aborted bool) {
	t.Helper()
	rec = httptest.NewRecorder()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if r != http.ErrAbortHandler {
					panic(r)
				}
				aborted = true
			}
		}()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
	}()
	return rec, aborted
}

// readSSE splits an event stream into the data of its events and reports
// whether it ended with [DONE]; every event must be one "data: " line.
func readSSE(body []byte) (events [][]byte, done bool, err error) {
	if len(body) == 0 {
		return nil, false, nil
	}
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		return nil, false, fmt.Errorf("stream does not end with a blank line: %q", body[max(0, len(body)-40):])
	}
	for i, ev := range bytes.Split(body[:len(body)-2], []byte("\n\n")) {
		data, ok := bytes.CutPrefix(ev, []byte("data: "))
		if !ok || bytes.ContainsRune(data, '\n') {
			return nil, false, fmt.Errorf("event %d is not one data line: %q", i, ev)
		}
		if done {
			return nil, false, fmt.Errorf("event %d after [DONE]", i)
		}
		if string(data) == "[DONE]" {
			done = true
			continue
		}
		events = append(events, data)
	}
	return events, done, nil
}

// assemble rebuilds the chat.completion a stream carries, checking the
// chunks are shaped like OpenAI's: the role first and only there, one
// choice per chunk until the one with finish_reason, tool calls by index in
// order with id, type and name in their first chunk only, usage in a last
// chunk without choices.
func assemble(events [][]byte) (completion, error) {
	var out completion
	var msg message
	var finish *string
	var u *usage
	for i, ev := range events {
		var c chunk
		dec := json.NewDecoder(bytes.NewReader(ev))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return out, fmt.Errorf("chunk %d: %v", i, err)
		}
		if c.Object != "chat.completion.chunk" {
			return out, fmt.Errorf("chunk %d: object %q", i, c.Object)
		}
		if i == 0 {
			out.ID, out.Created, out.Model = c.ID, c.Created, c.Model
		} else if c.ID != out.ID || c.Created != out.Created || c.Model != out.Model {
			return out, fmt.Errorf("chunk %d: id, created or model changed", i)
		}
		if u != nil {
			return out, fmt.Errorf("chunk %d after the usage chunk", i)
		}
		if len(c.Choices) == 0 {
			if c.Usage == nil || finish == nil {
				return out, fmt.Errorf("chunk %d: no choices and no usage, or usage before finish_reason", i)
			}
			u = c.Usage
			continue
		}
		if len(c.Choices) != 1 || c.Choices[0].Index != 0 || c.Usage != nil || finish != nil {
			return out, fmt.Errorf("chunk %d: want one choice with index 0, without usage, before finish_reason", i)
		}
		ch := c.Choices[0]
		d := ch.Delta
		if (i == 0) != (d.Role == "assistant") || (i > 0 && d.Role != "") {
			return out, fmt.Errorf("chunk %d: role %q (want assistant in the first chunk only)", i, d.Role)
		}
		msg.Role = "assistant"
		if d.Content != nil {
			msg.Content += *d.Content
		}
		msg.ReasoningContent += d.ReasoningContent
		for _, tc := range d.ToolCalls {
			switch {
			case tc.Index == nil:
				return out, fmt.Errorf("chunk %d: tool call without index", i)
			case *tc.Index == len(msg.ToolCalls):
				if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
					return out, fmt.Errorf("chunk %d: first chunk of call %d lacks id, type or name", i, *tc.Index)
				}
				msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: tc.ID, Type: tc.Type, Function: tc.Function})
			case *tc.Index == len(msg.ToolCalls)-1:
				if tc.ID != "" || tc.Type != "" || tc.Function.Name != "" {
					return out, fmt.Errorf("chunk %d: later chunk of call %d repeats id, type or name", i, *tc.Index)
				}
				msg.ToolCalls[*tc.Index].Function.Arguments += tc.Function.Arguments
			default:
				return out, fmt.Errorf("chunk %d: tool call index %d out of order", i, *tc.Index)
			}
		}
		finish = ch.FinishReason
	}
	if finish == nil {
		return out, errors.New("no chunk with finish_reason")
	}
	out.Object = "chat.completion"
	out.Choices = []choice{{Message: msg, FinishReason: *finish}}
	if u != nil {
		out.Usage = *u
	}
	return out, nil
}

// checkStreamMatches streams the turn and answers it plainly (on two
// servers with the options) and fails when the assembled stream differs.
func checkStreamMatches(t testing.TB, turn Turn, opts ...Option) {
	t.Helper()
	plain, _ := serve(t, New([]Turn{turn}, opts...), plainRequest)
	require.Equal(t, http.StatusOK, plain.Code, plain.Body.String())
	var want completion
	require.NoError(t, json.Unmarshal(plain.Body.Bytes(), &want))

	streamed, _ := serve(t, New([]Turn{turn}, opts...), streamRequest)
	require.Equal(t, http.StatusOK, streamed.Code, streamed.Body.String())
	require.Equal(t, "text/event-stream", streamed.Header().Get("Content-Type"))
	events, done, err := readSSE(streamed.Body.Bytes())
	require.NoError(t, err)
	require.True(t, done, "the stream must end with [DONE]")
	got, err := assemble(events)
	require.NoError(t, err, "stream:\n%s", streamed.Body)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assembled stream mismatch (-want +got):\n%s", diff)
	}
}

// wireFixtures returns the names of testdata/wire/*.yaml.
func wireFixtures(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(wireDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(filepath.Base(p), ".yaml")
	}
	return names
}

// TestWireGolden serves each one-turn script of testdata/wire plainly and
// streamed and compares the bodies with NAME.json and NAME.sse; -update
// rewrites them.
func TestWireGolden(t *testing.T) {
	for _, name := range wireFixtures(t) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(wireDir, name+".yaml"))
			require.NoError(t, err)
			turns, err := ParseScript(data)
			require.NoError(t, err)
			require.Len(t, turns, 1)
			for _, g := range []struct{ ext, request string }{{".json", plainRequest}, {".sse", streamRequest}} {
				rec, aborted := serve(t, New(turns), g.request)
				require.False(t, aborted)
				require.Equal(t, http.StatusOK, rec.Code)
				path := filepath.Join(wireDir, name+g.ext)
				if *update {
					require.NoError(t, os.WriteFile(path, rec.Body.Bytes(), 0o644))
					continue
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run with -update to create it")
				if diff := cmp.Diff(string(want), rec.Body.String()); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
				}
			}
			checkStreamMatches(t, turns[0])
		})
	}
}

func TestStreamMatchesCompletion(t *testing.T) {
	tests := []struct {
		name  string
		turn  Turn
		runes int
	}{
		{"one rune per delta", Turn{Reasoning: "ab", Reply: "héllo", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a":1}`}}}, 1},
		{"one delta per text", Turn{Reasoning: "ab", Reply: "héllo", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a":1}`}}}, 1000},
		{"three calls", Turn{ToolCalls: []ToolCall{{Name: "a"}, {Name: "b", Arguments: "x"}, {ID: "z", Name: "c", Arguments: strings.Repeat("é", 30)}}}, 7},
		{"empty reply with a finish reason", Turn{FinishReason: "sensitive"}, 8},
		{"finish reason overrides tool_calls", Turn{FinishReason: "stop", ToolCalls: []ToolCall{{Name: "a", Arguments: "{}"}}}, 8},
		{"invalid UTF-8 is replaced the same way", Turn{Reply: "a\xffb\xe2\x82", ToolCalls: []ToolCall{{Name: "f", Arguments: "\xc3("}}}, 1},
		{"HTML characters", Turn{Reply: "<b>&amp;</b>", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"t":"<&>"}`}}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkStreamMatches(t, tt.turn, WithChunkRunes(tt.runes))
		})
	}
}

func TestStreamShape(t *testing.T) {
	turn := Turn{Reasoning: "think", Reply: "0123456789", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"abc":"defgh"}`}}}
	tests := []struct {
		name, request string
		runes         int
		want          []string
	}{
		{"deltas of 4 runes and usage", streamRequest, 4, []string{
			`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`,
			`{"index":0,"delta":{"reasoning_content":"thin"},"finish_reason":null}`,
			`{"index":0,"delta":{"reasoning_content":"k"},"finish_reason":null}`,
			`{"index":0,"delta":{"content":"0123"},"finish_reason":null}`,
			`{"index":0,"delta":{"content":"4567"},"finish_reason":null}`,
			`{"index":0,"delta":{"content":"89"},"finish_reason":null}`,
			`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1_0","type":"function","function":{"name":"f","arguments":"{\"ab"}}]},"finish_reason":null}`,
			`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"c\":\""}}]},"finish_reason":null}`,
			`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"defg"}}]},"finish_reason":null}`,
			`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"h\"}"}}]},"finish_reason":null}`,
			`{"index":0,"delta":{},"finish_reason":"tool_calls"}`,
			`usage {"prompt_tokens":20,"completion_tokens":9,"total_tokens":29,"completion_tokens_details":{"reasoning_tokens":2}}`,
		}},
		{"no usage chunk unless asked", strings.Replace(streamRequest, `,"stream_options":{"include_usage":true}`, "", 1), 100, []string{
			`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`,
			`{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}`,
			`{"index":0,"delta":{"content":"0123456789"},"finish_reason":null}`,
			`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1_0","type":"function","function":{"name":"f","arguments":"{\"abc\":\"defgh\"}"}}]},"finish_reason":null}`,
			`{"index":0,"delta":{},"finish_reason":"tool_calls"}`,
		}},
		{"include_usage false", strings.Replace(streamRequest, `"include_usage":true`, `"include_usage":false`, 1), 100, []string{
			`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`,
			`{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}`,
			`{"index":0,"delta":{"content":"0123456789"},"finish_reason":null}`,
			`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1_0","type":"function","function":{"name":"f","arguments":"{\"abc\":\"defgh\"}"}}]},"finish_reason":null}`,
			`{"index":0,"delta":{},"finish_reason":"tool_calls"}`,
		}},
	}
	const head = `{"id":"chatcmpl-scripted-1","object":"chat.completion.chunk","created":1767225600,"model":"scripted","choices":`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, _ := serve(t, New([]Turn{turn}, WithChunkRunes(tt.runes)), tt.request)
			events, done, err := readSSE(rec.Body.Bytes())
			require.NoError(t, err)
			require.True(t, done)
			var got []string
			for _, ev := range events {
				s, ok := strings.CutPrefix(string(ev), head)
				require.True(t, ok, "chunk %s", ev)
				if u, ok := strings.CutPrefix(s, `[],"usage":`); ok {
					got = append(got, "usage "+strings.TrimSuffix(u, "}"))
					continue
				}
				got = append(got, strings.TrimSuffix(strings.TrimPrefix(s, "["), "]}"))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplyBodies(t *testing.T) {
	const prefix = `{"id":"chatcmpl-scripted-1","object":"chat.completion","created":1767225600,"model":"scripted","choices":[{"index":0,"message":`
	tests := []struct {
		name string
		turn Turn
		want string
	}{
		{"content only is unchanged", Turn{Reply: "abcde"},
			`{"role":"assistant","content":"abcde"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22}}`},
		{"tool calls, default ids", Turn{ToolCalls: []ToolCall{{Name: "echo", Arguments: `{"text":"hi"}`}, {Name: "now", Arguments: "{}"}}},
			`{"role":"assistant","content":"","tool_calls":[{"id":"call_1_0","type":"function","function":{"name":"echo","arguments":"{\"text\":\"hi\"}"}},{"id":"call_1_1","type":"function","function":{"name":"now","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":7,"total_tokens":27}}`},
		{"reasoning counts as completion tokens", Turn{Reasoning: "123456789", Reply: "ok"},
			`{"role":"assistant","content":"ok","reasoning_content":"123456789"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":4,"total_tokens":24,"completion_tokens_details":{"reasoning_tokens":3}}}`},
		{"scripted finish reason with calls", Turn{FinishReason: "length", ToolCalls: []ToolCall{{ID: "x", Name: "f", Arguments: `{"a`}}},
			`{"role":"assistant","content":"","tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{\"a"}}]},"finish_reason":"length"}],"usage":{"prompt_tokens":20,"completion_tokens":1,"total_tokens":21}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, _ := serve(t, New([]Turn{tt.turn}), plainRequest)
			require.Equal(t, http.StatusOK, rec.Code)
			if diff := cmp.Diff(prefix+tt.want, rec.Body.String()); diff != "" {
				t.Errorf("body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamFaults(t *testing.T) {
	reply := Turn{Reasoning: "hmm", Reply: "Final Answer: done", ToolCalls: []ToolCall{{Name: "echo", Arguments: `{"text":"a long enough text"}`}}}
	full, _ := serve(t, New([]Turn{reply}), streamRequest)
	all, _, err := readSSE(full.Body.Bytes())
	require.NoError(t, err)
	plainFull, _ := serve(t, New([]Turn{reply}), plainRequest)
	with := func(f Fault) Turn { t := reply; t.Fault = &f; return t }

	tests := []struct {
		name, request string
		turn          Turn
		wantStatus    int
		wantType      string
		wantEvents    [][]byte // for an event stream
		wantBody      string   // otherwise
		wantDone      bool
		wantAborted   bool
	}{
		{"cut after 3 chunks", streamRequest, with(Fault{Kind: FaultStreamCut, AfterChunks: 3}), 200, "text/event-stream", all[:3], "", false, true},
		{"cut before any chunk", streamRequest, with(Fault{Kind: FaultStreamCut}), 200, "text/event-stream", nil, "", false, true},
		{"cut after every chunk", streamRequest, with(Fault{Kind: FaultStreamCut, AfterChunks: 1000}), 200, "text/event-stream", all, "", false, true},
		{"cut of a plain call sends half the body", plainRequest, with(Fault{Kind: FaultStreamCut, AfterChunks: 2}), 200, "application/json", nil,
			plainFull.Body.String()[:plainFull.Body.Len()/2], false, true},
		{"slow then streamed", streamRequest, with(Fault{Kind: FaultSlow, DelayMS: 1}), 200, "text/event-stream", all, "", true, false},
		{"malformed chunk", streamRequest, Turn{Fault: &Fault{Kind: FaultMalformed}}, 200, "text/event-stream",
			[][]byte{[]byte(`{"id":"chatcmpl-scripted-1","object":"chat.completion.chunk","created":1767225600,"model":"scr`)}, "", true, false},
		{"error body mid-stream, no [DONE]", streamRequest, Turn{Fault: &Fault{Kind: FaultErrorBody}}, 200, "text/event-stream",
			[][]byte{[]byte(`{"error":{"code":"1234","message":"Network error, error id: scripted, please try again later."}}`)}, "", false, false},
		{"rate limit is JSON even when streaming", streamRequest, Turn{Fault: &Fault{Kind: FaultRateLimit}}, 429, "application/json", nil,
			`{"error":{"code":"1302","message":"Rate limit reached for requests"}}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, aborted := serve(t, New([]Turn{tt.turn}), tt.request)
			require.Equal(t, tt.wantStatus, rec.Code)
			require.Equal(t, tt.wantType, rec.Header().Get("Content-Type"))
			require.Equal(t, tt.wantAborted, aborted, "aborted")
			if tt.wantType != "text/event-stream" {
				if diff := cmp.Diff(tt.wantBody, rec.Body.String()); diff != "" {
					t.Errorf("body mismatch (-want +got):\n%s", diff)
				}
				return
			}
			events, done, err := readSSE(rec.Body.Bytes())
			require.NoError(t, err)
			require.Equal(t, tt.wantDone, done, "[DONE]")
			if diff := cmp.Diff(tt.wantEvents, events); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStreamCutClosesTheConnection checks over real HTTP that a cut stream
// (or body) is an unexpected EOF for the client, after the chunks sent.
func TestStreamCutClosesTheConnection(t *testing.T) {
	tests := []struct {
		name, request, wantPrefix string
	}{
		{"stream", streamRequest, `data: {"id":"chatcmpl-scripted-1","object":"chat.completion.chunk"`},
		{"plain", plainRequest, `{"id":"chatcmpl-scripted-1","object":"chat.completion"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New([]Turn{{Reply: "Final Answer: done", Fault: &Fault{Kind: FaultStreamCut, AfterChunks: 2}}})
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			resp, err := srv.Client().Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(tt.request))
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			b, err := io.ReadAll(resp.Body)
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			require.True(t, strings.HasPrefix(string(b), tt.wantPrefix), "got %q", b)
			require.NotContains(t, string(b), "[DONE]")
			require.Equal(t, 1, s.Calls())
		})
	}
}

func TestUnsupportedRequests(t *testing.T) {
	tests := []struct {
		name, body string
		wantStatus int
		wantBody   string
	}{
		{"n = 2", `{"messages":[],"n":2}`, 400,
			`{"error":{"message":"scripted model: n = 2 is not supported (one choice per call: omit n or send 1)","type":"invalid_request_error","param":"n","code":"unsupported_value"}}`},
		{"n = 0", `{"messages":[],"n":0}`, 400,
			`{"error":{"message":"scripted model: n = 0 is not supported (one choice per call: omit n or send 1)","type":"invalid_request_error","param":"n","code":"unsupported_value"}}`},
		{"stream_options without stream", `{"messages":[],"stream":false,"stream_options":{"include_usage":true}}`, 400,
			`{"error":{"message":"scripted model: stream_options is only allowed with \"stream\": true","type":"invalid_request_error","param":"stream_options","code":"invalid_value"}}`},
		{"n not a number", `{"messages":[],"n":"2"}`, 400, ""},
		{"n = 1 is served", `{"messages":[],"n":1}`, 200, ""},
		{"n null is served", `{"messages":[],"n":null,"stream_options":null}`, 200, ""},
		{"tools are accepted", `{"messages":[],"tools":[{"type":"function","function":{"name":"echo","parameters":{"type":"object"}}}],"tool_choice":"auto"}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New([]Turn{{ToolCalls: []ToolCall{{Name: "teleport", Arguments: "{}"}}}})
			rec, _ := serve(t, s, tt.body)
			require.Equal(t, tt.wantStatus, rec.Code, rec.Body.String())
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			if tt.wantStatus != 200 {
				require.Equal(t, 0, s.Calls(), "a refused request must not use a turn")
			} else {
				require.Contains(t, rec.Body.String(), `"name":"teleport"`, "a call to a tool not offered is still sent")
			}
			if tt.wantBody != "" {
				if diff := cmp.Diff(tt.wantBody, rec.Body.String()); diff != "" {
					t.Errorf("body mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestSplitRunes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"abc", 3, []string{"abc"}},
		{"abcd", 3, []string{"abc", "d"}},
		{"héllo🙂x", 2, []string{"hé", "ll", "o🙂", "x"}},
		{"a\xffb", 1, []string{"a", "\xff", "b"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, splitRunes(tt.in, tt.n)); diff != "" {
			t.Errorf("splitRunes(%q, %d) mismatch (-want +got):\n%s", tt.in, tt.n, diff)
		}
	}
}

// FuzzStreamMatchesCompletion checks that every valid turn without a
// fault, streamed with any delta size and assembled from the SSE bytes,
// equals its non-streamed answer.
func FuzzStreamMatchesCompletion(f *testing.F) {
	for _, name := range wireFixtures(f) {
		data, err := os.ReadFile(filepath.Join(wireDir, name+".yaml"))
		require.NoError(f, err)
		for _, n := range []uint8{1, 3, 8} {
			f.Add(data, n)
		}
	}
	f.Add([]byte("- {reasoning: \"\\u00e9\", tool_calls: [{name: a, arguments: x}, {name: b}]}\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		turns, err := ParseScript(data)
		if err != nil {
			return
		}
		for _, turn := range turns {
			if turn.Fault != nil {
				continue
			}
			checkStreamMatches(t, turn, WithChunkRunes(int(n)))
		}
	})
}
