package llm

// DecodeResponse decodes one chat-completions response body with its HTTP
// status exactly as Client.Chat does after a round trip: the reply, or the
// typed *APIError a caller would get (for example for a recorded error
// status). It is the one decoder of provider bodies; the harness uses it to
// read recorded replies.
func DecodeResponse(status int, body []byte) (Reply, error) { return decodeResponse(status, body) }
