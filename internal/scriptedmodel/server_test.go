package scriptedmodel

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent/llm"
)

var task = []llm.Message{{Role: llm.RoleSystem, Content: "You are an agent."}, {Role: llm.RoleUser, Content: "Scale cat.png to 100"}}

func start(t *testing.T, s *Server) *llm.Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(llm.Config{BaseURL: srv.URL + "/v1", Model: "glm-4-flash", HTTPClient: srv.Client()})
	require.NoError(t, err)
	return c
}

func post(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec
}

func TestPlainReplyBytes(t *testing.T) {
	s := New([]Turn{{Reply: "Final Answer: done"}}, WithModel("glm-4-flash"))
	rec := post(t, s, http.MethodPost, "/chat/completions",
		`{"model":"glm-4-flash","messages":[{"role":"user","content":"hello world!"}],"stream":false}`)
	want := `{"id":"chatcmpl-scripted-1","object":"chat.completion","created":1767225600,"model":"glm-4-flash","choices":[{"index":0,"message":{"role":"assistant","content":"Final Answer: done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	if diff := cmp.Diff(want, rec.Body.String()); diff != "" {
		t.Errorf("body mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
}

func TestRepliesInOrderThroughClient(t *testing.T) {
	s := New([]Turn{
		{Reply: "Thought: scale\nAction: image_scaling\nAction Input: cat.png 100"},
		{Reply: "Final Answer: cut here\nObservation: invented", FinishReason: "length"},
	})
	c := start(t, s)
	got1, err := c.Chat(context.Background(), llm.Request{Messages: task})
	require.NoError(t, err)
	second := append(task, llm.Message{Role: llm.RoleAssistant, Content: got1.Content}, llm.Message{Role: llm.RoleUser, Content: "Observation: ok"})
	got2, err := c.Chat(context.Background(), llm.Request{Messages: second})
	require.NoError(t, err)

	want := []llm.Reply{
		{Content: "Thought: scale\nAction: image_scaling\nAction Input: cat.png 100", FinishReason: "stop",
			Usage: llm.Usage{PromptTokens: 3 + (4 + 5) + (4 + 5), CompletionTokens: 16}, Model: "scripted", ID: "chatcmpl-scripted-1"},
		{Content: "Final Answer: cut here", FinishReason: "length",
			Usage: llm.Usage{PromptTokens: PromptTokens(second), CompletionTokens: 11}, Model: "scripted", ID: "chatcmpl-scripted-2"},
	}
	if diff := cmp.Diff(want, []llm.Reply{got1, got2}); diff != "" {
		t.Errorf("replies mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]llm.Message{task, second}, s.Requests()); diff != "" {
		t.Errorf("Requests mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, 2, s.Calls())
	require.Equal(t, 0, s.Remaining())
}

func TestFaultsThroughClient(t *testing.T) {
	tests := []struct {
		name string
		turn Turn
		want llm.APIError
	}{
		{"rate limit without Retry-After", Turn{Fault: &Fault{Kind: FaultRateLimit}},
			llm.APIError{Status: 429, Code: "1302", Message: "Rate limit reached for requests", Retryable: true}},
		{"rate limit with Retry-After", Turn{Fault: &Fault{Kind: FaultRateLimit, RetryAfterS: 3}},
			llm.APIError{Status: 429, Code: "1302", Message: "Rate limit reached for requests", Retryable: true, RetryAfter: 3 * time.Second}},
		{"quota 429 is not retryable", Turn{Fault: &Fault{Kind: FaultRateLimit, Code: "1113"}},
			llm.APIError{Status: 429, Code: "1113", Message: glmMessages["1113"]}},
		{"server error", Turn{Fault: &Fault{Kind: FaultServerError}},
			llm.APIError{Status: 500, Message: "The server had an error while processing your request. Sorry about that!", Retryable: true}},
		{"business error default 1301", Turn{Fault: &Fault{Kind: FaultBusinessError}},
			llm.APIError{Status: 400, Code: "1301", Message: glmMessages["1301"]}},
		{"business error unknown code", Turn{Fault: &Fault{Kind: FaultBusinessError, Code: "1214"}},
			llm.APIError{Status: 400, Code: "1214", Message: "scripted business error 1214"}},
		{"error body with 200", Turn{Fault: &Fault{Kind: FaultErrorBody}},
			llm.APIError{Status: 200, Code: "1234", Message: glmMessages["1234"]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := start(t, New([]Turn{tt.turn})).Chat(context.Background(), llm.Request{Messages: task})
			var got *llm.APIError
			require.ErrorAs(t, err, &got)
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("APIError mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	s := New([]Turn{{Fault: &Fault{Kind: FaultMalformed}}})
	rec := post(t, s, http.MethodPost, "/chat/completions", `{"messages":[]}`)
	require.Equal(t, http.StatusOK, rec.Code)
	require.True(t, strings.HasPrefix(rec.Body.String(), `{"id":"chatcmpl-scripted-1","object":"chat.completion"`), rec.Body.String())

	_, err := start(t, New([]Turn{{Fault: &Fault{Kind: FaultMalformed}}})).Chat(context.Background(), llm.Request{Messages: task})
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, llm.CodeMalformedResponse, ae.Code)
}

func TestSlow(t *testing.T) {
	t.Run("answers after the delay", func(t *testing.T) {
		c := start(t, New([]Turn{{Reply: "Final Answer: late", Fault: &Fault{Kind: FaultSlow, DelayMS: 50}}}))
		began := time.Now()
		got, err := c.Chat(context.Background(), llm.Request{Messages: task})
		require.NoError(t, err)
		require.Equal(t, "Final Answer: late", got.Content)
		if d := time.Since(began); d < 50*time.Millisecond {
			t.Errorf("reply after %v, want at least 50ms", d)
		}
	})
	t.Run("client deadline ends the wait", func(t *testing.T) {
		s := New([]Turn{{Reply: "never", Fault: &Fault{Kind: FaultSlow, DelayMS: 60_000}}})
		srv := httptest.NewServer(s)
		c, err := llm.NewClient(llm.Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, err = c.Chat(ctx, llm.Request{Messages: task})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		closed := make(chan struct{})
		go func() { srv.Close(); close(closed) }()
		select {
		case <-closed: // the handler returned: the wait ended with the request
		case <-time.After(5 * time.Second):
			t.Fatal("the slow handler still waits after the client went away")
		}
	})
}

func TestScriptExhausted(t *testing.T) {
	s := New([]Turn{{Reply: "Final Answer: one"}})
	c := start(t, s)
	_, err := c.Chat(context.Background(), llm.Request{Messages: task})
	require.NoError(t, err)
	_, err = c.Chat(context.Background(), llm.Request{Messages: task})
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 500, ae.Status)
	require.Equal(t, "script_exhausted", ae.Code)
	require.Equal(t, "scripted model: script exhausted after 1 turns (restart the server, or add turns to the script)", ae.Message)
	require.Equal(t, 2, s.Calls())
}

func TestBadRequests(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantInBody               string
	}{
		{"wrong path", http.MethodPost, "/completions", `{}`, 404, "not found: /completions"},
		{"GET", http.MethodGet, "/chat/completions", "", 405, "method GET not allowed"},
		{"not JSON", http.MethodPost, "/v1/chat/completions", "hello", 400, "scripted model: decode request"},
		{"content parts instead of a string", http.MethodPost, "/chat/completions",
			`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, 400, "decode request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New([]Turn{{Reply: "x"}})
			rec := post(t, s, tt.method, tt.path, tt.body)
			require.Equal(t, tt.wantStatus, rec.Code)
			require.Contains(t, rec.Body.String(), tt.wantInBody)
			require.Equal(t, 0, s.Calls(), "a bad request must not use a turn")
		})
	}
}

func TestUnknownFaultKindIsServedAsError(t *testing.T) {
	rec := post(t, New([]Turn{{Fault: &Fault{Kind: "teapot"}}}), http.MethodPost, "/chat/completions", `{"messages":[]}`)
	require.Equal(t, 500, rec.Code)
	require.Contains(t, rec.Body.String(), `turn 1: unknown fault kind \"teapot\"`)
}

func TestConcurrentCallsGetDistinctTurns(t *testing.T) {
	const n = 50
	script := make([]Turn, n)
	for i := range script {
		script[i] = Turn{Reply: "Final Answer: " + strings.Repeat("x", i)}
	}
	s := New(script)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for range n {
		wg.Go(func() {
			resp, err := srv.Client().Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"messages":[]}`))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			mu.Lock()
			seen[string(b)] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Len(t, seen, n, "every call must get its own turn")
	require.Equal(t, n, s.Calls())
	require.Len(t, s.Requests(), n)
}

func TestRecordedBytesAreStable(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"same"}]}`
	script := []Turn{{Reply: "a"}, {Fault: &Fault{Kind: FaultMalformed}}, {Fault: &Fault{Kind: FaultRateLimit, RetryAfterS: 2}}}
	var runs [2][]string
	for i := range runs {
		s := New(script)
		for range script {
			runs[i] = append(runs[i], post(t, s, http.MethodPost, "/chat/completions", body).Body.String())
		}
	}
	if diff := cmp.Diff(runs[0], runs[1]); diff != "" {
		t.Errorf("re-recorded bodies mismatch (-want +got):\n%s", diff)
	}
}

func TestTokens(t *testing.T) {
	require.Equal(t, 1, CompletionTokens(""))
	require.Equal(t, 1, CompletionTokens("abcd"))
	require.Equal(t, 2, CompletionTokens("abcde"))
	require.Equal(t, 3+4+0, PromptTokens([]llm.Message{{Role: llm.RoleUser}}))
}

func TestRequestsIsACopy(t *testing.T) {
	s := New([]Turn{{Reply: "a"}})
	post(t, s, http.MethodPost, "/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`)
	r := s.Requests()
	r[0][0].Content = "changed"
	require.Equal(t, "hi", s.Requests()[0][0].Content)
}
