// Package llm is the model side of the agent: the ChatModel interface and an
// OpenAI-compatible chat-completions client (Zhipu GLM by default).
package llm

import "context"

// Role is the author of a chat message.
type Role string

// The chat roles of the OpenAI chat-completions API.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one chat message.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// Usage is the token accounting the API reported for one call.
type Usage struct {
	// PromptTokens is the number of input tokens.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens is the number of generated tokens.
	CompletionTokens int `json:"completion_tokens"`
}

// Reply is the model's answer to one chat call.
type Reply struct {
	// Content is the assistant message text, cut at the stop sequence.
	Content string
	// FinishReason is the provider's finish_reason ("stop", "length",
	// "sensitive", "network_error", "model_context_window_exceeded", …).
	FinishReason string
	// Usage is the token usage reported by the API (zero when absent).
	Usage Usage
	// Model is the model name the API reported.
	Model string
	// ID is the completion id the API reported.
	ID string
}

// ChatModel is a chat-completions model. Implementations must be safe for
// use by one goroutine at a time; the agent never calls Chat concurrently.
type ChatModel interface {
	// Chat sends the messages and returns the model's reply. A failed call
	// returns an error; provider failures are *APIError.
	Chat(ctx context.Context, messages []Message) (Reply, error)
}
