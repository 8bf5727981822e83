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
