package agent

// EventType names a trace event. The names are stable: the JSONL trace and
// the scorer depend on them.
type EventType string

// The trace events, in the order a run emits them.
const (
	EventRunStarted      EventType = "run_started"
	EventContextBuilt    EventType = "context_built"
	EventLLMCall         EventType = "llm_call"
	EventParseError      EventType = "parse_error"
	EventToolCall        EventType = "tool_call"
	EventToolResult      EventType = "tool_result"
	EventRecoveryStarted EventType = "recovery_started"
	EventRecoveryResult  EventType = "recovery_result"
	EventDone            EventType = "done"
)

// Event is one trace event. Fields that do not apply to a Type are left
// zero and omitted from JSON; the JSON field names are stable.
type Event struct {
	// Type is the kind of event.
	Type EventType `json:"type"`
	// Step is the 1-based model call number the event belongs to (0 for
	// run_started and context_built).
	Step int `json:"step"`
	// Attempt is the 1-based attempt number of an llm_call.
	Attempt int `json:"attempt,omitempty"`
	// MS is the duration of the call in milliseconds (llm_call,
	// tool_result) or of the whole run (done).
	MS int64 `json:"ms,omitempty"`

	// Task is the user task (run_started).
	Task string `json:"task,omitempty"`
	// Prompt is the prompt variant name (context_built).
	Prompt string `json:"prompt,omitempty"`
	// SystemPromptBytes is the size of the system prompt (context_built).
	SystemPromptBytes int `json:"system_prompt_bytes,omitempty"`
	// ToolCount is the number of registered tools (context_built).
	ToolCount int `json:"tool_count,omitempty"`

	// PromptTokens and CompletionTokens are the usage of an llm_call.
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// FinishReason is the provider's finish_reason (llm_call).
	FinishReason string `json:"finish_reason,omitempty"`
	// Reply is the model reply text (llm_call).
	Reply string `json:"reply,omitempty"`
	// Reasoning is a reasoning model's reasoning text (llm_call); it is
	// never sent back to the model.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls counts the native tool calls of the reply (llm_call).
	ToolCalls int `json:"tool_calls,omitempty"`
	// ReasoningTokens and CachedTokens are the usage details of an
	// llm_call: completion tokens spent reasoning, prompt tokens served
	// from the provider's cache.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	CachedTokens    int `json:"cached_tokens,omitempty"`
	// Streamed says the llm_call's reply came as an event stream; TTFTMS is
	// then its time to first token, in milliseconds on the client's clock
	// (0 is a real value: shown whenever Streamed is set).
	Streamed bool  `json:"streamed,omitempty"`
	TTFTMS   int64 `json:"ttft_ms,omitempty"`
	// CallID is the native tool call id (tool_call, tool_result,
	// parse_error of one call).
	CallID string `json:"call_id,omitempty"`
	// Retryable says whether a failed llm_call will be retried, or
	// whether a tool error is retryable (tool_result).
	Retryable bool `json:"retryable,omitempty"`
	// RetryInMS is the backoff before the next attempt (llm_call).
	RetryInMS int64 `json:"retry_in_ms,omitempty"`

	// Tool and Input name a tool call (tool_call, tool_result, recovery).
	Tool  string `json:"tool,omitempty"`
	Input string `json:"input,omitempty"`
	// Status is StatusSuccess or StatusError (tool_result,
	// recovery_result).
	Status Status `json:"status,omitempty"`
	// Truncated says the observation was cut to MaxObservationBytes.
	Truncated bool `json:"truncated,omitempty"`
	// Observation is the observation text sent to the model (tool_result,
	// parse_error).
	Observation string `json:"observation,omitempty"`

	// Code is a stable error code: the parse error code (parse_error), the
	// tool error code (tool_result, recovery_*), the API error code
	// (llm_call).
	Code string `json:"code,omitempty"`
	// Error is the error text (llm_call, tool_result, done).
	Error string `json:"error,omitempty"`

	// Outcome and Steps close the run (done).
	Outcome Outcome `json:"outcome,omitempty"`
	Steps   int     `json:"steps,omitempty"`
}

// Observer receives the trace events of a run, synchronously and in order,
// from the goroutine that called Run. It must not retain the Event after
// returning unless it copies it.
type Observer interface {
	OnEvent(e Event)
}
