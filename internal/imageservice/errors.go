package imageservice

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Code is the stable error code carried in every error body, one of the
// Code* constants. Clients branch on the code, never on the message.
type Code string

// The error codes, each with the status it comes with.
const (
	// CodeInvalidWidth (400): width missing, not an integer, or outside 1..MaxWidth.
	CodeInvalidWidth Code = "invalid_width"
	// CodeMissingImage (400): no non-empty file field "image", or the body is not multipart/form-data.
	CodeMissingImage Code = "missing_image"
	// CodeInvalidRequest (400): the multipart body is malformed or has two "image" parts.
	CodeInvalidRequest Code = "invalid_request"
	// CodeUnsupportedFormat (415): the image is neither JPEG nor PNG (judged by content, not name).
	CodeUnsupportedFormat Code = "unsupported_format"
	// CodePayloadTooLarge (413): the body exceeds MaxBodyBytes.
	CodePayloadTooLarge Code = "payload_too_large"
	// CodeImageTooLarge (422): the source or the target exceeds MaxSourcePixels, or the estimated working memory exceeds MaxWorkBytes.
	CodeImageTooLarge Code = "image_too_large"
	// CodeCorruptImage (400): the image header or data does not decode.
	CodeCorruptImage Code = "corrupt_image"
	// CodeBusy (503, with Retry-After): every worker or every upload slot
	// is taken, or the bodies being received fill their byte budget.
	CodeBusy Code = "busy"
	// CodeTimeout (503): the request ran past Timeout; (408) the upload
	// was slower than MinUploadRate or paused for UploadGrace.
	CodeTimeout Code = "timeout"
	// CodeMethodNotAllowed (405, with Allow): wrong HTTP method for the path.
	CodeMethodNotAllowed Code = "method_not_allowed"
	// CodeNotFound (404): no such path.
	CodeNotFound Code = "not_found"
	// CodeInternal (500): a bug; the message never holds a stack trace.
	CodeInternal Code = "internal"
)

// errorBody is the JSON body of every error answer:
// {"error":{"code":"invalid_width","message":"resize: ..."}}.
type errorBody struct {
	// Error holds the code and the human-readable message.
	Error errorFields `json:"error"`
}

// errorFields is the inside of errorBody.
type errorFields struct {
	// Code is one of the Code* constants.
	Code Code `json:"code"`
	// Message is a lowercase sentence starting with the operation.
	Message string `json:"message"`
}

// apiError is an answer the handler gives instead of an image.
type apiError struct {
	status     int
	code       Code
	message    string
	retryAfter int  // seconds; 0 means no Retry-After header
	closeConn  bool // answered before the body was read; see unread
}

// unread marks e as answered before the request body was read: the
// answer closes the connection. Otherwise net/http reads up to 256 KiB
// of the body before writing the answer, which a stalled client never
// sends: it would get no answer and hold its connection.
func (e *apiError) unread() *apiError {
	e.closeConn = true
	return e
}

func (e *apiError) Error() string { return e.message }

func newError(status int, code Code, message string) *apiError {
	return &apiError{status: status, code: code, message: message}
}

// writeError writes e as a JSON error body with its status and headers.
func writeError(w http.ResponseWriter, e *apiError) {
	body, err := json.Marshal(errorBody{Error: errorFields{Code: e.code, Message: e.message}})
	if err != nil { // cannot happen: two strings
		body = []byte(`{"error":{"code":"internal","message":"encode error body"}}`)
	}
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	if e.closeConn {
		h.Set("Connection", "close")
	}
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}
