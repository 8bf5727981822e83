package agent

import (
	"context"
	"time"
)

// Config holds the budgets and the prompt of an agent. Zero fields take the
// documented defaults.
type Config struct {
	// MaxSteps is the most model calls a run may make (default 5). The
	// loop is a plain for over this budget; retried attempts of one call
	// count once.
	MaxSteps int
	// Timeout is the deadline of the whole run (default 60 s).
	Timeout time.Duration
	// ToolTimeout is the deadline of one tool call (default 30 s).
	ToolTimeout time.Duration
	// MaxObservationBytes is the most bytes of tool output, or of an error
	// message, kept in one observation (default 2000); longer text is cut
	// at a UTF-8 boundary and the observation says "truncated": true.
	MaxObservationBytes int
	// Prompt is the prompt variant, the name of a template in
	// agent/prompts (default "react-text"). Its header names the protocol;
	// a variant of protocol "tools" offers the tools natively (see
	// ToolChoice).
	Prompt string
	// ToolChoice is sent as the request's tool_choice with the tools
	// protocol ("" sends none: the provider's default, "auto";
	// llm.ToolChoiceRequired, llm.ToolChoiceNone or a tool name). It is
	// ignored by the text and JSON protocols.
	ToolChoice string
	// MaxRecoveries is the most automatic error recoveries in one run
	// (default 3). A negative value disables recovery.
	MaxRecoveries int
	// MaxRetries is the most retries of one failed model call (default 2;
	// negative: none). Only retryable API errors are retried.
	MaxRetries int
	// RetryBackoff is the wait before the first retry (default 500 ms); it
	// doubles on each retry. A longer Retry-After from the API wins; one
	// longer than Timeout ends the run with llm_error at once.
	RetryBackoff time.Duration
}

// The defaults of Config.
const (
	DefaultMaxSteps            = 5
	DefaultTimeout             = 60 * time.Second
	DefaultToolTimeout         = 30 * time.Second
	DefaultMaxObservationBytes = 2000
	DefaultMaxRecoveries       = 3
	DefaultMaxRetries          = 2
	DefaultRetryBackoff        = 500 * time.Millisecond
)

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.MaxSteps <= 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ToolTimeout <= 0 {
		c.ToolTimeout = DefaultToolTimeout
	}
	if c.MaxObservationBytes <= 0 {
		c.MaxObservationBytes = DefaultMaxObservationBytes
	}
	if c.Prompt == "" {
		c.Prompt = DefaultPrompt
	}
	if c.MaxRecoveries == 0 {
		c.MaxRecoveries = DefaultMaxRecoveries
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = DefaultRetryBackoff
	}
	return c
}

// Option configures an Agent.
type Option func(*Agent)

// WithObserver sends the run's trace events to o (default NopObserver).
// Combine several with MultiObserver.
func WithObserver(o Observer) Option {
	return func(a *Agent) {
		if o != nil {
			a.obs = o
		}
	}
}

// WithClock replaces the real clock, which retry backoff sleeps on and
// durations are measured with. Replays pass a clock whose Sleep returns at
// once.
func WithClock(c Clock) Option {
	return func(a *Agent) {
		if c != nil {
			a.clock = c
		}
	}
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NoSleepClock is the wall clock whose Sleep returns at once (unless ctx is
// already done): replays use it so that recorded retries cost no time.
type NoSleepClock struct{}

// Now returns time.Now().
func (NoSleepClock) Now() time.Time { return time.Now() }

// Sleep returns ctx.Err() without waiting.
func (NoSleepClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
