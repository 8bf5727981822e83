package scriptedmodel_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent/llm"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// The official Go SDK is the client here: what it decodes and assembles
// is what real applications see.

// sdkClient serves script over loopback HTTP and returns an openai-go
// client for it (no retries) and the server.
func sdkClient(t *testing.T, script []scriptedmodel.Turn) (openai.Client, *scriptedmodel.Server) {
	t.Helper()
	s := scriptedmodel.New(script, scriptedmodel.WithModel("glm-4.7-flash"))
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test-key"),
		option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0))
	return c, s
}

// twoCalls is a reasoning model's turn with two parallel tool calls, the
// second to a tool the request does not offer.
var twoCalls = scriptedmodel.Turn{
	Reasoning: "Scale the image first, then echo the result; teleporting is faster.",
	Reply:     "Working on it.",
	ToolCalls: []scriptedmodel.ToolCall{
		{Name: "image_scaling", Arguments: `{"path":"cat.png","width":100}`},
		{ID: "call_x", Name: "teleport", Arguments: `{"to": "Mars"`},
	},
}

func sdkParams(stream bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:    "glm-4.7-flash",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are an agent."), openai.UserMessage("Scale cat.png to 100")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:       "image_scaling",
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}, "width": map[string]any{"type": "integer"}}},
		})},
	}
	if stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

// call is what a test compares of a tool call.
type call struct{ ID, Type, Name, Arguments string }

// callsOf returns the tool calls of msg.
func callsOf(msg openai.ChatCompletionMessage) []call {
	var calls []call
	for _, tc := range msg.ToolCalls {
		calls = append(calls, call{tc.ID, tc.Type, tc.Function.Name, tc.Function.Arguments})
	}
	return calls
}

var wantCalls = []call{
	{"call_1_0", "function", "image_scaling", `{"path":"cat.png","width":100}`},
	{"call_x", "function", "teleport", `{"to": "Mars"`},
}

func TestSDKToolCallsAndReasoning(t *testing.T) {
	c, s := sdkClient(t, []scriptedmodel.Turn{twoCalls, {Reply: "Final Answer: done"}})
	got, err := c.Chat.Completions.New(context.Background(), sdkParams(false))
	require.NoError(t, err)
	require.Len(t, got.Choices, 1)
	msg := got.Choices[0].Message
	if diff := cmp.Diff(wantCalls, callsOf(msg)); diff != "" {
		t.Errorf("tool calls mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, "tool_calls", got.Choices[0].FinishReason)
	require.Equal(t, "Working on it.", msg.Content)
	require.Equal(t, `"`+twoCalls.Reasoning+`"`, msg.JSON.ExtraFields["reasoning_content"].Raw())
	require.Equal(t, int64(17), got.Usage.CompletionTokensDetails.ReasoningTokens)
	require.Equal(t, "chatcmpl-scripted-1", got.ID)

	// The SDK's own follow-up (the assistant message and one tool message
	// per call) is accepted and recorded.
	p := sdkParams(false)
	p.Messages = append(p.Messages, msg.ToParam(), openai.ToolMessage("scaled", "call_1_0"), openai.ToolMessage("unknown tool", "call_x"))
	final, err := c.Chat.Completions.New(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, "Final Answer: done", final.Choices[0].Message.Content)
	req := s.Requests()[1]
	roles := make([]llm.Role, len(req))
	for i, m := range req {
		roles[i] = m.Role
	}
	if diff := cmp.Diff([]llm.Role{"system", "user", "assistant", "tool", "tool"}, roles); diff != "" {
		t.Errorf("roles mismatch (-want +got):\n%s", diff)
	}
}

func TestSDKStreamAccumulator(t *testing.T) {
	c, _ := sdkClient(t, []scriptedmodel.Turn{twoCalls})
	stream := c.Chat.Completions.NewStreaming(context.Background(), sdkParams(true))
	acc := openai.ChatCompletionAccumulator{}
	var reasoning string
	var finished []call
	chunks := 0
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		require.True(t, acc.AddChunk(chunk), "chunk %d refused by the accumulator", chunks)
		for _, ch := range chunk.Choices {
			if f, ok := ch.Delta.JSON.ExtraFields["reasoning_content"]; ok {
				var piece string
				require.NoError(t, json.Unmarshal([]byte(f.Raw()), &piece))
				reasoning += piece
			}
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, call{tc.ID, "function", tc.Name, tc.Arguments})
		}
	}
	require.NoError(t, stream.Err())
	require.Greater(t, chunks, 10, "the arguments must come split over several chunks")

	require.Len(t, acc.Choices, 1)
	msg := acc.Choices[0].Message
	if diff := cmp.Diff(wantCalls, callsOf(msg)); diff != "" {
		t.Errorf("accumulated tool calls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCalls, finished); diff != "" {
		t.Errorf("JustFinishedToolCall mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, "Working on it.", msg.Content)
	require.Equal(t, twoCalls.Reasoning, reasoning)
	require.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
	require.Equal(t, int64(17), acc.Usage.CompletionTokensDetails.ReasoningTokens)
}

func TestSDKStreamsPlainReply(t *testing.T) {
	c, _ := sdkClient(t, []scriptedmodel.Turn{{Reply: "Final Answer: Olá! 你好世界 🙂 — a reply long enough to need several deltas"}})
	stream := c.Chat.Completions.NewStreaming(context.Background(), sdkParams(true))
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	require.NoError(t, stream.Err())
	require.Equal(t, "Final Answer: Olá! 你好世界 🙂 — a reply long enough to need several deltas", acc.Choices[0].Message.Content)
	require.Equal(t, "stop", acc.Choices[0].FinishReason)
	require.Equal(t, acc.Usage.PromptTokens+acc.Usage.CompletionTokens, acc.Usage.TotalTokens)
	require.Positive(t, acc.Usage.PromptTokens)
}

func TestSDKErrors(t *testing.T) {
	t.Run("stream cut", func(t *testing.T) {
		c, _ := sdkClient(t, []scriptedmodel.Turn{{Reply: "Final Answer: never complete", Fault: &scriptedmodel.Fault{Kind: scriptedmodel.FaultStreamCut, AfterChunks: 3}}})
		stream := c.Chat.Completions.NewStreaming(context.Background(), sdkParams(true))
		n := 0
		for stream.Next() {
			n++
		}
		require.Equal(t, 3, n)
		require.Error(t, stream.Err(), "a cut stream must not end cleanly")
	})
	t.Run("error mid-stream", func(t *testing.T) {
		c, _ := sdkClient(t, []scriptedmodel.Turn{{Fault: &scriptedmodel.Fault{Kind: scriptedmodel.FaultErrorBody}}})
		stream := c.Chat.Completions.NewStreaming(context.Background(), sdkParams(true))
		for stream.Next() {
		}
		require.ErrorContains(t, stream.Err(), "Network error")
	})
	t.Run("n = 2", func(t *testing.T) {
		c, s := sdkClient(t, []scriptedmodel.Turn{{Reply: "x"}})
		p := sdkParams(false)
		p.N = openai.Int(2)
		_, err := c.Chat.Completions.New(context.Background(), p)
		var ae *openai.Error
		require.True(t, errors.As(err, &ae), "want *openai.Error, got %v", err)
		require.Equal(t, http.StatusBadRequest, ae.StatusCode)
		require.Equal(t, "n", ae.Param)
		require.Equal(t, 0, s.Calls())
	})
	t.Run("unknown endpoint", func(t *testing.T) {
		c, _ := sdkClient(t, nil)
		_, err := c.Models.List(context.Background())
		var ae *openai.Error
		require.True(t, errors.As(err, &ae), "want *openai.Error, got %v", err)
		require.Equal(t, http.StatusNotFound, ae.StatusCode)
		require.Equal(t, "not_found", ae.Code)
	})
}
