package llm_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

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

// A streamed reply of a reasoning model that calls two tools at once: the
// reasoning and the calls' arguments arrive in pieces, the usage in a last
// chunk without choices.
func ExampleAssembleStream() {
	stream := strings.Join([]string{
		`data: {"id":"c1","model":"glm-4.7-flash","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Scale it, "}}]}`,
		`data: {"choices":[{"index":0,"delta":{"reasoning_content":"then say so."}}]}`,
		`: a comment line, ignored`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"image_scaling","arguments":"{\"path\":"}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"echo","arguments":"{\"text\":\"done\"}"}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.jpg\",\"width\":64}"}}]},"finish_reason":"tool_calls"}]}`,
		`data: {"choices":[],"usage":{"prompt_tokens":300,"completion_tokens":40,"completion_tokens_details":{"reasoning_tokens":12},"prompt_tokens_details":{"cached_tokens":256}}}`,
		`data: [DONE]`,
	}, "\n\n") + "\n\n"
	reply, err := llm.AssembleStream(strings.NewReader(stream))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", reply.Reasoning)
	for _, c := range reply.ToolCalls {
		fmt.Println(c.ID, c.Function.Name, c.Function.Arguments)
	}
	fmt.Printf("%s %+v\n", reply.FinishReason, reply.Usage)

	_, err = llm.AssembleStream(strings.NewReader(`data: {"choices":[{"index":0,"delta":{"content":"Final"}}]}` + "\n\n"))
	fmt.Println(err)
	// Output:
	// "Scale it, then say so."
	// call_1 image_scaling {"path":"a.jpg","width":64}
	// call_2 echo {"text":"done"}
	// tool_calls {PromptTokens:300 CompletionTokens:40 ReasoningTokens:12 CachedTokens:256}
	// llm chat: HTTP 200 (code stream_cut): the stream ended before data: [DONE], after 1 event
}
