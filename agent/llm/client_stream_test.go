package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// steppingClock advances one second at every reading.
type steppingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// streamServer answers every request with the events of stream, one
// write and flush per event, and records the last request body and
// headers.
func streamServer(t *testing.T, contentType, stream string) (*httptest.Server, *served) {
	t.Helper()
	got := &served{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.req, got.body = r, string(b)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		for _, ev := range strings.SplitAfter(stream, "\n\n") {
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestChatStreamRoundTrip(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		file        string
		want        Reply
	}{
		{"glm reasoning", "text/event-stream;charset=UTF-8", "glm-reasoning.sse", glmReasoningReply},
		{"openai parallel tool calls", "text/event-stream; charset=utf-8", "openai-parallel-tool-calls.sse", openAIParallelReply},
		{"deepseek tool call, no content type", "", "deepseek-tool-call.sse", deepSeekToolCallReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := streamServer(t, tt.contentType, string(body(t, tt.file)))
			c, err := NewClient(Config{BaseURL: srv.URL, Model: "glm-4.7-flash", Stream: true, NoStop: true,
				Now: (&steppingClock{}).Now})
			require.NoError(t, err)
			reply, err := c.Chat(context.Background(), Request{Messages: hello})
			require.NoError(t, err)
			want := tt.want
			want.Streamed, want.TTFT = true, time.Second // one clock step from sending to the first delta
			if diff := cmp.Diff(want, reply); diff != "" {
				t.Errorf("Reply mismatch (-want +got):\n%s", diff)
			}
			wantBody := `{"model":"glm-4.7-flash","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Scale cat.png"}],"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`
			if diff := cmp.Diff(wantBody, got.body); diff != "" {
				t.Errorf("request body mismatch (-want +got):\n%s", diff)
			}
			require.Equal(t, "text/event-stream", got.req.Header.Get("Accept"))
		})
	}
}

func TestChatStreamCutsAtStop(t *testing.T) {
	srv, _ := streamServer(t, "text/event-stream", events(
		`{"choices":[{"index":0,"delta":{"content":"Action: echo\nAction Input: hi\nObs"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ervation: hi"},"finish_reason":"stop"}]}`))
	c, err := NewClient(Config{BaseURL: srv.URL, Stream: true})
	require.NoError(t, err)
	reply, err := c.Chat(context.Background(), Request{Messages: hello})
	require.NoError(t, err)
	require.Equal(t, "Action: echo\nAction Input: hi", reply.Content)
}

func TestChatStreamFailures(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		header      map[string]string
		body        string
		stream      bool
		want        APIError
		wantInMsg   string
		wantRetries bool
	}{
		{"a stream where JSON was asked for, by content type", 200, map[string]string{"Content-Type": "text/event-stream"},
			events(`{"choices":[{"index":0,"delta":{"content":"hi"}}]}`), false,
			APIError{Status: 200, Code: CodeUnexpectedStream, Message: unexpectedStreamMessage}, "", false},
		{"a stream where JSON was asked for, by its first bytes", 200, map[string]string{"Content-Type": "application/json"},
			events(`{"choices":[{"index":0,"delta":{"content":"hi"}}]}`), false,
			APIError{Status: 200, Code: CodeUnexpectedStream, Message: unexpectedStreamMessage}, "", false},
		{"a stream cut before [DONE]", 200, map[string]string{"Content-Type": "text/event-stream"},
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n", true,
			APIError{Status: 200, Code: CodeStreamCut, Retryable: true, Message: "the stream ended before data: [DONE], after 1 event"}, "", true},
		{"an error status to a streaming request is read as JSON", 429, map[string]string{"Retry-After": "3"},
			`{"error":{"code":"1302","message":"Rate limit reached for requests"}}`, true,
			APIError{Status: 429, Code: "1302", Message: "Rate limit reached for requests", Retryable: true, RetryAfter: 3 * time.Second}, "", true},
		{"an error inside the stream", 200, map[string]string{"Content-Type": "text/event-stream"},
			events(`{"error":{"code":"1301","message":"Unsafe content detected."}}`), true,
			APIError{Status: 200, Code: "1301", Message: "Unsafe content detected."}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.status, tt.header, tt.body)
			c, err := NewClient(Config{BaseURL: srv.URL, Stream: tt.stream})
			require.NoError(t, err)
			_, err = c.Chat(context.Background(), Request{Messages: hello})
			var got *APIError
			require.ErrorAs(t, err, &got)
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("APIError mismatch (-want +got):\n%s", diff)
			}
			retryable, _ := IsRetryable(err)
			require.Equal(t, tt.wantRetries, retryable)
		})
	}
}

func TestChatStreamPlainJSONAnswer(t *testing.T) {
	// A server that ignores "stream":true and answers JSON still answers.
	srv, _ := serve(t, 200, map[string]string{"Content-Type": "application/json"}, ollamaBody)
	c, err := NewClient(Config{BaseURL: srv.URL, Stream: true})
	require.NoError(t, err)
	reply, err := c.Chat(context.Background(), Request{Messages: hello})
	require.NoError(t, err)
	require.Equal(t, "Final Answer: hi", reply.Content)
	require.False(t, reply.Streamed)
}

func TestChatStreamCancelled(t *testing.T) {
	// The context ends while the stream is open: the error is the
	// context's, not a cut stream.
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")
		w.(http.Flusher).Flush()
		cancel()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c, err := NewClient(Config{BaseURL: srv.URL, Stream: true})
	require.NoError(t, err)
	_, err = c.Chat(ctx, Request{Messages: hello})
	require.ErrorIs(t, err, context.Canceled)
}

func TestChatToolsRoundTrip(t *testing.T) {
	// A native tool-calling turn: the tools and the tool messages go out,
	// the parallel calls come back.
	srv, got := serve(t, 200, map[string]string{"Content-Type": "application/json"}, string(body(t, "openai-parallel-tool-calls.json")))
	c, err := NewClient(Config{BaseURL: srv.URL, Model: "gpt-4.1-mini"})
	require.NoError(t, err)
	tools := []ToolSpec{
		{Name: "image_scaling", Description: "Scale an image.", Parameters: json.RawMessage(`{"type": "object",
			"properties": {"path": {"type": "string"}, "width": {"type": "integer"}}, "required": ["path", "width"]}`)},
		{Name: "echo", Description: "Echo the text."},
	}
	msgs := append(append([]Message(nil), hello...),
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Type: "function",
			Function: FunctionCall{Name: "echo", Arguments: `{"text":"a"}`}}}},
		Message{Role: RoleTool, Content: "a", ToolCallID: "call_1"})
	reply, err := c.Chat(context.Background(), Request{Messages: msgs, Tools: tools, ToolChoice: ToolChoiceAuto, NoStop: true})
	require.NoError(t, err)
	if diff := cmp.Diff(openAIParallelReply, reply); diff != "" {
		t.Errorf("Reply mismatch (-want +got):\n%s", diff)
	}
	wantBody := `{"model":"gpt-4.1-mini","messages":[` +
		`{"role":"system","content":"You are terse."},{"role":"user","content":"Scale cat.png"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"a\"}"}}]},` +
		`{"role":"tool","content":"a","tool_call_id":"call_1"}],` +
		`"temperature":0,"stream":false,` +
		`"tools":[{"type":"function","function":{"name":"image_scaling","description":"Scale an image.","parameters":{"type":"object","properties":{"path":{"type":"string"},"width":{"type":"integer"}},"required":["path","width"]}}},` +
		`{"type":"function","function":{"name":"echo","description":"Echo the text."}}],` +
		`"tool_choice":"auto"}`
	if diff := cmp.Diff(wantBody, got.body); diff != "" {
		t.Errorf("request body mismatch (-want +got):\n%s", diff)
	}
}

func TestChatRequestBodies(t *testing.T) {
	// Every option appends its field after the five of the text
	// protocol, or removes temperature / stop; nothing else moves.
	topP, seed := 0.9, int64(42)
	msgs := []Message{{Role: RoleUser, Content: "hi"}}
	echo := []ToolSpec{{Name: "echo", Parameters: json.RawMessage(`{"type":"object"}`)}}
	tests := []struct {
		name string
		cfg  Config
		req  Request
		want string
	}{
		{"defaults (the recorded text protocol)", Config{}, Request{Messages: msgs},
			`{"model":"glm-4-flash","messages":[{"role":"user","content":"hi"}],"temperature":0,"stop":["\nObservation:"],"stream":false}`},
		{"nil messages", Config{}, Request{},
			`{"model":"glm-4-flash","messages":[],"temperature":0,"stop":["\nObservation:"],"stream":false}`},
		{"o-series: no temperature, no stop", Config{Model: "o4-mini", NoTemperature: true, NoStop: true}, Request{Messages: msgs},
			`{"model":"o4-mini","messages":[{"role":"user","content":"hi"}],"stream":false}`},
		{"no stop for one request", Config{}, Request{Messages: msgs, NoStop: true},
			`{"model":"glm-4-flash","messages":[{"role":"user","content":"hi"}],"temperature":0,"stream":false}`},
		{"sampling", Config{Temperature: 0.7, TopP: &topP, Seed: &seed, MaxTokens: 512}, Request{Messages: msgs},
			`{"model":"glm-4-flash","messages":[{"role":"user","content":"hi"}],"temperature":0.7,"stop":["\nObservation:"],"stream":false,"top_p":0.9,"seed":42,"max_tokens":512}`},
		{"stream with tools and a named tool choice", Config{Stream: true}, Request{Messages: msgs, Tools: echo, ToolChoice: "echo", NoStop: true},
			`{"model":"glm-4-flash","messages":[{"role":"user","content":"hi"}],"temperature":0,"stream":true,"stream_options":{"include_usage":true},` +
				`"tools":[{"type":"function","function":{"name":"echo","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"echo"}}}`},
		{"tool choice required", Config{}, Request{Messages: msgs, Tools: echo, ToolChoice: ToolChoiceRequired},
			`{"model":"glm-4-flash","messages":[{"role":"user","content":"hi"}],"temperature":0,"stop":["\nObservation:"],"stream":false,` +
				`"tools":[{"type":"function","function":{"name":"echo","parameters":{"type":"object"}}}],"tool_choice":"required"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(tt.cfg)
			require.NoError(t, err)
			got, err := c.requestBody(tt.req)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("request body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatRefusesBadRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("a request that cannot be encoded was sent")
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	tests := []struct {
		name    string
		req     Request
		wantErr string
	}{
		{"tool choice without tools", Request{Messages: hello, ToolChoice: ToolChoiceAuto},
			`llm chat: encode request: tool_choice "auto" without tools`},
		{"tool choice naming no tool", Request{Messages: hello, Tools: []ToolSpec{{Name: "echo"}}, ToolChoice: "image_scaling"},
			`llm chat: encode request: tool_choice "image_scaling" names none of the tools`},
		{"parameters that are not JSON", Request{Messages: hello, Tools: []ToolSpec{{Name: "echo", Parameters: json.RawMessage(`{"type":`)}}},
			"llm chat: encode request: json: error calling MarshalJSON for type llm.ToolSpec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Chat(context.Background(), tt.req)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestNewClientSampling(t *testing.T) {
	over, neg := 1.5, -0.1
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"negative temperature", Config{Temperature: -1}, "llm new client: temperature -1: want 0 or more"},
		{"temperature with NoTemperature", Config{Temperature: 0.5, NoTemperature: true},
			"llm new client: temperature 0.5 with NoTemperature: set one or the other"},
		{"top_p over 1", Config{TopP: &over}, "llm new client: top_p 1.5: want 0 to 1"},
		{"negative top_p", Config{TopP: &neg}, "llm new client: top_p -0.1: want 0 to 1"},
		{"negative max tokens", Config{MaxTokens: -5}, "llm new client: max_tokens -5: want 0 (none sent) or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(tt.cfg)
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

func TestToolSpecJSON(t *testing.T) {
	spec := ToolSpec{Name: "image_scaling", Description: "Scale.", Parameters: json.RawMessage(`{"type":"object"}`)}
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	require.Equal(t, `{"type":"function","function":{"name":"image_scaling","description":"Scale.","parameters":{"type":"object"}}}`, string(b))
	var back ToolSpec
	require.NoError(t, json.Unmarshal(b, &back))
	if diff := cmp.Diff(spec, back); diff != "" {
		t.Errorf("ToolSpec mismatch (-want +got):\n%s", diff)
	}
}
