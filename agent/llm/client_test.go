package llm

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

// Bodies modelled on real provider responses (shapes only; the texts are
// ours).
const (
	glmBody = `{"choices":[{"finish_reason":"stop","index":0,"message":{"content":"Thought: I should scale it.\nAction: image_scaling\nAction Input: cat.png 100","reasoning_content":"The user wants a smaller image.","role":"assistant"}}],"created":1773349367,"id":"2026031305024259aa","model":"glm-4-flash","object":"chat.completion","request_id":"2026031305024259aa","usage":{"completion_tokens":31,"completion_tokens_details":{"reasoning_tokens":9},"prompt_tokens":212,"prompt_tokens_details":{"cached_tokens":3},"total_tokens":243}}`

	openAIBody = `{
  "id": "chatcmpl-Abc123",
  "object": "chat.completion",
  "created": 1755521229,
  "model": "gpt-4o-2024-08-06",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "Thought: I now know the final answer\nFinal Answer: 8",
        "refusal": null,
        "annotations": []
      },
      "logprobs": null,
      "finish_reason": "stop"
    }
  ],
  "usage": {
    "prompt_tokens": 229,
    "completion_tokens": 14,
    "total_tokens": 243,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": null
}
`

	llamaCppBody = `{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant","reasoning_content":"Think.","content":"Thought: long"}}],"created":1762855698,"model":"gpt-oss-20b","system_fingerprint":"b7010-c27efd2bd","object":"chat.completion","usage":{"completion_tokens":47,"prompt_tokens":84,"total_tokens":131},"id":"chatcmpl-vR6SJg5","timings":{"cache_n":0,"prompt_n":84,"prompt_ms":292.377,"predicted_n":47,"predicted_ms":391.773}}`

	ollamaBody = `{"id":"chatcmpl-532","object":"chat.completion","created":1762855000,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"Final Answer: hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":26,"completion_tokens":5,"total_tokens":31}}`
)

// serve starts a server answering every request with status, headers and
// body, and records the last request.
type served struct {
	req  *http.Request
	body string
}

func serve(t *testing.T, status int, header map[string]string, body string) (*httptest.Server, *served) {
	t.Helper()
	got := &served{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.req, got.body = r, string(b)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func newTestClient(t *testing.T, baseURL string) *Client {
	t.Helper()
	c, err := NewClient(Config{BaseURL: baseURL, APIKey: "test-key", HTTPClient: &http.Client{},
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	require.NoError(t, err)
	return c
}

var hello = []Message{{Role: RoleSystem, Content: "You are terse."}, {Role: RoleUser, Content: "Scale cat.png"}}

func TestChatReplies(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Reply
	}{
		{"glm with reasoning_content and request_id", glmBody, Reply{
			Content:      "Thought: I should scale it.\nAction: image_scaling\nAction Input: cat.png 100",
			Reasoning:    "The user wants a smaller image.",
			FinishReason: "stop", Usage: Usage{PromptTokens: 212, CompletionTokens: 31, ReasoningTokens: 9, CachedTokens: 3},
			Model: "glm-4-flash", ID: "2026031305024259aa"}},
		{"openai pretty-printed with nulls", openAIBody, Reply{
			Content: "Thought: I now know the final answer\nFinal Answer: 8", FinishReason: "stop",
			Usage: Usage{PromptTokens: 229, CompletionTokens: 14}, Model: "gpt-4o-2024-08-06", ID: "chatcmpl-Abc123"}},
		{"llama.cpp with timings, finish_reason length", llamaCppBody, Reply{
			Content: "Thought: long", Reasoning: "Think.", FinishReason: "length",
			Usage: Usage{PromptTokens: 84, CompletionTokens: 47}, Model: "gpt-oss-20b", ID: "chatcmpl-vR6SJg5"}},
		{"ollama openai-compatible", ollamaBody, Reply{
			Content: "Final Answer: hi", FinishReason: "stop",
			Usage: Usage{PromptTokens: 26, CompletionTokens: 5}, Model: "qwen2.5:7b", ID: "chatcmpl-532"}},
		{"stop sequence cut client-side",
			`{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Action: echo\nAction Input: hi\nObservation: hi\nFinal Answer: hi"},"finish_reason":"stop"}]}`,
			Reply{Content: "Action: echo\nAction Input: hi", FinishReason: "stop", Model: "m", ID: "x"}},
		{"null content and finish_reason, no usage",
			`{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":null}]}`,
			Reply{Model: "m", ID: "x"}},
		{"sensitive finish reason passes through",
			`{"id":"g","model":"glm-4-flash","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"sensitive"}]}`,
			Reply{FinishReason: "sensitive", Model: "glm-4-flash", ID: "g"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, 200, map[string]string{"Content-Type": "application/json"}, tt.body)
			got, err := newTestClient(t, srv.URL).Chat(context.Background(), Request{Messages: hello})
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reply mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatRequestIsDeterministic(t *testing.T) {
	srv, got := serve(t, 200, nil, ollamaBody)
	c, err := NewClient(Config{BaseURL: srv.URL + "/v1/", Model: "qwen2.5:7b", Temperature: 0.2})
	require.NoError(t, err)
	_, err = c.Chat(context.Background(), Request{Messages: hello})
	require.NoError(t, err)

	wantBody := `{"model":"qwen2.5:7b","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Scale cat.png"}],"temperature":0.2,"stop":["\nObservation:"],"stream":false}`
	if diff := cmp.Diff(wantBody, got.body); diff != "" {
		t.Errorf("request body mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("/v1/chat/completions", got.req.URL.Path); diff != "" {
		t.Errorf("path mismatch (-want +got):\n%s", diff)
	}
	wantHeader := http.Header{
		"Accept":          {"application/json"},
		"Content-Type":    {"application/json"},
		"User-Agent":      {"agenthub"},
		"Accept-Encoding": {"gzip"},
		"Content-Length":  {"181"},
	}
	if diff := cmp.Diff(wantHeader, got.req.Header); diff != "" {
		t.Errorf("headers mismatch (no key configured: no Authorization) (-want +got):\n%s", diff)
	}
}

func TestChatSendsBearerKey(t *testing.T) {
	srv, got := serve(t, 200, nil, glmBody)
	_, err := newTestClient(t, srv.URL).Chat(context.Background(), Request{Messages: hello})
	require.NoError(t, err)
	if diff := cmp.Diff("Bearer test-key", got.req.Header.Get("Authorization")); diff != "" {
		t.Errorf("Authorization mismatch (-want +got):\n%s", diff)
	}
}

func TestChatAPIErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		want    APIError
		wantMsg string
	}{
		{"glm rate limit, string code, no Retry-After", 429, nil,
			`{"error":{"code":"1302","message":"Rate limit reached for requests"}}`,
			APIError{Status: 429, Code: "1302", Message: "Rate limit reached for requests", Retryable: true},
			"llm chat: HTTP 429 (code 1302): Rate limit reached for requests"},
		{"429 with Retry-After seconds", 429, map[string]string{"Retry-After": "7"},
			`{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			APIError{Status: 429, Code: "rate_limit_exceeded", Message: "Rate limit reached for gpt-4o", Retryable: true, RetryAfter: 7 * time.Second},
			"llm chat: HTTP 429 (code rate_limit_exceeded): Rate limit reached for gpt-4o (retry after 7s)"},
		{"429 with Retry-After HTTP date", 429, map[string]string{"Retry-After": "Fri, 02 Jan 2026 03:04:35 GMT"},
			`{"error":{"code":"1302","message":"slow down"}}`,
			APIError{Status: 429, Code: "1302", Message: "slow down", Retryable: true, RetryAfter: 30 * time.Second}, ""},
		{"openrouter integer code and upstream raw", 429, nil,
			`{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"model is temporarily rate-limited upstream","provider_name":"Groq"}},"user_id":"user_x"}`,
			APIError{Status: 429, Code: "429", Message: "Provider returned error: model is temporarily rate-limited upstream", Retryable: true}, ""},
		{"glm 1113 balance is a 429 that is not retryable", 429, map[string]string{"Retry-After": "5"},
			`{"error":{"code":"1113","message":"Insufficient balance, please recharge."}}`,
			APIError{Status: 429, Code: "1113", Message: "Insufficient balance, please recharge."},
			"llm chat: HTTP 429 (code 1113): Insufficient balance, please recharge."},
		{"openai insufficient_quota is not retryable", 429, nil,
			`{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			APIError{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota."}, ""},
		{"openai 404 null param, 4-space pretty", 404, nil,
			"{\n    \"error\": {\n        \"message\": \"The model `nope` does not exist.\",\n        \"type\": \"invalid_request_error\",\n        \"param\": null,\n        \"code\": \"model_not_found\"\n    }\n}\n",
			APIError{Status: 404, Code: "model_not_found", Message: "The model `nope` does not exist."}, ""},
		{"null code 500 is retryable", 500, nil,
			`{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`,
			APIError{Status: 500, Message: "The server had an error while processing your request.", Retryable: true},
			"llm chat: HTTP 500: The server had an error while processing your request."},
		{"408 is retryable", 408, nil, `{"error":{"message":"timeout","code":null}}`,
			APIError{Status: 408, Message: "timeout", Retryable: true}, ""},
		{"glm business error 400", 400, nil,
			`{"error":{"code":"1301","message":"Unsafe content detected."}}`,
			APIError{Status: 400, Code: "1301", Message: "Unsafe content detected."}, ""},
		{"ollama native string error", 404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			APIError{Status: 404, Message: `model "llama9" not found, try pulling it first`}, ""},
		{"vllm top-level error object", 400, nil,
			`{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			APIError{Status: 400, Code: "400", Message: "max_tokens is too large"}, ""},
		{"html from a proxy 502", 502, nil, "<html><body><h1>502 Bad Gateway</h1></body></html>",
			APIError{Status: 502, Message: "<html><body><h1>502 Bad Gateway</h1></body></html>", Retryable: true}, ""},
		{"empty 503", 503, nil, "", APIError{Status: 503, Message: "Service Unavailable", Retryable: true}, ""},
		{"2xx with error and no choices", 200, nil,
			`{"error":{"code":"1234","message":"Network error, please try again later"}}`,
			APIError{Status: 200, Code: "1234", Message: "Network error, please try again later"},
			"llm chat: HTTP 200 (code 1234): Network error, please try again later"},
		{"2xx malformed JSON", 200, nil, `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"Thou`,
			APIError{Status: 200, Code: CodeMalformedResponse,
				Message: `decode response: unexpected end of JSON input (body starts "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Thou")`}, ""},
		{"2xx with no choices", 200, nil, `{"id":"x","choices":[]}`,
			APIError{Status: 200, Code: CodeMalformedResponse, Message: `decode response: no choices (body starts "{\"id\":\"x\",\"choices\":[]}")`}, ""},
		{"2xx with a boolean code", 200, nil, `{"error":{"code":true}}`,
			APIError{Status: 200, Code: CodeMalformedResponse,
				Message: `decode response: error code: want string, number or null, got true (body starts "{\"error\":{\"code\":true}}")`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.status, tt.header, tt.body)
			_, err := newTestClient(t, srv.URL).Chat(context.Background(), Request{Messages: hello})
			var got *APIError
			require.ErrorAs(t, err, &got)
			if diff := cmp.Diff(tt.want, *got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("APIError mismatch (-want +got):\n%s", diff)
			}
			if tt.wantMsg != "" {
				if diff := cmp.Diff(tt.wantMsg, err.Error()); diff != "" {
					t.Errorf("message mismatch (-want +got):\n%s", diff)
				}
			}
			retryable, after := IsRetryable(err)
			if retryable != tt.want.Retryable || after != tt.want.RetryAfter {
				t.Errorf("IsRetryable = %v, %v; want %v, %v", retryable, after, tt.want.Retryable, tt.want.RetryAfter)
			}
		})
	}
}

func TestDecodeResponseRefuses(t *testing.T) {
	// 2xx bodies the agent must not take as a reply.
	tests := []struct {
		name     string
		body     string
		wantCode string
		wantMsg  []string
	}{
		{"negative prompt tokens", `{"id":"x","model":"m","choices":[{"index":0,"message":{"content":"Final Answer: hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":-5,"completion_tokens":3}}`,
			CodeMalformedResponse, []string{"usage.prompt_tokens is -5; a token count is 0 or more", "body starts"}},
		{"negative completion tokens", `{"id":"x","model":"m","choices":[{"index":0,"message":{"content":"Final Answer: hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":-1}}`,
			CodeMalformedResponse, []string{"usage.completion_tokens is -1"}},
		{"negative reasoning tokens", `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":5,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":-2}}}`,
			CodeMalformedResponse, []string{"usage.completion_tokens_details.reasoning_tokens is -2"}},
		{"negative cached tokens", `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":5,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":-7}}}`,
			CodeMalformedResponse, []string{"usage.prompt_tokens_details.cached_tokens is -7"}},
		{"negative deepseek cache hits", `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":5,"completion_tokens":3,"prompt_cache_hit_tokens":-1,"prompt_cache_miss_tokens":6}}`,
			CodeMalformedResponse, []string{"usage.prompt_cache_hit_tokens is -1"}},
		{"a stream where a JSON body was asked for", "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
			CodeUnexpectedStream, []string{"the provider streamed; use --stream"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, 200, nil, tt.body)
			_, err := newTestClient(t, srv.URL).Chat(context.Background(), Request{Messages: hello})
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			if diff := cmp.Diff(tt.wantCode, ae.Code); diff != "" {
				t.Errorf("code mismatch (-want +got):\n%s", diff)
			}
			require.Equal(t, 200, ae.Status)
			require.False(t, ae.Retryable, "the same request would get the same answer")
			for _, m := range tt.wantMsg {
				require.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestChatConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	_, err = newTestClient(t, "http://"+addr).Chat(context.Background(), Request{Messages: hello})
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	if ae.Status != 0 || ae.Code != CodeConnectionError || !ae.Retryable || ae.Err == nil {
		t.Errorf("got %+v, want status 0, connection_error, retryable, with a cause", ae)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is(err, ECONNREFUSED) = false for %v", err)
	}
	if !strings.HasPrefix(err.Error(), "llm chat: connection error: ") {
		t.Errorf("message %q does not start with the operation", err)
	}
}

func TestChatBodyCutShortIsConnectionError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(200)
		io.WriteString(w, `{"id":"x"`)
	}))
	t.Cleanup(srv.Close)
	_, err := newTestClient(t, srv.URL).Chat(context.Background(), Request{Messages: hello})
	retryable, _ := IsRetryable(err)
	require.True(t, retryable, "err = %v", err)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// hangingServer never answers; it closes started on its first request and
// lets go of the request when the test ends.
func hangingServer(t *testing.T, started chan struct{}) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv
}

func TestChatContextCancelled(t *testing.T) {
	started := make(chan struct{})
	srv := hangingServer(t, started)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := newTestClient(t, srv.URL).Chat(ctx, Request{Messages: hello})
	require.ErrorIs(t, err, context.Canceled)
	if retryable, _ := IsRetryable(err); retryable {
		t.Errorf("a cancelled call must not be retryable: %v", err)
	}
	var ae *APIError
	if errors.As(err, &ae) {
		t.Errorf("a cancelled call is not an APIError: %v", err)
	}
}

func TestChatDeadline(t *testing.T) {
	srv := hangingServer(t, make(chan struct{}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := newTestClient(t, srv.URL).Chat(ctx, Request{Messages: hello})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestChatOversizedBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":"`))
		w.Write([]byte(strings.Repeat("a", MaxResponseBytes)))
	}))
	t.Cleanup(srv.Close)
	_, err := newTestClient(t, srv.URL).Chat(context.Background(), Request{Messages: hello})
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, CodeMalformedResponse, ae.Code)
}

func TestNewClient(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantURL string
		wantErr string
	}{
		{"defaults to GLM", Config{}, "https://open.bigmodel.cn/api/paas/v4/chat/completions", ""},
		{"trailing slash trimmed", Config{BaseURL: "http://127.0.0.1:11434/v1/"}, "http://127.0.0.1:11434/v1/chat/completions", ""},
		{"not a URL", Config{BaseURL: "api.deepseek.com"}, "", `llm new client: base URL "api.deepseek.com": want http:// or https://`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(tt.cfg)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.wantURL, c.url); diff != "" {
				t.Errorf("URL mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Duration
	}{
		{"absent", "", 0},
		{"seconds", "12", 12 * time.Second},
		{"zero", "0", 0},
		{"negative", "-3", 0},
		{"huge is capped at a day", "99999999999", 24 * time.Hour},
		{"http date in the future", "Fri, 02 Jan 2026 03:05:05 GMT", time.Minute},
		{"http date in the past", "Fri, 02 Jan 2026 03:00:00 GMT", 0},
		{"garbage", "soon", 0},
		{"fraction is not seconds", "1.5", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseRetryAfter(tt.in, now); got != tt.want {
				t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestIsRetryableNonAPIErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("boom"), context.Canceled} {
		if r, d := IsRetryable(err); r || d != 0 {
			t.Errorf("IsRetryable(%v) = %v, %v; want false, 0", err, r, d)
		}
	}
}

func TestClientURLKeepsQuery(t *testing.T) {
	c, err := NewClient(Config{BaseURL: "http://127.0.0.1:9/v1/?code=abc"})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9/v1/chat/completions?code=abc", c.url)
	_, err = NewClient(Config{BaseURL: "http:///v1"})
	require.ErrorContains(t, err, "not a URL with a host")
}
