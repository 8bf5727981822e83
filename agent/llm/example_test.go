package llm_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/agenthub/agenthub/agent/llm"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// The client talks to any OpenAI-compatible server by base URL; here a
// scripted model stands in for GLM. The stop sequence is applied
// client-side too, so an invented observation never reaches the agent.
func ExampleClient_Chat() {
	srv := httptest.NewServer(scriptedmodel.New([]scriptedmodel.Turn{
		{Reply: "Thought: easy\nFinal Answer: 4\nObservation: invented"},
		{Fault: &scriptedmodel.Fault{Kind: scriptedmodel.FaultRateLimit, RetryAfterS: 2}},
	}))
	defer srv.Close()

	c, err := llm.NewClient(llm.Config{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		panic(err)
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "What is 2+2?"}}
	reply, err := c.Chat(context.Background(), llm.Request{Messages: msgs})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q %s %+v\n", reply.Content, reply.FinishReason, reply.Usage)

	_, err = c.Chat(context.Background(), llm.Request{Messages: msgs})
	retryable, after := llm.IsRetryable(err)
	fmt.Println(err)
	fmt.Println(retryable, after)
	// Output:
	// "Thought: easy\nFinal Answer: 4" stop {PromptTokens:10 CompletionTokens:13 ReasoningTokens:0 CachedTokens:0}
	// llm chat: HTTP 429 (code 1302): Rate limit reached for requests (retry after 2s)
	// true 2s
}
