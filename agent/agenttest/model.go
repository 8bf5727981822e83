// Package agenttest holds test doubles for the agent: a scripted in-process
// ChatModel and small tools with controllable behaviour.
package agenttest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agenthub/agenthub/agent/llm"
)

// Turn is one scripted model answer: a reply, or an error returned instead.
type Turn struct {
	// Reply is the content returned when Err is nil.
	Reply string
	// Reasoning is the reasoning text returned with the reply.
	Reasoning string
	// ToolCalls are the native tool calls returned with the reply.
	ToolCalls []llm.ToolCall
	// Err, when set, is returned instead of a reply.
	Err error
	// Delay makes the call wait (or until ctx is done, then ctx.Err()).
	Delay time.Duration
	// Usage is reported with the reply.
	Usage llm.Usage
	// FinishReason is reported with the reply (default "stop", or
	// "tool_calls" when ToolCalls is not empty).
	FinishReason string
}

// Model is an in-process llm.ChatModel that answers each call with the
// next Turn. When the script is exhausted, Chat returns an error. Safe for
// concurrent use.
type Model struct {
	mu       sync.Mutex
	turns    []Turn
	received []llm.Request
}

var _ llm.ChatModel = (*Model)(nil)

// NewModel returns a model answering with turns, in order.
func NewModel(turns ...Turn) *Model { return &Model{turns: turns} }

// Replies returns a model answering with the given replies, in order.
func Replies(replies ...string) *Model {
	turns := make([]Turn, len(replies))
	for i, r := range replies {
		turns[i] = Turn{Reply: r, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 20}}
	}
	return NewModel(turns...)
}

// Chat answers with the next turn and records the request it received.
func (m *Model) Chat(ctx context.Context, req llm.Request) (llm.Reply, error) {
	m.mu.Lock()
	n := len(m.received)
	req.Messages = append([]llm.Message(nil), req.Messages...)
	req.Tools = append([]llm.ToolSpec(nil), req.Tools...)
	m.received = append(m.received, req)
	if n >= len(m.turns) {
		m.mu.Unlock()
		return llm.Reply{}, fmt.Errorf("agenttest: script exhausted after %d turns", len(m.turns))
	}
	t := m.turns[n]
	m.mu.Unlock()
	if t.Delay > 0 {
		timer := time.NewTimer(t.Delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return llm.Reply{}, ctx.Err()
		}
	}
	if t.Err != nil {
		return llm.Reply{}, t.Err
	}
	fr := t.FinishReason
	switch {
	case fr != "":
	case len(t.ToolCalls) > 0:
		fr = "tool_calls"
	default:
		fr = "stop"
	}
	return llm.Reply{Content: t.Reply, Reasoning: t.Reasoning, ToolCalls: append([]llm.ToolCall(nil), t.ToolCalls...),
		FinishReason: fr, Usage: t.Usage, Model: "agenttest", ID: fmt.Sprintf("agenttest-%d", n+1)}, nil
}

// Received returns the messages of every call so far (copies).
func (m *Model) Received() [][]llm.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]llm.Message, len(m.received))
	for i, req := range m.received {
		out[i] = req.Messages
	}
	return out
}

// Requests returns every request so far (copies of their messages and
// tools).
func (m *Model) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.received...)
}

// FuncTool is a Tool whose Execute calls Fn.
type FuncTool struct {
	ToolName string
	Desc     string
	Fn       func(ctx context.Context, input string) (string, error)
}

// Name returns ToolName.
func (f *FuncTool) Name() string { return f.ToolName }

// Description returns Desc.
func (f *FuncTool) Description() string { return f.Desc }

// Execute calls Fn.
func (f *FuncTool) Execute(ctx context.Context, input string) (string, error) {
	return f.Fn(ctx, input)
}
