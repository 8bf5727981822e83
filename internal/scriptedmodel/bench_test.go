package scriptedmodel

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agenthub/agenthub/agent/llm"
)

// BenchmarkServeHTTP measures one scripted reply, handler only.
func BenchmarkServeHTTP(b *testing.B) {
	script := make([]Turn, b.N)
	for i := range script {
		script[i] = Turn{Reply: "Thought: scale\nAction: image_scaling\nAction Input: cat.png 100"}
	}
	s := New(script)
	body := `{"model":"glm-4-flash","messages":[{"role":"system","content":"` + strings.Repeat("x", 2000) + `"},{"role":"user","content":"Scale cat.png"}]}`
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/chat/completions", strings.NewReader(body)))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Body.String())
		}
	}
}

// BenchmarkAnswer compares the handler's streamed answer with its plain
// one for the same turn: a ReAct text reply, and a reasoning model's reply
// with two tool calls (run both in one go to read the ratio).
func BenchmarkAnswer(b *testing.B) {
	turns := []struct {
		name string
		turn Turn
	}{
		{"text", Turn{Reply: "Thought: scale\nAction: image_scaling\nAction Input: cat.png 100"}},
		{"reasoning+tools", Turn{Reasoning: "The user wants cat.png at width 100; scale it, then echo the path.", Reply: "Scaling.",
			ToolCalls: []ToolCall{{Name: "image_scaling", Arguments: `{"path":"cat.png","width":100}`}, {Name: "echo", Arguments: `{"text":"cat_100.png"}`}}}},
	}
	msgs := `"messages":[{"role":"system","content":"` + strings.Repeat("x", 2000) + `"},{"role":"user","content":"Scale cat.png"}]`
	modes := []struct{ name, body string }{
		{"plain", `{"model":"glm-4-flash",` + msgs + `,"stream":false}`},
		{"stream", `{"model":"glm-4-flash",` + msgs + `,"stream":true,"stream_options":{"include_usage":true}}`},
	}
	for _, tt := range turns {
		for _, m := range modes {
			b.Run(tt.name+"/"+m.name, func(b *testing.B) {
				script := make([]Turn, b.N)
				for i := range script {
					script[i] = tt.turn
				}
				s := New(script)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					rec := httptest.NewRecorder()
					s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/chat/completions", strings.NewReader(m.body)))
					if rec.Code != http.StatusOK {
						b.Fatal(rec.Body.String())
					}
				}
			})
		}
	}
}

// BenchmarkClientRoundTrip measures llm.Client.Chat against the scripted
// model over loopback HTTP.
func BenchmarkClientRoundTrip(b *testing.B) {
	script := make([]Turn, b.N)
	for i := range script {
		script[i] = Turn{Reply: "Final Answer: done"}
	}
	srv := httptest.NewServer(New(script))
	defer srv.Close()
	c, err := llm.NewClient(llm.Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		b.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: strings.Repeat("x", 2000)}, {Role: llm.RoleUser, Content: "go"}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Chat(context.Background(), llm.Request{Messages: msgs}); err != nil {
			b.Fatal(err)
		}
	}
}
