package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/agenthub/agent/llm"
)

// created is the fixed "created" timestamp of every reply (2026-01-01
// 00:00:00 UTC), so that recorded bodies are identical across recordings.
const created = 1767225600

// DefaultModel is the model name the server reports unless WithModel is used.
const DefaultModel = "scripted"

// Server answers chat-completion calls with the turns of a script, in
// order. It is an http.Handler for POST requests to any path ending in
// "/chat/completions" ("/chat/completions", "/v1/chat/completions",
// "/api/paas/v4/chat/completions"), safe for concurrent use.
type Server struct {
	script []Turn
	model  string

	mu       sync.Mutex
	calls    int
	requests [][]llm.Message
}

var _ http.Handler = (*Server)(nil)

// Option configures a Server.
type Option func(*Server)

// WithModel sets the model name reported in replies (default DefaultModel).
func WithModel(name string) Option { return func(s *Server) { s.model = name } }

// New returns a server that answers the i-th call with script[i]. Once the
// script is exhausted every call gets HTTP 500 "scripted model: script
// exhausted after N turns". The script is not validated here; see
// DecodeTurn and ParseScript. New copies the script.
func New(script []Turn, opts ...Option) *Server {
	s := &Server{script: append([]Turn(nil), script...), model: DefaultModel}
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
	Messages []llm.Message `json:"messages"`
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
	s.answer(w, r, n+1, s.script[n], req.Messages)
}

// answer writes turn (the call-th, 1-based) for the request messages.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, call int, t Turn, msgs []llm.Message) {
	if t.Fault == nil {
		s.writeReply(w, call, t, msgs)
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
		writeJSON(w, http.StatusOK, glmError(orDefault(f.Code, "1234")))
	case FaultMalformed:
		full, _ := json.Marshal(s.completion(call, t, msgs))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(full[:len(full)/2])
	case FaultSlow:
		timer := time.NewTimer(time.Duration(f.DelayMS) * time.Millisecond)
		defer timer.Stop()
		select {
		case <-timer.C:
			s.writeReply(w, call, t, msgs)
		case <-r.Context().Done():
		}
	default:
		msg := fmt.Sprintf("scripted model: turn %d: unknown fault kind %q", call, f.Kind)
		writeJSON(w, http.StatusInternalServerError, openAIError(msg, "server_error", "bad_script"))
	}
}

func (s *Server) writeReply(w http.ResponseWriter, call int, t Turn, msgs []llm.Message) {
	writeJSON(w, http.StatusOK, s.completion(call, t, msgs))
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
	Index        int         `json:"index"`
	Message      llm.Message `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (s *Server) completion(call int, t Turn, msgs []llm.Message) completion {
	prompt, compl := PromptTokens(msgs), CompletionTokens(t.Reply)
	return completion{
		ID:      fmt.Sprintf("chatcmpl-scripted-%d", call),
		Object:  "chat.completion",
		Created: created,
		Model:   s.model,
		Choices: []choice{{
			Message:      llm.Message{Role: llm.RoleAssistant, Content: t.Reply},
			FinishReason: orDefault(t.FinishReason, "stop"),
		}},
		Usage: usage{PromptTokens: prompt, CompletionTokens: compl, TotalTokens: prompt + compl},
	}
}

// PromptTokens is the prompt token count the server reports for msgs: about
// one token per 4 bytes of content, plus 4 per message for the role and
// framing, plus 3 for the reply priming (roughly what OpenAI tokenizers
// report for English text).
func PromptTokens(msgs []llm.Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + (len(m.Content)+3)/4
	}
	return n
}

// CompletionTokens is the completion token count the server reports for a
// reply: one token per 4 bytes, rounded up, at least 1.
func CompletionTokens(reply string) int {
	return max(1, (len(reply)+3)/4)
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
