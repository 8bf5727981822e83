package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultBaseURL is Zhipu GLM's OpenAI-compatible API root.
	DefaultBaseURL = "https://open.bigmodel.cn/api/paas/v4"
	// DefaultModel is the model used when Config.Model is empty.
	DefaultModel = "glm-4-flash"
	// DefaultStop is the stop sequence used when Config.Stop is empty: the
	// model must not write the tool's observation itself.
	DefaultStop = "\nObservation:"
	// MaxResponseBytes is the largest response body the client reads (8 MiB);
	// a longer body is a malformed_response error.
	MaxResponseBytes = 8 << 20
)

// userAgent is fixed so that recorded requests do not vary by machine, Go
// version or HTTP protocol version.
const userAgent = "agenthub"

// Config configures a Client. The zero value talks to GLM with DefaultModel.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL + "/chat/completions"
	// (a trailing slash is trimmed). Default DefaultBaseURL. Other
	// OpenAI-compatible servers work by base URL: DeepSeek
	// "https://api.deepseek.com", OpenAI "https://api.openai.com/v1",
	// Ollama "http://127.0.0.1:11434/v1", vLLM "http://127.0.0.1:8000/v1",
	// llama.cpp server "http://127.0.0.1:8080/v1".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer APIKey" when not empty
	// (local servers such as Ollama and llama.cpp need none). The caller
	// reads it from wherever it lives; this package never reads the
	// environment.
	APIKey string
	// Model is the model name sent with every request (default DefaultModel).
	Model string
	// Temperature is the sampling temperature, sent as given (0 is greedy).
	Temperature float64
	// Stop is the one stop sequence (default DefaultStop). GLM accepts at
	// most one stop sequence, so the client sends exactly one, and also cuts
	// the reply at its first occurrence in case the server did not stop.
	Stop string
	// HTTPClient sends the requests (default a new &http.Client{}); its
	// Transport is where recording and replay plug in. The client never
	// retries: retries are the agent's policy.
	HTTPClient *http.Client
	// Now returns the current time, used to turn an HTTP-date Retry-After
	// into a duration (default time.Now).
	Now func() time.Time
}

// Client is an OpenAI-compatible chat-completions client. It is safe for
// concurrent use.
type Client struct {
	url   string
	cfg   Config
	httpc *http.Client
	now   func() time.Time
}

var _ ChatModel = (*Client)(nil)

// NewClient returns a client for cfg with defaults filled in. It fails when
// BaseURL is not an absolute http or https URL.
func NewClient(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("llm new client: base URL %q: want http:// or https://", cfg.BaseURL)
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Stop == "" {
		cfg.Stop = DefaultStop
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("llm new client: base URL %q: not a URL with a host", cfg.BaseURL)
	}
	// The path goes before any query the base URL carries (some gateways
	// take their key as ?code=…).
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	c := &Client{url: u.String(), cfg: cfg, httpc: cfg.HTTPClient, now: cfg.Now}
	if c.httpc == nil {
		c.httpc = &http.Client{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// chatRequest is the request body. Its field order is the wire order, so
// the same call always marshals to the same bytes.
type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	Stop        []string  `json:"stop"`
	Stream      bool      `json:"stream"`
}

// Chat posts the messages to the chat-completions endpoint and returns the
// first choice. Provider and transport failures are *APIError (see
// IsRetryable); when ctx ends first, the error wraps ctx.Err().
func (c *Client) Chat(ctx context.Context, messages []Message) (Reply, error) {
	if messages == nil {
		messages = []Message{} // "messages":[] rather than null
	}
	body, err := json.Marshal(chatRequest{
		Model:       c.cfg.Model,
		Messages:    messages,
		Temperature: c.cfg.Temperature,
		Stop:        []string{c.cfg.Stop},
	})
	if err != nil {
		return Reply{}, fmt.Errorf("llm chat: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Reply{}, fmt.Errorf("llm chat: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.httpc.Do(req)
	if err != nil {
		return Reply{}, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return Reply{}, c.transportError(ctx, err)
	}
	if len(data) > MaxResponseBytes {
		return Reply{}, &APIError{Status: resp.StatusCode, Code: CodeMalformedResponse,
			Message: fmt.Sprintf("response body exceeds %d bytes", MaxResponseBytes)}
	}
	reply, err := DecodeResponse(resp.StatusCode, data)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Retryable {
			ae.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
		}
		return Reply{}, err
	}
	if i := strings.Index(reply.Content, c.cfg.Stop); i >= 0 {
		reply.Content = reply.Content[:i]
	}
	return reply, nil
}

// transportError maps a failed round trip: the context's error when ctx is
// done, otherwise a retryable connection_error.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("llm chat: %w", ctxErr)
	}
	return &APIError{Code: CodeConnectionError, Message: err.Error(), Retryable: true, Err: err}
}

// parseRetryAfter reads a Retry-After value in seconds or as an HTTP date
// (relative to now). An absent, invalid or past value is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		const maxSecs = int64(24 * time.Hour / time.Second)
		return time.Duration(min(secs, maxSecs)) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d := t.Sub(now); d > 0 {
		return d
	}
	return 0
}
