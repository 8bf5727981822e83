package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

// events joins chunk JSON texts into an event stream ending in [DONE].
func events(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func TestAssembleStreamProviderBodies(t *testing.T) {
	// Each streamed body assembles to the Reply of its JSON twin.
	for _, tt := range bodyReplies {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AssembleStream(bytes.NewReader(body(t, tt.name+".sse")))
			require.NoError(t, err)
			want := tt.want
			want.Streamed = true
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Reply mismatch (-want +got):\n%s", diff)
			}
			plain, err := DecodeResponse(200, body(t, tt.name+".json"))
			require.NoError(t, err)
			plain.Streamed = true
			if diff := cmp.Diff(plain, got); diff != "" {
				t.Errorf("streamed and plain Reply mismatch (-plain +streamed):\n%s", diff)
			}
		})
	}
}

func TestAssembleStreamRules(t *testing.T) {
	const hi = `{"id":"s","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}`
	tests := []struct {
		name   string
		stream string
		want   Reply
	}{
		{"CRLF line ends", strings.ReplaceAll(events(hi), "\n", "\r\n"),
			Reply{Content: "hi", Model: "m", ID: "s"}},
		{"CR line ends", strings.ReplaceAll(events(hi), "\n", "\r"),
			Reply{Content: "hi", Model: "m", ID: "s"}},
		{"byte order mark, comments, no space after the colon, unknown fields",
			"\uFEFF: OPENROUTER PROCESSING\n\n:\nid: 7\nretry: 3000\nfoo: bar\ndata:" + hi + "\n\ndata:[DONE]\n\n",
			Reply{Content: "hi", Model: "m", ID: "s"}},
		{"one event's data over several data lines",
			"data: {\"id\":\"s\",\"model\":\"m\",\ndata: \"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
			Reply{Content: "hi", Model: "m", ID: "s"}},
		{"empty lines and a data-less event dispatch nothing",
			"\n\n\nevent: ping\n\n" + events(hi),
			Reply{Content: "hi", Model: "m", ID: "s"}},
		{"whatever follows [DONE] is not read",
			events(hi) + "data: {not json\n\n",
			Reply{Content: "hi", Model: "m", ID: "s"}},
		{"only the first choice",
			events(`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"},"finish_reason":"stop"}]}`),
			Reply{Content: "mine", FinishReason: "stop"}},
		{"the last usage and finish_reason win; first id and model",
			events(`{"id":"a","model":"m1","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
				`{"id":"b","model":"m2","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`,
				`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":null}],"usage":null}`),
			Reply{Content: "x", FinishReason: "stop", Usage: Usage{PromptTokens: 5, CompletionTokens: 2}, Model: "m1", ID: "a"}},
		{"tool calls by index, arrived out of order, names and arguments split",
			events(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"ec","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"image_scaling","arguments":"{\"pa"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"ho","arguments":"{}"}},{"index":0,"function":{"arguments":"th\":\"a.jpg\",\"width\":8}"}}]}}]}`),
			Reply{ToolCalls: []ToolCall{
				{ID: "c1", Type: "function", Function: FunctionCall{Name: "image_scaling", Arguments: `{"path":"a.jpg","width":8}`}},
				{ID: "c2", Type: "function", Function: FunctionCall{Name: "echo", Arguments: "{}"}},
			}}},
		{"tool-call deltas without index: by id, else the last call",
			events(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"echo","arguments":"{\"te"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"xt\":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"echo","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"arguments":" "}}]}}]}`),
			Reply{ToolCalls: []ToolCall{
				{ID: "a", Type: "function", Function: FunctionCall{Name: "echo", Arguments: `{"text":1} `}},
				{ID: "b", Type: "function", Function: FunctionCall{Name: "echo", Arguments: "{}"}},
			}}},
		{"a whole call in one delta, arguments as an object",
			events(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"o","type":"function","function":{"name":"echo","arguments":{"text": "hi"}}}]},"finish_reason":"tool_calls"}]}`),
			Reply{ToolCalls: []ToolCall{{ID: "o", Type: "function", Function: FunctionCall{Name: "echo", Arguments: `{"text":"hi"}`}}}, FinishReason: "tool_calls"}},
		{"reasoning field of OpenRouter and vLLM",
			events(`{"choices":[{"index":0,"delta":{"reasoning":"think "}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning_content":"more","reasoning":"more"}}]}`),
			Reply{Reasoning: "think more"}},
		{"usage details in the usage chunk",
			events(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":7},"prompt_cache_hit_tokens":8}}`),
			Reply{Usage: Usage{PromptTokens: 10, CompletionTokens: 9, ReasoningTokens: 7, CachedTokens: 8}}},
		{"an empty stream that says [DONE]", "data: [DONE]\n\n", Reply{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AssembleStream(strings.NewReader(tt.stream))
			require.NoError(t, err)
			tt.want.Streamed = true
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reply mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// repeatReader yields head once, then unit forever.
type repeatReader struct {
	head, unit string
	off        int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		s := r.unit
		if r.head != "" {
			s = r.head
		}
		c := copy(p[n:], s[r.off:])
		n += c
		r.off += c
		if r.off == len(s) {
			r.off, r.head = 0, ""
		}
	}
	return n, nil
}

func TestAssembleStreamErrors(t *testing.T) {
	errBoom := errors.New("connection reset by peer")
	const hi = `{"id":"s","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}`
	var manyCalls strings.Builder
	for i := range maxStreamToolCalls + 1 {
		manyCalls.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(i) + `}]}}]}` + "\n\n")
	}
	tests := []struct {
		name      string
		r         io.Reader
		want      APIError
		wantInMsg string
	}{
		{"cut before [DONE]", strings.NewReader("data: " + hi + "\n\n"),
			APIError{Status: 200, Code: CodeStreamCut, Retryable: true, Message: "the stream ended before data: [DONE], after 1 event"}, ""},
		{"[DONE] not ended by an empty line is not dispatched", strings.NewReader("data: " + hi + "\n\ndata: [DONE]\n"),
			APIError{Status: 200, Code: CodeStreamCut, Retryable: true, Message: "the stream ended before data: [DONE], after 1 event"}, ""},
		{"empty body", strings.NewReader(""),
			APIError{Status: 200, Code: CodeStreamCut, Retryable: true, Message: "the stream ended before data: [DONE], after 0 events"}, ""},
		{"a read error mid-stream", io.MultiReader(strings.NewReader("data: "+hi+"\n\ndata: {\"cho"), iotest.ErrReader(errBoom)),
			APIError{Status: 200, Code: CodeStreamCut, Retryable: true, Err: errBoom,
				Message: "the stream broke before data: [DONE], after 1 event: connection reset by peer"}, ""},
		{"an error object in the stream (OpenRouter mid-stream)",
			strings.NewReader(events(hi, `{"id":"s","object":"chat.completion.chunk","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`)),
			APIError{Status: 200, Code: "502", Message: "Provider disconnected", Retryable: true}, ""},
		{"a GLM error object in the stream",
			strings.NewReader(events(`{"error":{"code":"1301","message":"Unsafe content detected."}}`)),
			APIError{Status: 200, Code: "1301", Message: "Unsafe content detected."}, ""},
		{"an error event that is not JSON", strings.NewReader("event: error\ndata: overloaded\n\n"),
			APIError{Status: 200, Message: "stream error event: overloaded"}, ""},
		{"data that is not a chunk", strings.NewReader(events(`{"choices":[{"delta":{"content":`)),
			APIError{Status: 200, Code: CodeMalformedResponse}, "decode stream: event 1: unexpected end of JSON input"},
		{"a negative token count", strings.NewReader(events(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":-1}}`)),
			APIError{Status: 200, Code: CodeMalformedResponse}, "usage.completion_tokens is -1"},
		{"content over MaxResponseBytes", &repeatReader{unit: `data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 4000) + `"}}]}` + "\n\n"},
			APIError{Status: 200, Code: CodeMalformedResponse}, "assembled reply exceeds 8388608 bytes"},
		{"a line over MaxResponseBytes", &repeatReader{head: "data: ", unit: strings.Repeat("a", 4096)},
			APIError{Status: 200, Code: CodeMalformedResponse}, "a line over 8388608 bytes after 0 events"},
		{"an event's data over MaxResponseBytes", &repeatReader{unit: "data: " + strings.Repeat("a", 4000) + "\n"},
			APIError{Status: 200, Code: CodeMalformedResponse}, "an event's data over 8388608 bytes"},
		{"too many tool calls", strings.NewReader(manyCalls.String()),
			APIError{Status: 200, Code: CodeMalformedResponse}, "more than 1024 tool calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := AssembleStream(tt.r)
			var got *APIError
			require.ErrorAs(t, err, &got)
			if tt.wantInMsg != "" {
				require.Contains(t, got.Message, tt.wantInMsg)
				got.Message = ""
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("APIError mismatch (-want +got):\n%s", diff)
			}
			if tt.want.Err != nil {
				require.ErrorIs(t, err, tt.want.Err)
			}
		})
	}
}

func TestAssembleFirstDelta(t *testing.T) {
	// first fires once, at the first delta with text or a tool call: not
	// at the role-only chunk nor at a usage chunk.
	stream := events(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0}}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ok"}}]}`)
	r := &countingReader{r: strings.NewReader(stream)}
	var at []int
	_, err := assemble(r, func() { at = append(at, r.n) })
	require.NoError(t, err)
	require.Len(t, at, 1)
	require.Greater(t, at[0], strings.Index(stream, `"hm"`), "fired before the reasoning delta was read")
	require.Less(t, at[0], strings.Index(stream, `"content":"ok"`), "fired at the content delta, not the reasoning one")
}

// countingReader counts the bytes read through it, one byte per Read.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p[:min(len(p), 1)])
	c.n += n
	return n, err
}

// TestAssembleStreamCountsIDs: tool-call ids and types count toward the
// reply's size limit (attack round 3: four 7 MiB ids assembled without an
// error, and 150 of them took 11 GB).
func TestAssembleStreamCountsIDs(t *testing.T) {
	var b strings.Builder
	id := strings.Repeat("x", 3<<20)
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":%q,\"type\":\"function\",\"function\":{\"name\":\"echo\",\"arguments\":\"{}\"}}]}}]}\n\n", i, id)
	}
	b.WriteString("data: [DONE]\n\n")
	_, err := AssembleStream(strings.NewReader(b.String()))
	require.ErrorContains(t, err, "assembled reply exceeds")
}

// TestAssembleStreamIndexOrder: extreme indexes sort without overflow.
func TestAssembleStreamIndexOrder(t *testing.T) {
	ev := func(index int64, name string) string {
		return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":%q,\"function\":{\"name\":%q,\"arguments\":\"{}\"}}]}}]}\n\n", index, name, name)
	}
	body := ev(math.MaxInt64, "max") + ev(math.MinInt64, "min") + ev(-5, "neg") + "data: [DONE]\n\n"
	r, err := AssembleStream(strings.NewReader(body))
	require.NoError(t, err)
	var names []string
	for _, c := range r.ToolCalls {
		names = append(names, c.Function.Name)
	}
	require.Equal(t, []string{"min", "neg", "max"}, names)
}

// TestAssembleStreamJoinsSplitCharacters: arguments whose pieces split a
// UTF-8 character or a \u surrogate pair between deltas come whole
// (attack round 3: they became U+FFFD).
func TestAssembleStreamJoinsSplitCharacters(t *testing.T) {
	zhong := "中" // 3 bytes
	piece := func(i int, raw string) string {
		return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"echo\",\"arguments\":\"%s\"}}]}}]}\n\n", raw)
	}
	tests := []struct{ name, a, b, want string }{
		{"raw UTF-8 split", `{\"text\":\"` + zhong[:1], zhong[1:] + `\"}`, `{"text":"中"}`},
		{"surrogate pair split", `{\"text\":\"\ud83d`, `\ude00\"}`, `{"text":"😀"}`},
		{"plain pieces", `{\"text\":`, `\"ok\"}`, `{"text":"ok"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := piece(0, tt.a) + piece(0, tt.b) + "data: [DONE]\n\n"
			r, err := AssembleStream(strings.NewReader(body))
			require.NoError(t, err)
			require.Len(t, r.ToolCalls, 1)
			require.Equal(t, tt.want, r.ToolCalls[0].Function.Arguments)
		})
	}
}
