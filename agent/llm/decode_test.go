package llm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// body reads testdata/bodies/name: provider bodies in the real shapes
// (GLM, OpenAI, DeepSeek, llama.cpp), with texts of our own.
func body(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bodies", name))
	require.NoError(t, err)
	return b
}

// Replies of the bodies in testdata/bodies, shared by the JSON and the
// streamed form of each.
var (
	glmReasoningReply = Reply{
		Content:      "Final Answer: picture/window.jpg is now 256 pixels wide.",
		Reasoning:    "The user wants the picture at width 256. The image_scaling tool does that; no tool is needed to answer how, so I explain.",
		FinishReason: "stop",
		Usage:        Usage{PromptTokens: 412, CompletionTokens: 61, ReasoningTokens: 38, CachedTokens: 384},
		Model:        "glm-4.7-flash", ID: "20260314101500a1b2c3d4e5f60718",
	}
	glmToolCallReply = Reply{
		Content:   "I'll scale the picture for you.",
		Reasoning: "The user wants the picture smaller. I have image_scaling for that, so I call it with the path and the width.",
		ToolCalls: []ToolCall{{ID: "call_-8123456789012345678", Type: "function",
			Function: FunctionCall{Name: "image_scaling", Arguments: `{"path":"picture/window.jpg","width":256}`}}},
		FinishReason: "tool_calls",
		Usage:        Usage{PromptTokens: 298, CompletionTokens: 74, ReasoningTokens: 41, CachedTokens: 43},
		Model:        "glm-4.7-flash", ID: "20260314101522f0e1d2c3b4a59687",
	}
	openAIParallelReply = Reply{
		ToolCalls: []ToolCall{
			{ID: "call_Xy7Qm2Lp9Rt4Vw1Zb3Nc5Df8", Type: "function",
				Function: FunctionCall{Name: "image_scaling", Arguments: `{"path": "picture/window.jpg", "width": 256}`}},
			{ID: "call_Ab2Cd4Ef6Gh8Ij0Kl1Mn3Op5", Type: "function",
				Function: FunctionCall{Name: "echo", Arguments: `{"text": "scaling started"}`}},
		},
		FinishReason: "tool_calls",
		Usage:        Usage{PromptTokens: 187, CompletionTokens: 58, CachedTokens: 128},
		Model:        "gpt-4.1-mini-2025-04-14", ID: "chatcmpl-CkP3sW0x9YtZ2aB4cD6eF8gH1iJ",
	}
	deepSeekReasonerReply = Reply{
		Content:      "Final Answer: done, the picture is 256 pixels wide.",
		Reasoning:    "Scale to 256 wide: the tool takes a path and a width. The observation said done, so the answer is ready.",
		FinishReason: "stop",
		Usage:        Usage{PromptTokens: 523, CompletionTokens: 88, ReasoningTokens: 64, CachedTokens: 512},
		Model:        "deepseek-reasoner", ID: "5f1c2a9e-7b3d-4e8f-9a10-b2c3d4e5f607",
	}
	deepSeekToolCallReply = Reply{
		ToolCalls: []ToolCall{{ID: "call_0_3f9d1c2b-8e7a-4b6c-9d5e-1a2b3c4d5e6f", Type: "function",
			Function: FunctionCall{Name: "echo", Arguments: `{"text":"hello from deepseek"}`}}},
		FinishReason: "tool_calls",
		Usage:        Usage{PromptTokens: 301, CompletionTokens: 22, CachedTokens: 256},
		Model:        "deepseek-chat", ID: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
	}
	llamaCppReasoningReply = Reply{
		Content:      "Final Answer: hello",
		Reasoning:    "The task is a greeting; answer directly.",
		FinishReason: "stop",
		Usage:        Usage{PromptTokens: 96, CompletionTokens: 19},
		Model:        "gpt-oss-20b", ID: "chatcmpl-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz2X",
	}
)

// bodyReplies pairs each testdata body name (without .json / .sse) with
// its Reply.
var bodyReplies = []struct {
	name string
	want Reply
}{
	{"glm-reasoning", glmReasoningReply},
	{"glm-tool-call", glmToolCallReply},
	{"openai-parallel-tool-calls", openAIParallelReply},
	{"deepseek-reasoner", deepSeekReasonerReply},
	{"deepseek-tool-call", deepSeekToolCallReply},
	{"llamacpp-reasoning", llamaCppReasoningReply},
}

func TestDecodeResponseShapes(t *testing.T) {
	// The bodies of testdata/bodies, then inline variants of the provider
	// shapes, each for one decoding rule.
	type test struct {
		name string
		body string
		want Reply
	}
	var tests []test
	for _, tt := range bodyReplies {
		tests = append(tests, test{tt.name + ".json", string(body(t, tt.name+".json")), tt.want})
	}
	tests = append(tests, []test{
		{"openrouter reasoning field (vLLM's newer name too)",
			`{"id":"gen-1","model":"deepseek/deepseek-r1","choices":[{"index":0,"message":{"role":"assistant","content":"Final Answer: 4","reasoning":"2+2 is 4.","reasoning_details":[{"type":"reasoning.text","text":"2+2 is 4."}]},"finish_reason":"stop"}]}`,
			Reply{Content: "Final Answer: 4", Reasoning: "2+2 is 4.", FinishReason: "stop", Model: "deepseek/deepseek-r1", ID: "gen-1"}},
		{"vLLM sends both reasoning fields with one text: kept once",
			`{"id":"v","model":"qwen3","choices":[{"index":0,"message":{"content":"ok","reasoning_content":"think","reasoning":"think"},"finish_reason":"stop"}]}`,
			Reply{Content: "ok", Reasoning: "think", FinishReason: "stop", Model: "qwen3", ID: "v"}},
		{"a reasoning member of another type is ignored, not fatal",
			`{"id":"x","model":"m","choices":[{"index":0,"message":{"content":"ok","reasoning":{"effort":"low"}},"finish_reason":"stop"}]}`,
			Reply{Content: "ok", FinishReason: "stop", Model: "m", ID: "x"}},
		{"arguments sent as an object are kept as compact JSON text",
			`{"id":"o","model":"llama3.1","choices":[{"index":0,"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"echo","arguments":{"text": "hi"}}}]},"finish_reason":"tool_calls"}]}`,
			Reply{ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "echo", Arguments: `{"text":"hi"}`}}},
				FinishReason: "tool_calls", Model: "llama3.1", ID: "o"}},
		{"invalid JSON arguments are kept as written; missing type is function; null id",
			`{"id":"b","model":"m","choices":[{"index":0,"message":{"content":"","tool_calls":[{"id":null,"function":{"name":"image_scaling","arguments":"{\"path\": picture.jpg"}}]},"finish_reason":"tool_calls"}]}`,
			Reply{ToolCalls: []ToolCall{{Type: "function", Function: FunctionCall{Name: "image_scaling", Arguments: `{"path": picture.jpg`}}},
				FinishReason: "tool_calls", Model: "m", ID: "b"}},
		{"null tool_calls and details are none",
			`{"id":"n","model":"m","choices":[{"index":0,"message":{"content":"hi","tool_calls":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":null,"completion_tokens_details":null}}`,
			Reply{Content: "hi", FinishReason: "stop", Usage: Usage{PromptTokens: 3, CompletionTokens: 1}, Model: "m", ID: "n"}},
		{"deepseek: prompt_tokens_details wins over prompt_cache_hit_tokens when set",
			`{"id":"d","model":"deepseek-chat","choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":90,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":64},"prompt_cache_hit_tokens":60,"prompt_cache_miss_tokens":30}}`,
			Reply{Content: "hi", FinishReason: "stop", Usage: Usage{PromptTokens: 90, CompletionTokens: 1, CachedTokens: 64}, Model: "deepseek-chat", ID: "d"}},
		{"deepseek: prompt_cache_hit_tokens when the details say 0",
			`{"id":"d","model":"deepseek-chat","choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":90,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0},"prompt_cache_hit_tokens":60}}`,
			Reply{Content: "hi", FinishReason: "stop", Usage: Usage{PromptTokens: 90, CompletionTokens: 1, CachedTokens: 60}, Model: "deepseek-chat", ID: "d"}},
		{"GLM parallel calls keep their order",
			`{"choices":[{"finish_reason":"tool_calls","index":0,"message":{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":"{\"path\":\"a.jpg\",\"width\":64}","name":"image_scaling"},"id":"call_-1","index":0,"type":"function"},{"function":{"arguments":"{\"text\":\"b\"}","name":"echo"},"id":"call_-2","index":1,"type":"function"}]}}],"id":"g","model":"glm-4.7-flash"}`,
			Reply{ToolCalls: []ToolCall{
				{ID: "call_-1", Type: "function", Function: FunctionCall{Name: "image_scaling", Arguments: `{"path":"a.jpg","width":64}`}},
				{ID: "call_-2", Type: "function", Function: FunctionCall{Name: "echo", Arguments: `{"text":"b"}`}},
			}, FinishReason: "tool_calls", Model: "glm-4.7-flash", ID: "g"}},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeResponse(200, []byte(tt.body))
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reply mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsEventStream(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		prefix      string
		want        bool
	}{
		{"data field", "", "data: {\"id", true},
		{"data field without a space", "application/json", "data:{\"i", true},
		{"comment first (OpenRouter keep-alive)", "", ": OPENROU", true},
		{"event field", "", "event: me", true},
		{"byte order mark", "", "\uFEFFdata: {", true},
		{"JSON object", "", "{\"id\":\"x", false},
		{"pretty JSON", "", "\n  {\"id\"", false},
		{"event-stream media type, empty body", "text/event-stream; charset=utf-8", "", true},
		{"event-stream media type, odd start", "text/event-stream", "retry: 1", true},
		{"event-stream media type but a JSON body", "text/event-stream", "{\"error\"", false},
		{"JSON media type", "application/json", "{\"choices", false},
		{"html", "text/html", "<html>", false},
		{"nothing", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsEventStream(tt.contentType, []byte(tt.prefix)); got != tt.want {
				t.Errorf("IsEventStream(%q, %q) = %v, want %v", tt.contentType, tt.prefix, got, tt.want)
			}
		})
	}
}
