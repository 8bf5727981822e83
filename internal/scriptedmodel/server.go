package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenthub/agenthub/agent/llm"
)

// created is the fixed "created" timestamp of every reply (2026-01-01
// 00:00:00 UTC), so that recorded bodies are identical across recordings.
const created = 1767225600

// DefaultModel is the model name the server reports unless WithModel is used.
const DefaultModel = "scripted"

// DefaultChunkRunes is how many runes of content, reasoning or tool-call
// arguments one streamed delta carries at most, unless WithChunkRunes is
// used.
const DefaultChunkRunes = 8

// Server answers chat-completion calls with the turns of a script, in
// order. It is an http.Handler for POST requests to any path ending in
// "/chat/completions" ("/chat/completions", "/v1/chat/completions",
// "/api/paas/v4/chat/completions"), safe for concurrent use.
//
// A request with "stream": true is answered with server-sent events like
// OpenAI's: a chunk with the role, the reasoning_content deltas, the
// content deltas, for each tool call a chunk with its index, id, type,
// name and the start of its arguments and then chunks with the rest, a
// chunk with finish_reason, a usage chunk (no choices) when
// stream_options.include_usage is true, and "data: [DONE]". Texts are
// split every DefaultChunkRunes runes (see WithChunkRunes), so a stream is
// the same bytes on every run. Streamed or not, the answer carries the
// same id, content, reasoning, tool calls, finish reason and usage.
//
// Requests with n other than 1, or with stream_options but no stream, are
// answered HTTP 400 without using a turn; other paths get 404. The tools
// a request offers are not checked against the script's tool calls.
//
// A stream_cut fault ends the handler by panicking with
// http.ErrAbortHandler after flushing, so that net/http closes the
// connection mid-body; a caller serving it through anything else must
// recover that panic.
type Server struct {
	script     []Turn
	model      string
	chunkRunes int

	mu       sync.Mutex
	calls    int
	requests [][]llm.Message
}

var _ http.Handler = (*Server)(nil)

// Option configures a Server.
type Option func(*Server)

// WithModel sets the model name reported in replies (default DefaultModel).
func WithModel(name string) Option { return func(s *Server) { s.model = name } }

// WithChunkRunes sets how many runes of content, reasoning or arguments a
// streamed delta carries at most (default DefaultChunkRunes); n < 1 keeps
// the default.
func WithChunkRunes(n int) Option {
	return func(s *Server) {
		if n >= 1 {
			s.chunkRunes = n
		}
	}
}

// New returns a server that answers the i-th call with script[i]. Once the
// script is exhausted every call gets HTTP 500 "scripted model: script
// exhausted after N turns". The script is not validated here; see
// DecodeTurn and ParseScript. New copies the script.
func New(script []Turn, opts ...Option) *Server {
	s := &Server{script: append([]Turn(nil), script...), model: DefaultModel, chunkRunes: DefaultChunkRunes}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Calls returns the number of well-formed chat calls received so far,
// including calls that found the script exhausted.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Remaining returns the number of turns not yet served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(0, len(s.script)-s.calls)
}

// Requests returns a copy of the messages each call received, in call order.
func (s *Server) Requests() [][]llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]llm.Message, len(s.requests))
	for i, r := range s.requests {
		out[i] = append([]llm.Message(nil), r...)
	}
	return out
}

// request is the part of a chat-completion request the server reads.
type request struct {
	Messages      []llm.Message  `json:"messages"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`
	N             *int           `json:"n"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// includeUsage reports whether a streamed answer ends with a usage chunk.
func (r *request) includeUsage() bool { return r.StreamOptions != nil && r.StreamOptions.IncludeUsage }

// unsupported is the 400 body for a request the server would answer
// wrongly, or nil.
func (r *request) unsupported() *errorBody {
	if r.N != nil && *r.N != 1 {
		e := openAIParamError(fmt.Sprintf("scripted model: n = %d is not supported (one choice per call: omit n or send 1)", *r.N), "n", "unsupported_value")
		return &e
	}
	if r.StreamOptions != nil && !r.Stream {
		e := openAIParamError("scripted model: stream_options is only allowed with \"stream\": true", "stream_options", "invalid_value")
		return &e
	}
	return nil
}

// ServeHTTP answers one chat-completion call with the next turn.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeJSON(w, http.StatusNotFound, openAIError("not found: "+r.URL.Path+" (the scripted model serves POST /chat/completions)", "invalid_request_error", "not_found"))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, openAIError("method "+r.Method+" not allowed", "invalid_request_error", "method_not_allowed"))
		return
	}
	var req request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20))
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, openAIError("scripted model: decode request: "+err.Error(), "invalid_request_error", "invalid_json"))
		return
	}
	if e := req.unsupported(); e != nil {
		writeJSON(w, http.StatusBadRequest, *e)
		return
	}

	s.mu.Lock()
	n := s.calls
	s.calls++
	s.requests = append(s.requests, append([]llm.Message(nil), req.Messages...))
	s.mu.Unlock()

	if n >= len(s.script) {
		msg := fmt.Sprintf("scripted model: script exhausted after %d turns (restart the server, or add turns to the script)", len(s.script))
		writeJSON(w, http.StatusInternalServerError, openAIError(msg, "server_error", "script_exhausted"))
		return
	}
	s.answer(w, r, n+1, s.script[n], &req)
}

// answer writes turn (the call-th, 1-based) for the request.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, call int, t Turn, req *request) {
	if t.Fault == nil {
		s.writeReply(w, call, t, req)
		return
	}
	f := t.Fault
	switch f.Kind {
	case FaultRateLimit:
		if f.RetryAfterS > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfterS))
		}
		code := orDefault(f.Code, "1302")
		writeJSON(w, http.StatusTooManyRequests, glmError(code))
	case FaultServerError:
		writeJSON(w, http.StatusInternalServerError, openAIError("The server had an error while processing your request. Sorry about that!", "server_error", ""))
	case FaultBusinessError:
		writeJSON(w, http.StatusBadRequest, glmError(orDefault(f.Code, "1301")))
	case FaultErrorBody:
		body := glmError(orDefault(f.Code, "1234"))
		if !req.Stream {
			writeJSON(w, http.StatusOK, body)
			return
		}
		// Mid-stream errors come as an event carrying the error object,
		// and the stream ends without [DONE].
		b, _ := json.Marshal(body)
		startStream(w).event(b)
	case FaultMalformed:
		if !req.Stream {
			s.writeHalfBody(w, call, t, req)
			return
		}
		first := s.chunks(call, t, req)[0]
		sw := startStream(w)
		sw.event(first[:len(first)/2])
		sw.event(done)
	case FaultSlow:
		timer := time.NewTimer(time.Duration(f.DelayMS) * time.Millisecond)
		defer timer.Stop()
		select {
		case <-timer.C:
			s.writeReply(w, call, t, req)
		case <-r.Context().Done():
		}
	case FaultStreamCut:
		if !req.Stream {
			s.writeHalfBody(w, call, t, req)
		} else {
			chunks := s.chunks(call, t, req)
			sw := startStream(w)
			for _, c := range chunks[:min(f.AfterChunks, len(chunks))] {
				sw.event(c)
			}
		}
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	default:
		msg := fmt.Sprintf("scripted model: turn %d: unknown fault kind %q", call, f.Kind)
		writeJSON(w, http.StatusInternalServerError, openAIError(msg, "server_error", "bad_script"))
	}
}

// writeHalfBody writes the first half of the turn's chat.completion body
// (HTTP 200).
func (s *Server) writeHalfBody(w http.ResponseWriter, call int, t Turn, req *request) {
	full, _ := json.Marshal(s.completion(call, t, req.Messages))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(full[:len(full)/2])
}

// writeReply writes the turn's reply, streamed when the request asks.
func (s *Server) writeReply(w http.ResponseWriter, call int, t Turn, req *request) {
	if !req.Stream {
		writeJSON(w, http.StatusOK, s.completion(call, t, req.Messages))
		return
	}
	chunks := s.chunks(call, t, req)
	sw := startStream(w)
	for _, c := range chunks {
		if sw.event(c) != nil {
			return // the client went away
		}
	}
	sw.event(done)
}

// done is the data of the event that ends a stream.
var done = []byte("[DONE]")

// sseWriter writes the events of one SSE answer.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

// startStream writes the headers of an SSE answer (HTTP 200).
func startStream(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

// event writes one "data: …" event and flushes it.
func (sw *sseWriter) event(data []byte) error {
	sw.buf = append(append(append(sw.buf[:0], "data: "...), data...), "\n\n"...)
	if _, err := sw.w.Write(sw.buf); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// completion is a chat.completion body; field order is the wire order.
type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   usage    `json:"usage"`
}

type choice struct {
	Index        int     `json:"index"`
	Message      message `json:"message"`
	FinishReason string  `json:"finish_reason"`
}

// message is the assistant message of a reply; a plain reply marshals as
// {"role":"assistant","content":…}.
type message struct {
	Role             llm.Role   `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

// toolCall is a tool call of a message, or (with Index) of a delta.
type toolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type usage struct {
	PromptTokens            int                `json:"prompt_tokens"`
	CompletionTokens        int                `json:"completion_tokens"`
	TotalTokens             int                `json:"total_tokens"`
	CompletionTokensDetails *completionDetails `json:"completion_tokens_details,omitempty"`
}

type completionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// chunk is a chat.completion.chunk event; field order is the wire order.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role             llm.Role   `json:"role,omitempty"`
	Content          *string    `json:"content,omitempty"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

func (s *Server) completion(call int, t Turn, msgs []llm.Message) completion {
	msg := message{Role: llm.RoleAssistant, Content: t.Reply, ReasoningContent: t.Reasoning}
	for i, c := range t.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.callID(call, i), Type: "function",
			Function: functionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return completion{
		ID:      replyID(call),
		Object:  "chat.completion",
		Created: created,
		Model:   s.model,
		Choices: []choice{{Message: msg, FinishReason: finishReason(t)}},
		Usage:   turnUsage(t, msgs),
	}
}

// chunks are the data of the SSE events that stream the turn, [DONE]
// excluded.
func (s *Server) chunks(call int, t Turn, req *request) [][]byte {
	base := chunk{ID: replyID(call), Object: "chat.completion.chunk", Created: created, Model: s.model}
	var out [][]byte
	add := func(d delta, finish *string) {
		c := base
		c.Choices = []chunkChoice{{Delta: d, FinishReason: finish}}
		b, _ := json.Marshal(c) // plain structs of strings and ints
		out = append(out, b)
	}
	empty := ""
	add(delta{Role: llm.RoleAssistant, Content: &empty}, nil)
	for _, p := range splitRunes(t.Reasoning, s.chunkRunes) {
		add(delta{ReasoningContent: p}, nil)
	}
	for _, p := range splitRunes(t.Reply, s.chunkRunes) {
		add(delta{Content: &p}, nil)
	}
	for i, c := range t.ToolCalls {
		parts := splitRunes(c.Arguments, s.chunkRunes)
		first := toolCall{Index: &i, ID: c.callID(call, i), Type: "function", Function: functionCall{Name: c.Name}}
		if len(parts) > 0 {
			first.Function.Arguments, parts = parts[0], parts[1:]
		}
		add(delta{ToolCalls: []toolCall{first}}, nil)
		for _, p := range parts {
			add(delta{ToolCalls: []toolCall{{Index: &i, Function: functionCall{Arguments: p}}}}, nil)
		}
	}
	finish := finishReason(t)
	add(delta{}, &finish)
	if req.includeUsage() {
		u := turnUsage(t, req.Messages)
		c := base
		c.Choices = []chunkChoice{}
		c.Usage = &u
		b, _ := json.Marshal(c)
		out = append(out, b)
	}
	return out
}

// splitRunes cuts s into pieces of at most n runes (none for "").
func splitRunes(s string, n int) []string {
	var out []string
	for s != "" {
		end := 0
		for r := 0; r < n && end < len(s); r++ {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// replyID is the id of the call-th reply: "chatcmpl-scripted-<call>".
func replyID(call int) string { return "chatcmpl-scripted-" + strconv.Itoa(call) }

// finishReason is the turn's finish_reason: as scripted, else "tool_calls"
// with calls and "stop" without.
func finishReason(t Turn) string {
	if t.FinishReason == "" && len(t.ToolCalls) > 0 {
		return "tool_calls"
	}
	return orDefault(t.FinishReason, "stop")
}

// turnUsage is the usage reported for the turn answering msgs: prompt
// tokens by PromptTokens; completion tokens one per 4 bytes (rounded up)
// of the reply, of the reasoning and of each call's name and arguments, at
// least 1; the reasoning's share as completion_tokens_details when the
// turn has reasoning. For a plain reply the completion tokens are
// CompletionTokens(reply).
func turnUsage(t Turn, msgs []llm.Message) usage {
	reasoning := quarters(t.Reasoning)
	compl := quarters(t.Reply) + reasoning
	for _, c := range t.ToolCalls {
		compl += (len(c.Name) + len(c.Arguments) + 3) / 4
	}
	prompt, compl := PromptTokens(msgs), max(1, compl)
	u := usage{PromptTokens: prompt, CompletionTokens: compl, TotalTokens: prompt + compl}
	if t.Reasoning != "" {
		u.CompletionTokensDetails = &completionDetails{ReasoningTokens: reasoning}
	}
	return u
}

// quarters is one token per 4 bytes of s, rounded up.
func quarters(s string) int { return (len(s) + 3) / 4 }

// PromptTokens is the prompt token count the server reports for msgs: about
// one token per 4 bytes of content, plus 4 per message for the role and
// framing, plus 3 for the reply priming (roughly what OpenAI tokenizers
// report for English text).
func PromptTokens(msgs []llm.Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + quarters(m.Content)
	}
	return n
}

// CompletionTokens is the completion token count the server reports for a
// reply: one token per 4 bytes, rounded up, at least 1.
func CompletionTokens(reply string) int {
	return max(1, quarters(reply))
}

// errorBody is an error response: {"error":{…}}.
type errorBody struct {
	Error any `json:"error"`
}

// openAIErr is OpenAI's error object; a nil Code marshals as null.
type openAIErr struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func openAIError(msg, typ, code string) errorBody {
	e := openAIErr{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	return errorBody{Error: e}
}

// openAIParamError is an invalid_request_error about the request field
// param.
func openAIParamError(msg, param, code string) errorBody {
	e := openAIError(msg, "invalid_request_error", code)
	oe := e.Error.(openAIErr)
	oe.Param = &param
	return errorBody{Error: oe}
}

// glmErr is GLM's error object: a string code and a message.
type glmErr struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// glmMessages are the messages GLM sends with its common codes (English
// renderings).
var glmMessages = map[string]string{
	"1113": "Your account is in arrears, please recharge and try again.",
	"1234": "Network error, error id: scripted, please try again later.",
	"1261": "Prompt exceeds max length.",
	"1301": "The input or generated content may contain unsafe or sensitive content; please avoid prompts that are likely to produce such content.",
	"1302": "Rate limit reached for requests",
	"1304": "The daily call limit for this API has been reached.",
}

func glmError(code string) errorBody {
	msg, ok := glmMessages[code]
	if !ok {
		msg = "scripted business error " + code
	}
	return errorBody{Error: glmErr{Code: code, Message: msg}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "scripted model: encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
