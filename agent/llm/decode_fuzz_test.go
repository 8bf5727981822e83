package llm

import (
	"errors"
	"testing"
)

// FuzzDecodeResponse checks that any status and body decode to either a
// reply or an *APIError with that status, never a panic, and that an error
// is retryable only for the retryable statuses.
func FuzzDecodeResponse(f *testing.F) {
	for _, body := range []string{glmBody, openAIBody, llamaCppBody, ollamaBody,
		`{"error":{"code":"1302","message":"Rate limit reached for requests"}}`,
		`{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"upstream"}}}`,
		`{"error":{"message":"x","type":"server_error","param":null,"code":null}}`,
		`{"error":"model not found"}`,
		`{"object":"error","message":"bad","code":400}`,
		`{"id":"x","choices":[]}`,
		`{"id":"chatcmpl-1","choices":[{"index":0,"message":{"content":"Thou`,
		`<html>502</html>`, ``,
		`{"choices":[{"message":{"content":"","tool_calls":[{"function":{"name":"f"}}]}}]}`,
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":-1}}`,
		`{"choices":[{"message":{"content":"","tool_calls":[{"id":"c","function":{"name":"f","arguments":{"a":1}}}]}}]}`,
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1,"completion_tokens_details":{"reasoning_tokens":-1},"prompt_cache_hit_tokens":2}}`,
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
		": keep-alive\n\n",
	} {
		for _, status := range []int{200, 400, 429, 500} {
			f.Add(status, []byte(body))
		}
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		reply, err := DecodeResponse(status, body)
		if err == nil {
			if status < 200 || status > 299 {
				t.Fatalf("status %d decoded without error: %+v", status, reply)
			}
			if u := reply.Usage; u.PromptTokens < 0 || u.CompletionTokens < 0 || u.ReasoningTokens < 0 || u.CachedTokens < 0 {
				t.Fatalf("negative token counts accepted: %+v", u)
			}
			if reply.Streamed || reply.TTFT != 0 {
				t.Fatalf("a JSON body decoded as streamed: %+v", reply)
			}
			return
		}
		var ae *APIError
		if !errors.As(err, &ae) {
			t.Fatalf("error %v is not an *APIError", err)
		}
		if ae.Status != status {
			t.Fatalf("APIError.Status = %d, want %d", ae.Status, status)
		}
		if ae.Retryable && status != 408 && status != 429 && status < 500 {
			t.Fatalf("status %d marked retryable: %v", status, err)
		}
		if ae.Message == "" && status >= 200 && status < 300 && ae.Code == "" {
			t.Fatalf("error without code or message: %#v", ae)
		}
		if len(ae.Error()) > 1000+len(body) {
			t.Fatalf("error message longer than expected: %d bytes", len(ae.Error()))
		}
	})
}

func BenchmarkDecodeResponse(b *testing.B) {
	body := []byte(glmBody)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeResponse(200, body); err != nil {
			b.Fatal(err)
		}
	}
}
