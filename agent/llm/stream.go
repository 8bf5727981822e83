package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxStreamToolCalls is the most distinct tool calls a stream may open; a
// stream that opens more is malformed (each costs memory though it may
// carry no bytes).
const maxStreamToolCalls = 1024

// AssembleStream reads a chat-completions event stream, the body of a 2xx
// answer to a "stream":true request, up to its "data: [DONE]" event, and
// returns the Reply its chunks add up to, as DecodeResponse returns the
// Reply of the equivalent JSON body (with Streamed set; TTFT is 0, there
// is no clock here): the content and reasoning_content deltas of the first
// choice concatenated, its tool-call deltas merged by index (id and type
// from the delta that has them, name and arguments concatenated in
// arrival order), the last finish_reason, the last usage (a usage chunk
// may have no choices), the first id and model.
//
// The stream is parsed by the rules of the WHATWG HTML Standard, section
// 9.2.6 "Interpreting an event stream"
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): lines
// end in CRLF, LF or CR; one leading byte order mark is skipped; a line
// starting with ":" is a comment; a field is "name:value" with one space
// after the colon removed, a line without a colon is a field with an empty
// value; "data" lines append their value and a line feed to the event's
// data, an empty line dispatches the event (no data: nothing dispatched)
// with that last line feed removed; "event" sets the event's type; "id" and
// "retry" are read and ignored, as are unknown fields (this client never
// reconnects: a cut stream is an error, and the agent's retry policy sends
// the request again); an event not ended by an empty line when the stream
// ends is discarded.
//
// Errors are *APIError with Status 200 (Chat puts the real status): an
// event whose JSON has an "error" member, or an event of type "error", is
// the provider's error (retryable when its code is a retryable HTTP
// status such as 429 or 503); a stream that ends or breaks before
// "data: [DONE]" is CodeStreamCut, retryable, with the read error in Err;
// data that is not a chunk, a negative token count, a line or an event
// over MaxResponseBytes, or an assembled reply (content, reasoning and
// tool calls) over MaxResponseBytes is CodeMalformedResponse. Memory stays
// within a few times MaxResponseBytes whatever the stream's length.
func AssembleStream(r io.Reader) (Reply, error) { return assemble(r, nil) }

// assemble is AssembleStream calling first, when not nil, once at the
// first content, reasoning or tool-call delta.
func assemble(r io.Reader, first func()) (Reply, error) {
	events := newEventReader(r)
	a := &assembler{first: first}
	for {
		ev, err := events.next()
		if err != nil {
			return Reply{}, a.cut(err)
		}
		a.events++
		done, err := a.add(ev)
		if err != nil {
			return Reply{}, err
		}
		if done {
			return a.reply(), nil
		}
	}
}

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	typ  string // the "event" field; "" is the default type, message
	data []byte // valid until the next call of next
}

// eventReader splits a stream into events (WHATWG HTML 9.2.6).
type eventReader struct {
	sc      *bufio.Scanner
	data    []byte // the data buffer
	typ     string // the event type buffer
	started bool   // the first line (and its byte order mark) is behind
}

// errEventTooLong is an event whose data exceeds MaxResponseBytes.
var errEventTooLong = errors.New("event data too long")

func newEventReader(r io.Reader) *eventReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 16<<10), MaxResponseBytes)
	sc.Split(splitSSELines)
	return &eventReader{sc: sc}
}

// next returns the next dispatched event; io.EOF when the stream ended
// (any event still being built is discarded, as the standard says).
func (e *eventReader) next() (sseEvent, error) {
	for e.sc.Scan() {
		line := e.sc.Bytes()
		if !e.started {
			e.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if len(e.data) == 0 {
				e.typ = ""
				continue
			}
			ev := sseEvent{typ: e.typ, data: e.data[:len(e.data)-1]}
			e.data, e.typ = e.data[:0], ""
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "data":
			if len(e.data)+len(value)+1 > MaxResponseBytes {
				return sseEvent{}, errEventTooLong
			}
			e.data = append(append(e.data, value...), '\n')
		case "event":
			e.typ = string(value)
		}
	}
	if err := e.sc.Err(); err != nil {
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// splitSSELines is a bufio.SplitFunc for lines ending in CRLF, LF or CR. A
// last line without an end is dropped: it could only belong to an event
// that is never dispatched.
func splitSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	lf := bytes.IndexByte(data, '\n')
	head := data
	if lf >= 0 {
		head = data[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		switch {
		case cr+1 < len(data) && data[cr+1] == '\n':
			return cr + 2, data[:cr], nil
		case cr+1 < len(data) || atEOF:
			return cr + 1, data[:cr], nil
		}
		return 0, nil, nil // a LF may follow
	}
	if lf >= 0 {
		return lf + 1, data[:lf], nil
	}
	if atEOF {
		return len(data), nil, nil
	}
	return 0, nil, nil
}

// chunkJSON is one chat.completion.chunk.
type chunkJSON struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int         `json:"index"`
		Delta        messageJSON `json:"delta"`
		FinishReason *string     `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
	Error errorField `json:"error"`
}

// assembler adds up the chunks of one stream.
type assembler struct {
	first              func()
	delta              bool // a content, reasoning or tool-call delta was seen
	events             int
	size               int // assembled bytes
	id, model, finish  string
	usage              Usage
	content, reasoning strings.Builder
	calls              []callParts
}

// callParts is one tool call being assembled.
type callParts struct {
	index      int
	id, typ    string
	name, args []byte // not strings.Builder: the slice of calls grows by copying
	// raw joins the arguments' JSON string bytes, escapes kept, while every
	// piece came as a string (rawBroken otherwise): decoded once at the
	// end, a character or surrogate pair split between deltas comes whole.
	raw       []byte
	rawBroken bool
}

// add takes one event; done reports the [DONE] event.
func (a *assembler) add(ev sseEvent) (done bool, err error) {
	if string(bytes.TrimSpace(ev.data)) == "[DONE]" {
		return true, nil
	}
	var ch chunkJSON
	if err := json.Unmarshal(ev.data, &ch); err != nil {
		if ev.typ == "error" {
			return false, &APIError{Status: 200, Message: "stream error event: " + snippet(ev.data)}
		}
		return false, a.malformed("event %d: %v (data starts %q)", a.events, err, snippet(ev.data))
	}
	if ch.Error.present {
		code := string(ch.Error.Code)
		return false, &APIError{Status: 200, Code: code, Message: ch.Error.text(), Retryable: retryableCode(code)}
	}
	if ev.typ == "error" {
		return false, &APIError{Status: 200, Message: "stream error event: " + snippet(ev.data)}
	}
	if a.id == "" {
		a.id = ch.ID
	}
	if a.model == "" {
		a.model = ch.Model
	}
	if ch.Usage != nil {
		if a.usage, err = ch.Usage.usage(); err != nil {
			return false, a.malformed("event %d: %v", a.events, err)
		}
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // only the first choice, as DecodeResponse
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			a.finish = *c.FinishReason
		}
		if err := a.addDelta(&c.Delta); err != nil {
			return false, err
		}
	}
	return false, nil
}

// addDelta appends one delta of the first choice.
func (a *assembler) addDelta(d *messageJSON) error {
	text := ""
	if d.Content != nil {
		text = *d.Content
	}
	reasoning := d.reasoning()
	if text == "" && reasoning == "" && len(d.ToolCalls) == 0 {
		return nil
	}
	if !a.delta {
		a.delta = true
		if a.first != nil {
			a.first()
		}
	}
	a.content.WriteString(text)
	a.reasoning.WriteString(reasoning)
	a.size += len(text) + len(reasoning)
	for i := range d.ToolCalls {
		tc := &d.ToolCalls[i]
		j, err := a.call(tc)
		if err != nil {
			return err
		}
		p := &a.calls[j]
		if tc.ID != "" {
			p.id = tc.ID
		}
		if tc.Type != "" {
			p.typ = tc.Type
		}
		p.name = append(p.name, tc.Function.Name...)
		args := tc.Function.Arguments
		p.args = append(p.args, args.text...)
		if args.raw == nil && args.text != "" {
			p.rawBroken = true
		}
		p.raw = append(p.raw, args.raw...)
		a.size += len(tc.ID) + len(tc.Type) + len(tc.Function.Name) + len(args.text) + len(args.raw)
	}
	if a.size > MaxResponseBytes {
		return a.malformed("assembled reply exceeds %d bytes", MaxResponseBytes)
	}
	return nil
}

// call returns the position in a.calls of the call a delta continues, or
// opens: the one with its index; without an index, the one with its id
// (or a new one after the others), else the last one.
func (a *assembler) call(tc *toolCallJSON) (int, error) {
	match := func(p *callParts) bool { return p.index == *tc.Index }
	index := 0
	switch {
	case tc.Index != nil:
		index = *tc.Index
	case tc.ID != "":
		match = func(p *callParts) bool { return p.id == tc.ID }
		for _, p := range a.calls {
			index = max(index, p.index+1)
		}
	case len(a.calls) > 0:
		return len(a.calls) - 1, nil
	default:
		match = func(*callParts) bool { return false }
	}
	for j := len(a.calls) - 1; j >= 0; j-- { // deltas mostly continue the last call
		if match(&a.calls[j]) {
			return j, nil
		}
	}
	if len(a.calls) == maxStreamToolCalls {
		return 0, a.malformed("more than %d tool calls", maxStreamToolCalls)
	}
	a.calls = append(a.calls, callParts{index: index})
	return len(a.calls) - 1, nil
}

// reply is the assembled Reply.
func (a *assembler) reply() Reply {
	r := Reply{Content: a.content.String(), Reasoning: a.reasoning.String(), FinishReason: a.finish,
		Usage: a.usage, Model: a.model, ID: a.id, Streamed: true}
	slices.SortStableFunc(a.calls, func(x, y callParts) int { return cmp.Compare(x.index, y.index) })
	for i := range a.calls {
		p := &a.calls[i]
		call := ToolCall{ID: p.id, Type: p.typ, Function: FunctionCall{Name: string(p.name), Arguments: p.arguments()}}
		if call.Type == "" {
			call.Type = "function"
		}
		r.ToolCalls = append(r.ToolCalls, call)
	}
	return r
}

// cut is the error of a stream that ended (io.EOF) or failed before
// [DONE].
func (a *assembler) cut(err error) error {
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		return a.malformed("a line over %d bytes after %s", MaxResponseBytes, eventCount(a.events))
	case errors.Is(err, errEventTooLong):
		return a.malformed("an event's data over %d bytes after %s", MaxResponseBytes, eventCount(a.events))
	case err == io.EOF:
		return &APIError{Status: 200, Code: CodeStreamCut, Retryable: true,
			Message: fmt.Sprintf("the stream ended before data: [DONE], after %s", eventCount(a.events))}
	}
	return &APIError{Status: 200, Code: CodeStreamCut, Retryable: true, Err: err,
		Message: fmt.Sprintf("the stream broke before data: [DONE], after %s: %v", eventCount(a.events), err)}
}

// eventCount is "1 event" or "N events".
func eventCount(n int) string {
	if n == 1 {
		return "1 event"
	}
	return strconv.Itoa(n) + " events"
}

func (a *assembler) malformed(format string, args ...any) error {
	return &APIError{Status: 200, Code: CodeMalformedResponse, Message: fmt.Sprintf("decode stream: "+format, args...)}
}

// retryableCode reports whether an error code sent inside a stream is an
// HTTP status worth retrying (OpenRouter sends its upstream's status as
// the code, e.g. 429 or 502).
func retryableCode(code string) bool {
	n, err := strconv.Atoi(code)
	return err == nil && n >= 400 && n <= 599 && retryableStatus(n, code)
}

// arguments is the call's arguments: its string pieces decoded as one
// JSON string when they all came as strings and join into one (a split
// character or surrogate pair is then whole), else the pieces as each
// decoded.
func (p *callParts) arguments() string {
	if !p.rawBroken && len(p.raw) > 0 {
		quoted := make([]byte, 0, len(p.raw)+2)
		quoted = append(append(append(quoted, '"'), p.raw...), '"')
		var s string
		if json.Unmarshal(quoted, &s) == nil && utf8.ValidString(s) && !strings.ContainsRune(s, utf8.RuneError) {
			return s
		}
	}
	return string(p.args)
}
