// Package llm is the model side of the agent: the ChatModel interface and an
// OpenAI-compatible chat-completions client (Zhipu GLM by default) that
// speaks text replies, native tool calls, reasoning models and streaming.
package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Role is the author of a chat message.
type Role string

// The chat roles of the OpenAI chat-completions API.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool marks the result of one native tool call; the message's
	// ToolCallID names the call it answers.
	RoleTool Role = "tool"
)

// Message is one chat message. Role and Content are always sent (Content
// as "" when empty); ToolCalls and ToolCallID only when set, so a text
// conversation marshals as it always did.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the native tool calls of an assistant message, as the
	// model sent them (Reply.ToolCalls).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the ToolCall.ID a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one native tool call the model made.
type ToolCall struct {
	// ID is the provider's call id ("call_…"); a RoleTool message answers
	// it by this id. It may be empty when the provider sent none.
	ID string `json:"id"`
	// Type is "function" (the only kind; filled in when the provider
	// omitted it).
	Type string `json:"type"`
	// Function is the called function and its arguments.
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function half of a ToolCall.
type FunctionCall struct {
	// Name is the tool name the model chose (it may name no tool).
	Name string `json:"name"`
	// Arguments is the JSON text the model wrote, unchanged; it may be
	// invalid JSON. A provider that sent an object instead of a string
	// gets that object's compact JSON text.
	Arguments string `json:"arguments"`
}

// ToolSpec is one tool offered to the model. It marshals as
// {"type":"function","function":{"name":…,"description":…,"parameters":…}};
// description and parameters are left out when empty.
type ToolSpec struct {
	// Name is the function name the model calls.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Parameters is the JSON Schema object of the arguments; empty means
	// the tool takes none.
	Parameters json.RawMessage
}

// toolSpecJSON is the wire shape of a ToolSpec.
type toolSpecJSON struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// MarshalJSON writes the wire shape {"type":"function","function":{…}}. It
// fails when Parameters is not valid JSON.
func (s ToolSpec) MarshalJSON() ([]byte, error) {
	var w toolSpecJSON
	w.Type = "function"
	w.Function.Name, w.Function.Description, w.Function.Parameters = s.Name, s.Description, s.Parameters
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire shape MarshalJSON writes (a server reading
// a request's tools).
func (s *ToolSpec) UnmarshalJSON(b []byte) error {
	var w toolSpecJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = ToolSpec{Name: w.Function.Name, Description: w.Function.Description, Parameters: w.Function.Parameters}
	return nil
}

// Tool choices with a meaning of their own in Request.ToolChoice; any other
// non-empty value names the one tool the model must call.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// Request is one chat call.
type Request struct {
	// Messages is the conversation so far.
	Messages []Message
	// Tools are the tools offered for native tool calling; empty sends no
	// "tools" field (the text and JSON prompt protocols).
	Tools []ToolSpec
	// ToolChoice is sent as "tool_choice" when not empty: ToolChoiceAuto,
	// ToolChoiceNone, ToolChoiceRequired, or the name of one of Tools (sent
	// as {"type":"function","function":{"name":…}}). It needs Tools.
	ToolChoice string
	// NoStop sends no stop sequence and does not cut the reply at one
	// (native tool calling, where the reply holds no ReAct text); the same
	// as Config.NoStop for this call.
	NoStop bool
}

// Usage is the token accounting the API reported for one call.
type Usage struct {
	// PromptTokens is the number of input tokens.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens is the number of generated tokens, reasoning
	// included.
	CompletionTokens int `json:"completion_tokens"`
	// ReasoningTokens is the part of CompletionTokens spent reasoning
	// (usage.completion_tokens_details.reasoning_tokens); 0 when not
	// reported.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// CachedTokens is the part of PromptTokens served from the provider's
	// prompt cache (usage.prompt_tokens_details.cached_tokens, DeepSeek's
	// usage.prompt_cache_hit_tokens); 0 when not reported.
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// Reply is the model's answer to one chat call.
type Reply struct {
	// Content is the assistant message text, cut at the stop sequence
	// (unless the request sent none).
	Content string
	// Reasoning is the reasoning text of a reasoning model
	// (message.reasoning_content of DeepSeek, GLM, llama.cpp, Kimi;
	// message.reasoning of OpenRouter and vLLM). It is for traces and
	// reports: never send it back as content.
	Reasoning string
	// ToolCalls are the native tool calls of the reply, in the order the
	// provider gave them (by index when streamed).
	ToolCalls []ToolCall
	// FinishReason is the provider's finish_reason ("stop", "length",
	// "tool_calls", "sensitive", "network_error",
	// "model_context_window_exceeded", …).
	FinishReason string
	// Usage is the token usage reported by the API (zero when absent).
	Usage Usage
	// Model is the model name the API reported.
	Model string
	// ID is the completion id the API reported.
	ID string
	// Streamed reports that the reply arrived as a server-sent event
	// stream.
	Streamed bool
	// TTFT is, for a streamed reply, the time from sending the request to
	// the first content, reasoning or tool-call delta, on the client's
	// clock (Config.Now); 0 otherwise.
	TTFT time.Duration
}

// ChatModel is a chat-completions model. Implementations must be safe for
// use by one goroutine at a time; the agent never calls Chat concurrently.
type ChatModel interface {
	// Chat sends the request and returns the model's reply. A failed call
	// returns an error; provider failures are *APIError.
	Chat(ctx context.Context, req Request) (Reply, error)
}
