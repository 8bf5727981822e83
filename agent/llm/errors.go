package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Codes the client itself puts in APIError.Code (providers' own codes pass
// through unchanged).
const (
	// CodeConnectionError marks a transport failure: refused connection,
	// reset, timeout, a body cut short. Status is 0 and Err holds the cause.
	CodeConnectionError = "connection_error"
	// CodeMalformedResponse marks a response body that is not a valid
	// chat completion (not JSON, no choices, too large).
	CodeMalformedResponse = "malformed_response"
	// CodeStreamCut marks an event stream that ended, or broke, before
	// its "data: [DONE]" event. It is retryable like a transport failure;
	// Err holds the read error when there was one.
	CodeStreamCut = "stream_cut"
	// CodeUnexpectedStream marks an event stream received by a call that
	// did not ask for one (Config.Stream false). It is not retryable: the
	// same request gets the same kind of answer.
	CodeUnexpectedStream = "unexpected_stream"
)

// quotaCodes are provider codes that come with HTTP 429 but mean an
// exhausted balance or quota: retrying within seconds cannot help.
var quotaCodes = map[string]bool{
	"1113":               true, // GLM: account in arrears / insufficient balance
	"1304":               true, // GLM: daily call quota reached
	"1308":               true, // GLM: usage limit reached until a reset time
	"1310":               true, // GLM: weekly/monthly limit reached
	"insufficient_quota": true, // OpenAI
}

// APIError is a failed chat call: an HTTP error status, an error body with a
// 2xx status, a malformed body, or a transport failure (Status 0, Code
// CodeConnectionError).
type APIError struct {
	// Status is the HTTP status code, 0 when no response arrived.
	Status int
	// Code is the provider's error code as text ("1302", "429",
	// "insufficient_quota"), or CodeConnectionError / CodeMalformedResponse;
	// empty when the provider sent none (a null code).
	Code string
	// Message is the provider's error message, or what was wrong.
	Message string
	// Retryable reports whether the same request may succeed later: 408,
	// 429 (except quota codes such as GLM 1113/1304/1308/1310 and OpenAI
	// insufficient_quota), 5xx, and connection errors.
	Retryable bool
	// RetryAfter is the server's Retry-After hint (0 when absent); only set
	// on retryable errors.
	RetryAfter time.Duration
	// Err is the underlying cause for connection errors, else nil.
	Err error
}

// Error describes the failure, starting with the operation.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("llm chat: ")
	if e.Status == 0 {
		b.WriteString("connection error")
	} else {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
	}
	if e.Code != "" && e.Code != CodeConnectionError {
		fmt.Fprintf(&b, " (code %s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Unwrap returns the cause of a connection error.
func (e *APIError) Unwrap() error { return e.Err }

// IsRetryable reports whether err is an *APIError (possibly wrapped) that
// may succeed on retry, and the server's Retry-After hint (0 when none).
// Context errors and other errors are not retryable.
func IsRetryable(err error) (retryable bool, after time.Duration) {
	var ae *APIError
	if errors.As(err, &ae) && ae.Retryable {
		return true, ae.RetryAfter
	}
	return false, 0
}

// retryableStatus reports whether an HTTP status with the provider code is
// worth retrying.
func retryableStatus(status int, code string) bool {
	switch {
	case status == http.StatusRequestTimeout:
		return true
	case status == http.StatusTooManyRequests:
		return !quotaCodes[code]
	case status >= 500:
		return true
	}
	return false
}

// providerCode is an error code that may arrive as a JSON string, an
// integer or null.
type providerCode string

func (c *providerCode) UnmarshalJSON(b []byte) error {
	s, err := stringOr(b, func(b []byte) (string, error) {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return "", fmt.Errorf("error code: want string, number or null, got %.20s", b)
		}
		return n.String(), nil
	})
	*c = providerCode(s)
	return err
}

// stringOr decodes a JSON member that is a string, null (read as ""), or
// another value that other turns into text.
func stringOr(b []byte, other func([]byte) (string, error)) (string, error) {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return "", nil
	case len(b) > 0 && b[0] == '"':
		return jsonString(b)
	}
	return other(b)
}

// jsonString decodes a JSON string that the decoder calling an
// UnmarshalJSON method has already checked: one without escapes, in valid
// UTF-8, is its bytes between the quotes (the common case in a stream of
// short deltas, and no second decoder).
func jsonString(b []byte) (string, error) {
	if len(b) >= 2 && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// errorField is the "error" member: an object (OpenAI, GLM, OpenRouter,
// vLLM, llama.cpp) or a bare string (Ollama's native API).
type errorField struct {
	present bool
	Message string
	Type    string
	Code    providerCode
	Raw     string // OpenRouter's upstream message, metadata.raw
}

func (f *errorField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	f.present = true
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &f.Message)
	}
	var obj struct {
		Message  string       `json:"message"`
		Type     string       `json:"type"`
		Code     providerCode `json:"code"`
		Metadata struct {
			Raw json.RawMessage `json:"raw"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	f.Message, f.Type, f.Code = obj.Message, obj.Type, obj.Code
	var raw string
	if json.Unmarshal(obj.Metadata.Raw, &raw) == nil {
		f.Raw = raw
	}
	return nil
}

// text is the best human message of the error.
func (f *errorField) text() string {
	msg := f.Message
	if msg == "" {
		msg = f.Type
	}
	if f.Raw != "" {
		msg += ": " + f.Raw
	}
	if msg == "" {
		msg = "error body without a message"
	}
	return msg
}

// statusError is the *APIError of a non-2xx response; r and err are the
// result of decoding body as a chat response.
func statusError(status int, body []byte, r chatResponse, err error) *APIError {
	ae := &APIError{Status: status}
	switch {
	case err == nil && r.Error.present:
		ae.Code = string(r.Error.Code)
		ae.Message = r.Error.text()
	case err == nil && r.Message != "":
		ae.Code = string(r.Code)
		ae.Message = r.Message
	default:
		ae.Message = snippet(body)
		if ae.Message == "" {
			ae.Message = http.StatusText(status)
		}
	}
	ae.Retryable = retryableStatus(status, ae.Code)
	return ae
}

// snippet is the start of a body for an error message: at most 200 bytes,
// cut on a rune boundary, whitespace-trimmed.
func snippet(body []byte) string { return clip(strings.TrimSpace(string(body)), 200) }

// clip cuts s to at most n bytes on a rune boundary, marking a cut with
// "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
