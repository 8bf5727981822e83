package agent

import (
	"context"
	"errors"
	"time"

	"github.com/agenthub/agenthub/agent/llm"
	"github.com/agenthub/agenthub/agent/tools"
	"github.com/agenthub/agenthub/parser"
)

// Tool is something the model can call by name: tools.Tool, the
// interface the bundled tools (and tools.Build) are written against.
// Execute receives the raw Action Input text and returns the text of the
// observation; a failure is a *tools.Error or any other error, which the
// agent reports as tool_error.
type Tool = tools.Tool

// Recoverer is an optional interface of a Tool: after the tool failed with
// the given error code, Recover returns extra data that helps the model
// correct its call (for image_scaling after file_not_found: the image files
// in the folder it asked for). ok is false when there is nothing to offer.
// Data with a method Truncated() bool that returns true was cut to a size
// limit: the observation then says "truncated": true.
type Recoverer interface {
	Recover(ctx context.Context, input string, code tools.Code) (data any, ok bool, err error)
}

// Outcome is how a run ended.
type Outcome string

// The outcomes of a run.
const (
	// OutcomeFinalAnswer: the model gave a final answer.
	OutcomeFinalAnswer Outcome = "final_answer"
	// OutcomeGiveUp: the model declined to go on.
	OutcomeGiveUp Outcome = "give_up"
	// OutcomeMaxSteps: the step budget (model calls) ran out.
	OutcomeMaxSteps Outcome = "max_steps"
	// OutcomeDeadline: the run's Timeout passed.
	OutcomeDeadline Outcome = "deadline"
	// OutcomeCancelled: the caller cancelled the context.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeLLMError: a model API error that retries did not cure.
	OutcomeLLMError Outcome = "llm_error"
)

// Outcomes returns every outcome in a fixed order (final_answer, give_up,
// max_steps, deadline, cancelled, llm_error); the slice is fresh on every
// call.
func Outcomes() []Outcome {
	return []Outcome{OutcomeFinalAnswer, OutcomeGiveUp, OutcomeMaxSteps, OutcomeDeadline, OutcomeCancelled, OutcomeLLMError}
}

// Sentinel errors returned by Run next to the matching outcome; test them
// with errors.Is.
var (
	// ErrMaxSteps is returned with OutcomeMaxSteps.
	ErrMaxSteps = errors.New("agent: step budget exhausted")
	// ErrDeadline is returned with OutcomeDeadline.
	ErrDeadline = errors.New("agent: run deadline exceeded")
	// ErrCancelled is returned with OutcomeCancelled.
	ErrCancelled = errors.New("agent: run cancelled")
	// ErrLLM is returned (wrapping the *llm.APIError or transport error)
	// with OutcomeLLMError.
	ErrLLM = errors.New("agent: model call failed")
)

// Result is everything a run produced.
type Result struct {
	// Outcome is how the run ended.
	Outcome Outcome `json:"outcome"`
	// Answer is the final answer (OutcomeFinalAnswer) or the give-up
	// reason (OutcomeGiveUp); empty otherwise.
	Answer string `json:"answer,omitempty"`
	// ModelCalls is the number of model calls that returned a reply or
	// failed for good (retried attempts are not counted again).
	ModelCalls int `json:"model_calls"`
	// Steps is the trajectory, one entry per model call.
	Steps []Step `json:"steps"`
	// Usage is the token usage summed over every successful model call.
	Usage llm.Usage `json:"usage"`
	// Err is the error that ended the run for every outcome other than
	// final_answer and give_up (also returned by Run).
	Err error `json:"-"`
	// DurationMS is the wall time of the run in milliseconds.
	DurationMS int64 `json:"duration_ms"`
}

// Step is one model call of the trajectory and the tool call it led to.
type Step struct {
	// Index is the 1-based model call number.
	Index int `json:"index"`
	// Reply is the model's reply text (empty if the call failed).
	Reply string `json:"reply,omitempty"`
	// Decision is the parsed reply; nil on a parse error or a failed call.
	Decision *parser.Decision `json:"decision,omitempty"`
	// ParseError is set when the reply could not be parsed.
	ParseError *parser.Error `json:"parse_error,omitempty"`
	// Tool is the tool the model asked for (empty when none was called).
	Tool string `json:"tool,omitempty"`
	// Input is the tool input as the tool received it.
	Input string `json:"input,omitempty"`
	// Observation is the exact text sent back to the model after
	// "Observation: " (empty for the final step).
	Observation string `json:"observation,omitempty"`
	// ErrorCode is the error code of the observation ("" on success).
	ErrorCode string `json:"error_code,omitempty"`
	// Reasoning is the reasoning text a reasoning model sent with the reply
	// (never sent back to it).
	Reasoning string `json:"reasoning,omitempty"`
	// Calls are the native tool calls of the step, in the order the model
	// gave them (the tools protocol); Tool, Input, Observation and
	// ErrorCode above then describe the first of them.
	Calls []StepCall `json:"calls,omitempty"`
	// Attempts is the number of model API attempts for this step (1 when
	// the first attempt succeeded).
	Attempts int `json:"attempts"`
	// ModelMS is the time spent in the model call(s), in milliseconds.
	ModelMS int64 `json:"model_ms"`
	// ToolMS is the time spent in the tool call, in milliseconds.
	ToolMS int64 `json:"tool_ms"`
}

// StepCall is one native tool call of a step and what came of it.
type StepCall struct {
	// ID is the call id the tool message answered.
	ID string `json:"id"`
	// Tool is the tool name the model called; Input the arguments it sent
	// (compacted JSON; as written when they were not a JSON object).
	Tool  string `json:"tool"`
	Input string `json:"input"`
	// Observation is the tool message's content.
	Observation string `json:"observation"`
	// ErrorCode is the observation's error code ("" on success): a tool
	// error, tool_not_found, or the parse code of arguments that are not a
	// JSON object (the tool did not run).
	ErrorCode string `json:"error_code,omitempty"`
	// ToolMS is the time spent in the tool, in milliseconds.
	ToolMS int64 `json:"tool_ms"`
}

// Clock is the time source of the agent; tests and replays inject a fake
// one so that retry backoff never sleeps.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx.Err() in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}
