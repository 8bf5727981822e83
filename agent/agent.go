// Package agent is the ReAct loop: the model is called, its reply parsed,
// the tool it asks for run, and the result fed back as an observation,
// until a final answer, a give-up, the step budget or the deadline.
//
// The loop is a plain for over a budget counted in model calls
// (Config.MaxSteps). Every transition emits a trace Event to the Observer;
// the eval harness scores runs from those events. The agent never knows
// whether its model and tools talk to live services or to recorded
// cassettes: that is decided by the http.RoundTripper under their clients.
package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agenthub/agenthub/agent/llm"
	"github.com/agenthub/agenthub/agent/tools"
	"github.com/agenthub/agenthub/parser"
)

// Compile-time checks that the bundled tools are Tools.
var (
	_ Tool      = (*tools.Echo)(nil)
	_ Tool      = (*tools.ImageScaling)(nil)
	_ Recoverer = (*tools.ImageScaling)(nil)
)

// Agent runs ReAct loops with one model and a fixed set of tools. An Agent
// holds no per-run state: Run may be called again, but not concurrently
// with itself when the Observer is not safe for concurrent use.
type Agent struct {
	model    llm.ChatModel
	tools    map[string]Tool
	names    []string
	cfg      Config
	system   string
	protocol parser.Protocol
	specs    []llm.ToolSpec // the tools protocol: the tools as offered
	obs      Observer
	clock    Clock
}

// New returns an agent for the model and tools. cfg's zero fields take
// their defaults. It fails when model is nil, a tool is nil or has an
// empty or duplicate name, or cfg.Prompt names no embedded variant
// (ErrUnknownPrompt).
func New(model llm.ChatModel, ts []Tool, cfg Config, opts ...Option) (*Agent, error) {
	if model == nil {
		return nil, errors.New("new agent: model is nil")
	}
	cfg = cfg.withDefaults()
	a := &Agent{model: model, tools: map[string]Tool{}, cfg: cfg, obs: NopObserver{}, clock: RealClock{}}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("new agent: tool %d is nil", i)
		}
		name := t.Name()
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("new agent: tool %d has an empty name", i)
		}
		if _, dup := a.tools[name]; dup {
			return nil, fmt.Errorf("new agent: duplicate tool name %q", name)
		}
		a.tools[name] = t
		a.names = append(a.names, name)
	}
	sort.Strings(a.names)
	system, protocol, err := SystemPrompt(cfg.Prompt, ts)
	if err != nil {
		return nil, fmt.Errorf("new agent: %w", err)
	}
	a.system = system
	a.protocol = protocol
	if protocol == parser.Tools {
		a.specs = toolSpecs(ts)
	}
	if err := a.checkToolChoice(); err != nil {
		return nil, fmt.Errorf("new agent: %w", err)
	}
	for _, o := range opts {
		o(a)
	}
	return a, nil
}

// checkToolChoice refuses a tool choice the request could not honour: one
// set for a prompt that does not offer the tools natively, or one that is
// neither auto, none, required nor the name of a registered tool.
func (a *Agent) checkToolChoice() error {
	c := a.cfg.ToolChoice
	if c == "" {
		return nil
	}
	if a.protocol != parser.Tools {
		return fmt.Errorf("tool choice %q needs a prompt of the tools protocol (such as native-tools); %s uses protocol %s", c, a.cfg.Prompt, a.protocol)
	}
	switch c {
	case llm.ToolChoiceAuto, llm.ToolChoiceNone, llm.ToolChoiceRequired:
		return nil
	}
	if _, ok := a.tools[c]; ok {
		return nil
	}
	return fmt.Errorf("tool choice %q: want auto, none, required or a tool name (%s)", clip(c, maxNameInMessage), strings.Join(a.names, ", "))
}

// anyArguments is the schema offered for a tool without Parameters: an
// object of any shape; the tool gets the arguments' JSON text.
var anyArguments = []byte(`{"type":"object"}`)

// toolSpecs describes the tools for native tool calling, sorted by name
// (the bytes of the request must not depend on registration order).
func toolSpecs(ts []Tool) []llm.ToolSpec {
	specs := make([]llm.ToolSpec, 0, len(ts))
	for _, t := range ts {
		params := anyArguments
		if p, ok := t.(tools.Parameterized); ok {
			params = p.Parameters()
		}
		specs = append(specs, llm.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: params})
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs
}

// run is the state of one Run.
type run struct {
	a          *Agent
	ctx        context.Context // the run's context, with Timeout
	parent     context.Context
	res        Result
	msgs       []llm.Message
	recoveries int
	recovered  map[string]bool
	start      time.Time
}

// Run solves task and returns what happened. The returned error is nil
// when the model ended the run (OutcomeFinalAnswer, OutcomeGiveUp); for
// every other outcome it is Result.Err, which wraps ErrMaxSteps,
// ErrDeadline, ErrCancelled or ErrLLM (test with errors.Is). Result is
// always filled in, up to the point where the run stopped.
func (a *Agent) Run(ctx context.Context, task string) (Result, error) {
	runCtx, cancel := a.withTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	r := &run{a: a, ctx: runCtx, parent: ctx, recovered: map[string]bool{}, start: a.clock.Now()}
	a.emit(Event{Type: EventRunStarted, Task: task})
	a.emit(Event{Type: EventContextBuilt, Prompt: a.cfg.Prompt, SystemPromptBytes: len(a.system), ToolCount: len(a.tools)})
	r.msgs = []llm.Message{{Role: llm.RoleSystem, Content: a.system}, {Role: llm.RoleUser, Content: task}}
	r.loop()
	r.res.DurationMS = a.clock.Now().Sub(r.start).Milliseconds()
	done := Event{Type: EventDone, Outcome: r.res.Outcome, Steps: r.res.ModelCalls, MS: r.res.DurationMS}
	if r.res.Err != nil {
		done.Error = r.res.Err.Error()
	}
	a.emit(done)
	return r.res, r.res.Err
}

func (a *Agent) emit(e Event) { a.obs.OnEvent(e) }

// withTimeout makes a deadline on the agent's clock when it can
// (TimeoutClock: virtual deadlines in replay), on the wall clock otherwise.
func (a *Agent) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if tc, ok := a.clock.(TimeoutClock); ok {
		return tc.WithTimeout(ctx, d)
	}
	return context.WithTimeout(ctx, d)
}

// loop is the ReAct loop over the step budget.
func (r *run) loop() {
	a := r.a
	for step := 1; step <= a.cfg.MaxSteps; step++ {
		st := Step{Index: step}
		reply, ok := r.callModel(step, &st)
		r.res.ModelCalls = step
		if !ok {
			r.res.Steps = append(r.res.Steps, st)
			return
		}
		st.Reply, st.Reasoning = reply.Content, reply.Reasoning
		if a.protocol == parser.Tools {
			if !r.nativeStep(step, &st, reply) {
				return
			}
			continue
		}
		d, err := parser.Parse(reply.Content, parser.WithProtocol(a.protocol))
		// The history keeps what the model's decision rests on: text it
		// wrote after its decision (a made-up Observation, further
		// actions) would contradict the real observation that follows.
		r.msgs = append(r.msgs, llm.Message{Role: llm.RoleAssistant, Content: usedReply(reply.Content, d.Discarded)})
		var obs Observation
		if err != nil {
			r.parseError(step, &st, err)
		} else {
			st.Decision = &d
			switch d.Kind {
			case parser.KindFinal:
				r.finish(st, OutcomeFinalAnswer, d.FinalAnswer, nil)
				return
			case parser.KindGiveUp:
				r.finish(st, OutcomeGiveUp, d.GiveUp, nil)
				return
			}
			obs = r.callTool(step, &st, d.Action, d.ActionInput, droppedNote(d))
			if r.res.Outcome != "" { // the deadline or a cancellation hit during the tool call
				r.res.Steps = append(r.res.Steps, st)
				return
			}
			st.Observation = obs.String()
		}
		r.res.Steps = append(r.res.Steps, st)
		r.msgs = append(r.msgs, llm.Message{Role: llm.RoleUser, Content: "Observation: " + st.Observation})
	}
	r.res.Outcome = OutcomeMaxSteps
	r.res.Err = fmt.Errorf("%w after %d model calls", ErrMaxSteps, a.cfg.MaxSteps)
}

// parseError turns a reply the parser could not decide into the
// correction observation the model gets back, and emits parse_error.
func (r *run) parseError(step int, st *Step, err error) {
	var pe *parser.Error
	if !errors.As(err, &pe) {
		pe = &parser.Error{Code: parser.CodeMissingAction, Message: err.Error()}
	}
	st.ParseError = pe
	st.Observation = r.errorObservation(pe).String()
	st.ErrorCode = string(pe.Code)
	r.a.emit(Event{Type: EventParseError, Step: step, Code: string(pe.Code), Error: pe.Message, Observation: st.Observation})
}

// errorObservation is the observation of a reply (or one native call) the
// parser refused: retryable, the message capped like data.
func (r *run) errorObservation(pe *parser.Error) Observation {
	msg, cut := truncateUTF8(pe.Message, r.a.cfg.MaxObservationBytes)
	return Observation{Status: StatusError, Error: &ObservationError{Code: string(pe.Code), Message: msg, Retryable: true}, Truncated: cut}
}

// CallID is the id the agent gives a native tool call the provider sent
// without one: "call_<step>_<index>" (step 1-based, index 0-based in the
// reply), so that its tool message can name it.
func CallID(step, index int) string { return fmt.Sprintf("call_%d_%d", step, index) }

// nativeStep handles one reply of the tools protocol: the decision comes
// from the reply's tool calls and content (parser.DecideCalls). Every call
// is answered by its own tool message, in the order given: a call whose
// arguments are not a JSON object gets the parse error (the tool does not
// run), the others run one after the other. It reports false when the run
// ended (a final answer, the deadline, a cancellation).
func (r *run) nativeStep(step int, st *Step, reply llm.Reply) bool {
	calls := make([]parser.Call, len(reply.ToolCalls))
	sent := append([]llm.ToolCall(nil), reply.ToolCalls...)
	for i, c := range sent {
		if c.ID == "" {
			// A tool message must name the call it answers.
			sent[i].ID = CallID(step, i)
		}
		if sent[i].Type == "" {
			sent[i].Type = "function"
		}
		calls[i] = parser.Call{ID: sent[i].ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
	}
	d, err := parser.DecideCalls(reply.Content, calls)
	r.msgs = append(r.msgs, llm.Message{Role: llm.RoleAssistant, Content: reply.Content, ToolCalls: sent})
	if err != nil {
		r.parseError(step, st, err)
		r.res.Steps = append(r.res.Steps, *st)
		r.msgs = append(r.msgs, llm.Message{Role: llm.RoleUser, Content: "Observation: " + st.Observation})
		return true
	}
	st.Decision = &d
	if d.Kind == parser.KindFinal {
		r.finish(*st, OutcomeFinalAnswer, d.FinalAnswer, nil)
		return false
	}
	for _, c := range d.Calls {
		sc, ok := r.nativeCall(step, c)
		st.Calls = append(st.Calls, sc)
		if !ok {
			r.res.Steps = append(r.res.Steps, *st)
			return false
		}
		r.msgs = append(r.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: sc.Observation})
	}
	if len(st.Calls) > 0 {
		first := st.Calls[0]
		st.Tool, st.Input, st.Observation, st.ErrorCode = first.Tool, first.Input, first.Observation, first.ErrorCode
		for _, c := range st.Calls {
			st.ToolMS += c.ToolMS
		}
	}
	r.res.Steps = append(r.res.Steps, *st)
	return true
}

// nativeCall answers one native tool call. It reports false when the run's
// deadline or a cancellation cut the call off.
func (r *run) nativeCall(step int, c parser.Call) (StepCall, bool) {
	sc := StepCall{ID: c.ID, Tool: c.Name, Input: c.Arguments}
	if c.Err != nil {
		obs := r.errorObservation(c.Err)
		sc.Observation, sc.ErrorCode = obs.String(), string(c.Err.Code)
		r.a.emit(Event{Type: EventParseError, Step: step, CallID: c.ID, Tool: c.Name, Input: c.Arguments,
			Code: string(c.Err.Code), Error: c.Err.Message, Observation: sc.Observation})
		return sc, true
	}
	var st Step
	obs := r.callToolID(step, &st, c.ID, c.Name, c.Arguments, "")
	if r.res.Outcome != "" {
		return sc, false
	}
	sc.Observation, sc.ErrorCode, sc.ToolMS = obs.String(), st.ErrorCode, st.ToolMS
	return sc, true
}

// maxNameInMessage bounds how much of a model-written tool name is quoted
// back to it: a runaway name must not grow every later prompt.
const maxNameInMessage = 100

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if t, cut := truncateUTF8(s, n); cut {
		return t + "…"
	}
	return s
}

// usedReply returns the reply without its discarded tail, when the
// discarded text is the reply's tail; otherwise the reply as is.
func usedReply(reply, discarded string) string {
	if discarded == "" {
		return reply
	}
	i := strings.LastIndex(reply, discarded)
	if i < 0 || strings.TrimSpace(reply[i+len(discarded):]) != "" {
		return reply
	}
	return strings.TrimRight(reply[:i], " \t\r\n")
}

// droppedNote tells the model what part of its reply was not acted on.
func droppedNote(d parser.Decision) string {
	switch {
	case d.ExtraActionsIgnored == 1:
		return "1 further action in your reply was not run: write one action per reply and wait for its observation"
	case d.ExtraActionsIgnored > 1:
		return fmt.Sprintf("%d further actions in your reply were not run: write one action per reply and wait for its observation", d.ExtraActionsIgnored)
	case d.Discarded != "":
		return "the text after your action was ignored: write nothing after the action input and wait for the observation"
	}
	return ""
}

// finish records the final step and ends the run with outcome.
func (r *run) finish(st Step, o Outcome, answer string, err error) {
	r.res.Steps = append(r.res.Steps, st)
	r.res.Outcome = o
	r.res.Answer = answer
	r.res.Err = err
}

// stopCause sets the outcome for a run whose context is done and reports
// whether it was.
func (r *run) stopCause() bool {
	if r.ctx.Err() == nil {
		return false
	}
	if errors.Is(r.parent.Err(), context.Canceled) {
		r.res.Outcome = OutcomeCancelled
		r.res.Err = fmt.Errorf("%w: %v", ErrCancelled, context.Cause(r.parent))
		return true
	}
	r.res.Outcome = OutcomeDeadline
	r.res.Err = fmt.Errorf("%w (%s)", ErrDeadline, r.a.cfg.Timeout)
	return true
}

// callModel calls the model for one step, retrying retryable API errors
// with exponential backoff that honours Retry-After. It returns ok=false
// when the run must stop (the outcome is then set).
func (r *run) callModel(step int, st *Step) (llm.Reply, bool) {
	a := r.a
	backoff := a.cfg.RetryBackoff
	maxAttempts := 1 + max(a.cfg.MaxRetries, 0)
	for attempt := 1; ; attempt++ {
		st.Attempts = attempt
		t0 := a.clock.Now()
		reply, err := a.model.Chat(r.ctx, a.request(r.msgs))
		ms := a.clock.Now().Sub(t0).Milliseconds()
		st.ModelMS += ms
		ev := Event{Type: EventLLMCall, Step: step, Attempt: attempt, MS: ms}
		if err == nil {
			u := reply.Usage
			ev.PromptTokens, ev.CompletionTokens = u.PromptTokens, u.CompletionTokens
			ev.ReasoningTokens, ev.CachedTokens = u.ReasoningTokens, u.CachedTokens
			ev.FinishReason = reply.FinishReason
			ev.Reply, ev.Reasoning, ev.ToolCalls = reply.Content, reply.Reasoning, len(reply.ToolCalls)
			ev.Streamed, ev.TTFTMS = reply.Streamed, reply.TTFT.Milliseconds()
			r.res.Usage.PromptTokens += u.PromptTokens
			r.res.Usage.CompletionTokens += u.CompletionTokens
			r.res.Usage.ReasoningTokens += u.ReasoningTokens
			r.res.Usage.CachedTokens += u.CachedTokens
			a.emit(ev)
			return reply, true
		}
		ev.Error = err.Error()
		var apiErr *llm.APIError
		if errors.As(err, &apiErr) {
			ev.Code = apiErr.Code
		}
		if r.ctx.Err() != nil {
			a.emit(ev)
			r.stopCause()
			return llm.Reply{}, false
		}
		retryable, after := llm.IsRetryable(err)
		if retryable && after > a.cfg.Timeout {
			// The provider asks for a wait longer than the whole run may
			// take: waiting could only end in the deadline.
			retryable = false
			err = fmt.Errorf("%w (Retry-After %s exceeds the run timeout %s)", err, after, a.cfg.Timeout)
			ev.Error = err.Error()
		}
		if !retryable || attempt >= maxAttempts {
			a.emit(ev)
			r.res.Outcome = OutcomeLLMError
			r.res.Err = fmt.Errorf("%w: step %d, attempt %d: %w", ErrLLM, step, attempt, err)
			return llm.Reply{}, false
		}
		wait := max(backoff, after)
		backoff *= 2
		ev.Retryable = true
		ev.RetryInMS = wait.Milliseconds()
		a.emit(ev)
		if err := a.clock.Sleep(r.ctx, wait); err != nil {
			r.stopCause()
			return llm.Reply{}, false
		}
	}
}

// request is the chat request for the conversation so far: with the
// tools protocol it offers the tools natively and sends no stop sequence.
func (a *Agent) request(msgs []llm.Message) llm.Request {
	req := llm.Request{Messages: msgs}
	if a.protocol == parser.Tools {
		req.Tools, req.ToolChoice, req.NoStop = a.specs, a.cfg.ToolChoice, true
	}
	return req
}

// callTool runs one tool call and returns the observation for the model,
// carrying note (see droppedNote). When the run's context ends during the
// call it sets the outcome.
func (r *run) callTool(step int, st *Step, name, input, note string) Observation {
	return r.callToolID(step, st, "", name, input, note)
}

// callToolID is callTool for a native call with its id (in the events).
func (r *run) callToolID(step int, st *Step, id, name, input, note string) Observation {
	a := r.a
	st.Tool, st.Input = name, input
	a.emit(Event{Type: EventToolCall, Step: step, CallID: id, Tool: name, Input: input})
	t, ok := a.tools[name]
	if !ok {
		obs := Observation{Status: StatusError, Note: note, Error: &ObservationError{
			Code:    string(tools.CodeToolNotFound),
			Message: fmt.Sprintf("unknown tool %q; use one of: %s", clip(name, maxNameInMessage), strings.Join(a.names, ", ")),
		}}
		st.ErrorCode = string(tools.CodeToolNotFound)
		r.emitResult(step, id, name, input, 0, obs)
		return obs
	}
	t0 := a.clock.Now()
	out, err := r.execute(t, input)
	st.ToolMS = a.clock.Now().Sub(t0).Milliseconds()
	if r.ctx.Err() != nil && r.stopCause() {
		// The run's own deadline (or a cancellation) cut the call off: the
		// code names that, not the per-tool timeout.
		ev := Event{Type: EventToolResult, Step: step, CallID: id, Tool: name, Input: input, MS: st.ToolMS, Status: StatusError, Code: string(r.res.Outcome), Error: r.res.Err.Error()}
		a.emit(ev)
		return Observation{}
	}
	obs := Observation{Note: note}
	if err == nil {
		obs.Status = StatusSuccess
		obs.Data, obs.Truncated = truncateUTF8(out, a.cfg.MaxObservationBytes)
	} else {
		te := toolError(err)
		st.ErrorCode = string(te.Code)
		msg, cut := truncateUTF8(te.Message, a.cfg.MaxObservationBytes)
		obs.Status, obs.Truncated = StatusError, cut
		obs.Error = &ObservationError{Code: string(te.Code), Message: msg, Retryable: te.Retryable}
		if rec, ok := t.(Recoverer); ok {
			r.recover(step, rec, name, input, te.Code, &obs)
		}
	}
	r.emitResult(step, id, name, input, st.ToolMS, obs)
	return obs
}

func (r *run) emitResult(step int, id, name, input string, ms int64, obs Observation) {
	ev := Event{Type: EventToolResult, Step: step, CallID: id, Tool: name, Input: input, MS: ms, Status: obs.Status, Truncated: obs.Truncated, Observation: obs.String()}
	if obs.Error != nil {
		ev.Code, ev.Error, ev.Retryable = obs.Error.Code, obs.Error.Message, obs.Error.Retryable
	}
	r.a.emit(ev)
}

// toolResult is what a tool goroutine hands back.
type toolResult struct {
	out string
	err error
}

// execute runs the tool under ToolTimeout. A panic becomes tool_panic; a
// tool that overruns its timeout becomes tool_timeout even if it ignores
// its context (its goroutine is then abandoned).
func (r *run) execute(t Tool, input string) (string, error) {
	ctx, cancel := r.a.withTimeout(r.ctx, r.a.cfg.ToolTimeout)
	defer cancel()
	ch := make(chan toolResult, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- toolResult{err: &tools.Error{Code: tools.CodeToolPanic, Message: fmt.Sprintf("the tool crashed: %v", p)}}
			}
		}()
		out, err := t.Execute(ctx, input)
		ch <- toolResult{out, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil && ctx.Err() == context.DeadlineExceeded && r.ctx.Err() == nil {
			return "", timeoutError(r.a.cfg.ToolTimeout)
		}
		return res.out, res.err
	case <-ctx.Done():
		if r.ctx.Err() == nil {
			return "", timeoutError(r.a.cfg.ToolTimeout)
		}
		return "", r.ctx.Err()
	}
}

func timeoutError(d time.Duration) error {
	return &tools.Error{Code: tools.CodeToolTimeout, Message: fmt.Sprintf("the tool did not answer within %s", d), Retryable: true}
}

// toolError maps any tool error to a *tools.Error.
func toolError(err error) *tools.Error {
	var te *tools.Error
	if errors.As(err, &te) {
		return te
	}
	return &tools.Error{Code: tools.CodeToolError, Message: err.Error()}
}

// recover runs the tool's recovery once per distinct failure, within the
// MaxRecoveries budget, and adds its data to the observation.
func (r *run) recover(step int, rec Recoverer, name, input string, code tools.Code, obs *Observation) {
	key := name + "\x00" + input + "\x00" + string(code)
	if r.a.cfg.MaxRecoveries < 0 || r.recoveries >= r.a.cfg.MaxRecoveries || r.recovered[key] {
		return
	}
	data, ok, err := rec.Recover(r.ctx, input, code)
	if err == nil && !ok {
		return // nothing to offer for this failure: no recovery attempted
	}
	r.recovered[key] = true
	r.recoveries++
	r.a.emit(Event{Type: EventRecoveryStarted, Step: step, Tool: name, Input: input, Code: string(code)})
	res := Event{Type: EventRecoveryResult, Step: step, Tool: name, Input: input, Code: string(code), Status: StatusSuccess}
	if err != nil {
		res.Status, res.Error = StatusError, err.Error()
	} else {
		obs.Recovery = data
		if t, ok := data.(interface{ Truncated() bool }); ok && t.Truncated() {
			obs.Truncated = true
		}
	}
	r.a.emit(res)
}
