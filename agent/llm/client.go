package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
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
	// a longer body is a malformed_response error. For an event stream it
	// bounds the assembled reply (content, reasoning and tool calls), each
	// line and each event's data, not the stream's length.
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
	// Temperature is the sampling temperature, sent as given (0 is greedy;
	// never negative).
	Temperature float64
	// NoTemperature sends no temperature at all (OpenAI's o-series and
	// other reasoning models refuse one); Temperature must then be 0.
	NoTemperature bool
	// TopP, when set, is sent as top_p (nucleus sampling, 0 to 1).
	TopP *float64
	// Seed, when set, is sent as seed (best-effort determinism where the
	// provider supports it).
	Seed *int64
	// MaxTokens, when positive, is sent as max_tokens: the most tokens the
	// reply may have (0 sends none; never negative). OpenAI's o-series take
	// max_completion_tokens instead and refuse max_tokens.
	MaxTokens int
	// Stop is the one stop sequence (default DefaultStop). GLM accepts at
	// most one stop sequence, so the client sends exactly one, and also cuts
	// the reply at its first occurrence in case the server did not stop.
	Stop string
	// NoStop sends no stop sequence and does not cut replies (OpenAI's
	// o-series refuse stop; native tool calling needs none). Request.NoStop
	// does the same for one call.
	NoStop bool
	// Stream asks for a server-sent event stream ("stream":true,
	// "stream_options":{"include_usage":true}) and assembles it into the
	// Reply (see AssembleStream); Reply.TTFT then measures the time to the
	// first delta. A provider that answers a plain JSON body anyway is
	// decoded as such.
	Stream bool
	// HTTPClient sends the requests (default a new &http.Client{}); its
	// Transport is where recording and replay plug in. The client never
	// retries: retries are the agent's policy.
	HTTPClient *http.Client
	// Now returns the current time, used to turn an HTTP-date Retry-After
	// into a duration and to measure Reply.TTFT (default time.Now).
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
// BaseURL is not an absolute http or https URL, or a sampling setting is
// out of range (negative Temperature or MaxTokens, TopP outside 0 to 1, a
// Temperature with NoTemperature).
func NewClient(cfg Config) (*Client, error) {
	if err := checkSampling(cfg); err != nil {
		return nil, err
	}
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

// checkSampling refuses sampling settings no provider accepts.
func checkSampling(cfg Config) error {
	switch {
	case cfg.Temperature < 0:
		return fmt.Errorf("llm new client: temperature %g: want 0 or more", cfg.Temperature)
	case cfg.NoTemperature && cfg.Temperature != 0:
		return fmt.Errorf("llm new client: temperature %g with NoTemperature: set one or the other", cfg.Temperature)
	case cfg.TopP != nil && (*cfg.TopP < 0 || *cfg.TopP > 1):
		return fmt.Errorf("llm new client: top_p %g: want 0 to 1", *cfg.TopP)
	case cfg.MaxTokens < 0:
		return fmt.Errorf("llm new client: max_tokens %d: want 0 (none sent) or more", cfg.MaxTokens)
	}
	return nil
}

// chatRequest is the request body. Its field order is the wire order, so
// the same call always marshals to the same bytes. The first five fields
// are those of every text-protocol request ever recorded (temperature and
// stop are left out only when the configuration says so); the others are
// appended and left out when not set, so recorded requests still match.
type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Temperature   *float64       `json:"temperature,omitempty"`
	Stop          []string       `json:"stop,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	Tools         []ToolSpec     `json:"tools,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	Seed          *int64         `json:"seed,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// namedToolChoice is the tool_choice that forces one function.
type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// stops reports whether a call with req sends a stop sequence (and cuts
// the reply at it).
func (c *Client) stops(req Request) bool { return !c.cfg.NoStop && !req.NoStop }

// requestBody marshals the body of one call.
func (c *Client) requestBody(req Request) ([]byte, error) {
	body := chatRequest{Model: c.cfg.Model, Messages: req.Messages, Tools: req.Tools,
		TopP: c.cfg.TopP, Seed: c.cfg.Seed, MaxTokens: c.cfg.MaxTokens}
	if body.Messages == nil {
		body.Messages = []Message{} // "messages":[] rather than null
	}
	if !c.cfg.NoTemperature {
		t := c.cfg.Temperature
		body.Temperature = &t
	}
	if c.stops(req) {
		body.Stop = []string{c.cfg.Stop}
	}
	if c.cfg.Stream {
		body.Stream = true
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	switch choice := req.ToolChoice; {
	case choice == "":
	case len(req.Tools) == 0:
		return nil, fmt.Errorf("tool_choice %q without tools", choice)
	case choice == ToolChoiceAuto || choice == ToolChoiceNone || choice == ToolChoiceRequired:
		body.ToolChoice = choice
	default:
		if !slices.ContainsFunc(req.Tools, func(s ToolSpec) bool { return s.Name == choice }) {
			return nil, fmt.Errorf("tool_choice %q names none of the tools", choice)
		}
		var named namedToolChoice
		named.Type, named.Function.Name = "function", choice
		body.ToolChoice = named
	}
	return json.Marshal(body)
}

// Chat posts the request to the chat-completions endpoint and returns the
// first choice. Provider and transport failures are *APIError (see
// IsRetryable); a request that cannot be encoded (invalid tool parameters,
// a tool_choice naming no tool) is a plain error; when ctx ends first, the
// error wraps ctx.Err().
func (c *Client) Chat(ctx context.Context, req Request) (Reply, error) {
	body, err := c.requestBody(req)
	if err != nil {
		return Reply{}, fmt.Errorf("llm chat: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Reply{}, fmt.Errorf("llm chat: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.cfg.Stream {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	hreq.Header.Set("User-Agent", userAgent)
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	sent := c.now()
	resp, err := c.httpc.Do(hreq)
	if err != nil {
		return Reply{}, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	reply, err := c.readReply(ctx, resp, sent)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Retryable && ae.Status != 0 {
			ae.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
		}
		return Reply{}, err
	}
	if c.stops(req) {
		if i := strings.Index(reply.Content, c.cfg.Stop); i >= 0 {
			reply.Content = reply.Content[:i]
		}
	}
	return reply, nil
}

// readReply reads and decodes the response: an event stream when the
// client asked for one and got one, else a JSON body of at most
// MaxResponseBytes.
func (c *Client) readReply(ctx context.Context, resp *http.Response, sent time.Time) (Reply, error) {
	br := bufio.NewReader(resp.Body)
	prefix, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return Reply{}, c.transportError(ctx, err)
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if ok && IsEventStream(resp.Header.Get("Content-Type"), prefix) {
		if !c.cfg.Stream {
			return Reply{}, unexpectedStream(resp.StatusCode)
		}
		var ttft time.Duration
		reply, err := assemble(br, func() { ttft = max(c.now().Sub(sent), 0) })
		reply.TTFT = ttft
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return Reply{}, fmt.Errorf("llm chat: %w", ctxErr)
			}
			var ae *APIError
			if errors.As(err, &ae) {
				ae.Status = resp.StatusCode
			}
			return Reply{}, err
		}
		return reply, nil
	}
	data, err := io.ReadAll(io.LimitReader(br, MaxResponseBytes+1))
	if err != nil {
		return Reply{}, c.transportError(ctx, err)
	}
	if len(data) > MaxResponseBytes {
		return Reply{}, &APIError{Status: resp.StatusCode, Code: CodeMalformedResponse,
			Message: fmt.Sprintf("response body exceeds %d bytes", MaxResponseBytes)}
	}
	return DecodeResponse(resp.StatusCode, data)
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
