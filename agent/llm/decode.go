package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// chatResponse is the part of a chat.completion body the client reads;
// unknown members (timings, system_fingerprint, logprobs, …) are ignored.
type chatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message      messageJSON `json:"message"`
		FinishReason *string     `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
	Error errorField `json:"error"`
	// Message and Code at the top level: vLLM's older error shape
	// {"object":"error","message":…,"code":400}.
	Message string       `json:"message"`
	Code    providerCode `json:"code"`
}

// messageJSON is a choice's message, or a streamed choice's delta.
type messageJSON struct {
	Content *string `json:"content"`
	// ReasoningContent is DeepSeek's, GLM's, llama.cpp's and Kimi's
	// reasoning text; Reasoning is OpenRouter's and newer vLLM's. Both
	// are read leniently: an auxiliary field of an unexpected type is
	// ignored rather than failing the reply.
	ReasoningContent textField     `json:"reasoning_content"`
	Reasoning        textField     `json:"reasoning"`
	ToolCalls        toolCallsJSON `json:"tool_calls"`
}

// reasoning is the message's reasoning text: reasoning_content, or
// reasoning when that is empty (vLLM sends both with the same text).
func (m *messageJSON) reasoning() string {
	if m.ReasoningContent != "" {
		return string(m.ReasoningContent)
	}
	return string(m.Reasoning)
}

// toolCallsJSON is message.tool_calls; null and absent are none.
type toolCallsJSON []toolCallJSON

// toolCallJSON is one tool call, or one streamed tool-call delta.
type toolCallJSON struct {
	// Index is the call's position; only streamed deltas need it.
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string         `json:"name"`
		Arguments argumentsField `json:"arguments"`
	} `json:"function"`
}

// textField is a string member that may also be null or of another type,
// both read as "".
type textField string

func (t *textField) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		s, err := jsonString(b)
		if err == nil {
			*t = textField(s)
		}
	}
	return nil
}

// argumentsField is function.arguments: a JSON string as the model wrote
// it, or (some servers) the arguments object itself, kept as its compact
// JSON text; null is "".
type argumentsField struct {
	text string // the decoded arguments
	// raw is, for a JSON string, its bytes between the quotes with the
	// escapes kept (nil otherwise): a stream may split a character or a
	// \u surrogate pair between two deltas, which decode only once joined.
	raw []byte
}

func (a *argumentsField) UnmarshalJSON(b []byte) error {
	s, err := stringOr(b, func(b []byte) (string, error) {
		var buf bytes.Buffer
		err := json.Compact(&buf, b)
		return validUTF8(buf.String()), err
	})
	a.text = s
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' {
		a.raw = append([]byte{}, b[1:n-1]...)
	}
	return err
}

// validUTF8 replaces each byte of s that is not UTF-8 with U+FFFD, as
// encoding/json does in the strings it decodes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as one utf8.RuneError
	}
	return b.String()
}

// toolCall is the ToolCall of one whole (not streamed) call.
func (tc *toolCallJSON) toolCall() ToolCall {
	call := ToolCall{ID: tc.ID, Type: tc.Type,
		Function: FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments.text}}
	if call.Type == "" {
		call.Type = "function"
	}
	return call
}

// usageJSON is usage as providers send it, details included.
type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's count of cached prompt tokens
	// (beside prompt_cache_miss_tokens).
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"`
}

// usage checks the counts and returns them; a negative count is an error
// naming its field. Cached tokens are prompt_tokens_details.cached_tokens,
// or DeepSeek's prompt_cache_hit_tokens when that is 0 or absent.
func (u *usageJSON) usage() (Usage, error) {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: u.PromptCacheHitTokens}
	detailCached := 0
	if d := u.PromptTokensDetails; d != nil {
		detailCached = d.CachedTokens
	}
	if detailCached != 0 {
		out.CachedTokens = detailCached
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	for _, f := range []struct {
		name string
		n    int
	}{
		{"prompt_tokens", u.PromptTokens},
		{"completion_tokens", u.CompletionTokens},
		{"completion_tokens_details.reasoning_tokens", out.ReasoningTokens},
		{"prompt_tokens_details.cached_tokens", detailCached},
		{"prompt_cache_hit_tokens", u.PromptCacheHitTokens},
	} {
		if f.n < 0 {
			return Usage{}, fmt.Errorf("usage.%s is %d; a token count is 0 or more", f.name, f.n)
		}
	}
	return out, nil
}

// unexpectedStreamMessage is what a non-streaming call says of an event
// stream.
const unexpectedStreamMessage = "the provider streamed; use --stream (Config.Stream) to read an event stream"

// unexpectedStream is the error of an event stream where a JSON body was
// asked for.
func unexpectedStream(status int) *APIError {
	return &APIError{Status: status, Code: CodeUnexpectedStream, Message: unexpectedStreamMessage}
}

// sniffLen is how many leading bytes IsEventStream needs at most.
const sniffLen = 9

// sseStarts are the starts of an event stream's first line: a field the
// server-sent events format defines, or a comment. No JSON text starts
// with one.
var sseStarts = []string{"data:", ":", "event:", "id:", "retry:"}

// IsEventStream reports whether a response with this Content-Type and body
// start (its first 9 bytes suffice) is a server-sent event stream: the body
// starts with an event-stream field or comment ("data:", ":", "event:",
// "id:", "retry:", after an optional byte order mark), or the media type is
// text/event-stream and the body does not start like a JSON object or
// array.
func IsEventStream(contentType string, prefix []byte) bool {
	prefix = bytes.TrimPrefix(prefix, []byte("\uFEFF"))
	for _, s := range sseStarts {
		if bytes.HasPrefix(prefix, []byte(s)) {
			return true
		}
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "text/event-stream" {
		return false
	}
	trimmed := bytes.TrimLeft(prefix, " \t\r\n")
	return len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[')
}

// DecodeBody decodes a whole recorded response body with its status as the
// client would have read it: an event stream (IsEventStream on its start)
// as a streaming call assembles it (AssembleStream), any other body as
// DecodeResponse does.
func DecodeBody(status int, body []byte) (Reply, error) {
	if status >= 200 && status <= 299 && IsEventStream("", body) {
		return AssembleStream(bytes.NewReader(body))
	}
	return DecodeResponse(status, body)
}

// DecodeResponse turns the HTTP status and body of a chat-completions
// response into the Reply of its first choice, as Chat does before it cuts
// the reply at the stop sequence and reads Retry-After (RetryAfter is
// therefore 0 here). A failure is an *APIError: the provider's error for a
// non-2xx status or an error body; CodeUnexpectedStream for a 2xx body
// that is an event stream (see IsEventStream; AssembleStream reads those);
// CodeMalformedResponse for a 2xx body that is not a chat completion, has
// no choices, or reports a negative token count.
func DecodeResponse(status int, body []byte) (Reply, error) {
	ok := status >= 200 && status <= 299
	if ok && IsEventStream("", body) {
		return Reply{}, unexpectedStream(status)
	}
	var r chatResponse
	err := json.Unmarshal(body, &r)
	if !ok {
		return Reply{}, statusError(status, body, r, err)
	}
	malformed := func(format string, args ...any) error {
		return &APIError{Status: status, Code: CodeMalformedResponse,
			Message: fmt.Sprintf("decode response: "+format+" (body starts %q)", append(args, snippet(body))...)}
	}
	if err != nil {
		return Reply{}, malformed("%v", err)
	}
	if len(r.Choices) == 0 {
		if r.Error.present {
			return Reply{}, &APIError{Status: status, Code: string(r.Error.Code), Message: r.Error.text()}
		}
		return Reply{}, malformed("no choices")
	}
	reply := Reply{ID: r.ID, Model: r.Model}
	if r.Usage != nil {
		if reply.Usage, err = r.Usage.usage(); err != nil {
			return Reply{}, malformed("%v", err)
		}
	}
	c := r.Choices[0]
	if c.Message.Content != nil {
		reply.Content = *c.Message.Content
	}
	reply.Reasoning = c.Message.reasoning()
	for i := range c.Message.ToolCalls {
		reply.ToolCalls = append(reply.ToolCalls, c.Message.ToolCalls[i].toolCall())
	}
	if c.FinishReason != nil {
		reply.FinishReason = *c.FinishReason
	}
	return reply, nil
}
