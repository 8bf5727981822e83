package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// NopObserver drops every event; it is the default Observer, so the loop
// never checks for nil.
type NopObserver struct{}

// OnEvent does nothing.
func (NopObserver) OnEvent(Event) {}

// observerFunc adapts a function to an Observer.
type observerFunc func(Event)

func (f observerFunc) OnEvent(e Event) { f(e) }

// MultiObserver sends every event to each observer, in order.
func MultiObserver(obs ...Observer) Observer {
	return observerFunc(func(e Event) {
		for _, o := range obs {
			o.OnEvent(e)
		}
	})
}

// Recorder keeps every event in memory; safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// OnEvent appends e.
func (r *Recorder) OnEvent(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// JSONLObserver writes each event as one JSON object per line (JSON Lines)
// with the stable field names of Event. The first write error is kept and
// returned by Err; later events are dropped.
type JSONLObserver struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

// NewJSONLObserver returns an observer writing JSON Lines to w.
func NewJSONLObserver(w io.Writer) *JSONLObserver {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSONLObserver{enc: enc}
}

// OnEvent writes e as one line.
func (j *JSONLObserver) OnEvent(e Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		if err := j.enc.Encode(e); err != nil {
			j.err = fmt.Errorf("write trace: %w", err)
		}
	}
}

// Err returns the first write error, or nil.
func (j *JSONLObserver) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// ReadTrace reads a JSON Lines trace written by JSONLObserver. Blank lines
// are skipped; a line that is not an event is an error naming its line
// number.
func ReadTrace(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	var events []Event
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e Event
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("read trace: line %d: %v", n, err)
		}
		if !knownEvents[e.Type] {
			return nil, fmt.Errorf("read trace: line %d: unknown event type %q", n, e.Type)
		}
		if e.Step < 0 || e.Attempt < 0 || e.MS < 0 || e.Steps < 0 || e.PromptTokens < 0 || e.CompletionTokens < 0 {
			return nil, fmt.Errorf("read trace: line %d: negative count or duration", n)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	return events, nil
}

// knownEvents are the event types ReadTrace accepts.
var knownEvents = map[EventType]bool{
	EventRunStarted: true, EventContextBuilt: true, EventLLMCall: true, EventParseError: true,
	EventToolCall: true, EventToolResult: true, EventRecoveryStarted: true, EventRecoveryResult: true, EventDone: true,
}

// ConsoleObserver writes a human-readable trace, one or a few lines per
// event, for people watching a run (agenthub run, agenthub replay).
type ConsoleObserver struct {
	mu sync.Mutex
	w  io.Writer
}

// NewConsoleObserver returns an observer writing to w (usually stderr).
func NewConsoleObserver(w io.Writer) *ConsoleObserver { return &ConsoleObserver{w: w} }

// OnEvent writes e.
func (c *ConsoleObserver) OnEvent(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.w
	switch e.Type {
	case EventRunStarted:
		fmt.Fprintf(w, "▶ task: %s\n", oneLine(e.Task, 200))
	case EventContextBuilt:
		fmt.Fprintf(w, "  prompt %s, system prompt %d bytes, %d tools\n", e.Prompt, e.SystemPromptBytes, e.ToolCount)
	case EventLLMCall:
		if e.Error != "" {
			retry := "giving up"
			if e.Retryable {
				retry = fmt.Sprintf("retrying in %d ms", e.RetryInMS)
			}
			fmt.Fprintf(w, "[step %d] model call failed (attempt %d, %d ms): %s; %s\n", e.Step, e.Attempt, e.MS, oneLine(e.Error, 300), retry)
			return
		}
		extra := ""
		if e.ReasoningTokens > 0 {
			extra += fmt.Sprintf(", %d reasoning", e.ReasoningTokens)
		}
		if e.Streamed {
			extra += fmt.Sprintf(", streamed, first token %d ms", e.TTFTMS)
		}
		if e.ToolCalls > 0 {
			extra += fmt.Sprintf(", %d tool calls", e.ToolCalls)
		}
		fmt.Fprintf(w, "[step %d] model replied in %d ms (tokens %d+%d%s, finish %s)\n", e.Step, e.MS, e.PromptTokens, e.CompletionTokens, extra, orDash(e.FinishReason))
		if r := strings.TrimSpace(e.Reasoning); r != "" {
			fmt.Fprintf(w, "    reasoning: %s\n", oneLine(r, 300))
		}
		if reply := strings.TrimSpace(e.Reply); reply != "" {
			for _, l := range strings.Split(reply, "\n") {
				fmt.Fprintf(w, "    │ %s\n", Printable(l))
			}
		}
	case EventParseError:
		if e.CallID != "" {
			fmt.Fprintf(w, "[step %d] tool call %s (%s): bad arguments: %s\n", e.Step, oneLine(e.CallID, 100), oneLine(e.Tool, 100), oneLine(e.Code, 100))
			return
		}
		fmt.Fprintf(w, "[step %d] unparseable reply: %s\n", e.Step, e.Code)
	case EventToolCall:
		fmt.Fprintf(w, "[step %d] tool %s(%s)\n", e.Step, oneLine(e.Tool, 100), oneLine(e.Input, 200))
	case EventToolResult:
		if e.Status == StatusError {
			fmt.Fprintf(w, "[step %d] tool %s failed in %d ms: %s: %s\n", e.Step, oneLine(e.Tool, 100), e.MS, e.Code, oneLine(e.Error, 300))
			return
		}
		trunc := ""
		if e.Truncated {
			trunc = " (truncated)"
		}
		fmt.Fprintf(w, "[step %d] tool %s ok in %d ms%s: %s\n", e.Step, oneLine(e.Tool, 100), e.MS, trunc, oneLine(e.Observation, 300))
	case EventRecoveryStarted:
		fmt.Fprintf(w, "[step %d] recovery for %s after %s\n", e.Step, oneLine(e.Tool, 100), e.Code)
	case EventRecoveryResult:
		fmt.Fprintf(w, "[step %d] recovery %s\n", e.Step, e.Status)
	case EventDone:
		fmt.Fprintf(w, "■ %s after %d model calls in %d ms", e.Outcome, e.Steps, e.MS)
		if e.Error != "" {
			fmt.Fprintf(w, ": %s", oneLine(e.Error, 300))
		}
		fmt.Fprintln(w)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Printable returns s with control characters (other than tab and
// newline) shown in caret notation (ESC as ^[), so that text from a model or
// a tool cannot drive the terminal it is printed on.
func Printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !isControl(r):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return r != '\t' && r != '\n' && (r < 0x20 || (r >= 0x7f && r < 0xa0))
}

// PrintableLine is s for one line of a terminal or a table cell: runs of
// white space (newlines included) become one space, control characters are
// shown as by Printable, and the result is cut to at most n bytes on a
// UTF-8 boundary, marked "…".
func PrintableLine(s string, n int) string { return oneLine(s, n) }

// oneLine flattens s to one line of at most n bytes, control characters
// made printable.
func oneLine(s string, n int) string {
	s = Printable(strings.Join(strings.Fields(s), " "))
	if t, cut := truncateUTF8(s, n); cut {
		return t + "…"
	}
	return s
}
