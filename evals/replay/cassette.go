package replay

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/agenthub/agent/llm"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/dnaeon/go-vcr.v2/cassette"
	"gopkg.in/dnaeon/go-vcr.v2/recorder"
	"gopkg.in/yaml.v3"
)

// File names inside a run's cassette directory,
// cassettes/<scenario>/<prompt>/<trial>/.
const (
	// LLMCassette is the cassette of the model provider's traffic.
	LLMCassette = "llm.yaml"
	// ImageCassette is the cassette of the image service's traffic.
	ImageCassette = "image.yaml"
)

// Option configures Open.
type Option func(*config)

type config struct {
	transport http.RoundTripper
	secrets   []string
	hint      string
	maxBody   int64
	maxFile   int64
	modelMax  int64
	// reachDeadline moves a virtual clock to a request's deadline.
	reachDeadline func(context.Context)
}

// WithTransport sets the real transport that ModeRecord and
// ModeReplayOrRecord send requests through (default
// http.DefaultTransport). ModeReplay never uses it.
func WithTransport(rt http.RoundTripper) Option {
	return func(c *config) { c.transport = rt }
}

// WithSecrets names the secrets in use (API keys, tokens): after saving,
// the cassette is re-read and Close fails with ErrSecretLeak if any of them
// (or its URL-escaped form) appears. Values shorter than 6 bytes are
// ignored. Key-shaped strings (sk-..., Bearer tokens) are always scanned for.
func WithSecrets(values ...string) Option {
	return func(c *config) { c.secrets = append(c.secrets, values...) }
}

// WithRerecordHint sets the exact command that re-records this cassette,
// shown by every miss and stale-prompt error.
func WithRerecordHint(cmd string) Option {
	return func(c *config) { c.hint = cmd }
}

// WithMaxResponseBytes caps the response bodies the record modes accept
// from the real transport, counted on the wire as they arrive and, for a
// body that is still compressed (Content-Encoding gzip or deflate), after
// inflating (default DefaultMaxResponseBytes). A larger body is a
// transport failure "response over N bytes" that is never buffered whole.
func WithMaxResponseBytes(n int64) Option {
	return func(c *config) { c.maxBody = n }
}

// WithModelMaxResponseBytes caps, in a Recording, the model provider's
// response bodies only (its LLMCassette); the image cassette keeps
// WithMaxResponseBytes. The harness gives the model client's own cap here.
func WithModelMaxResponseBytes(n int64) Option {
	return func(c *config) { c.modelMax = n }
}

// WithDeadlineClock makes replay of a recorded deadline cut-off (see
// TransportErrorHeader) call reach with the replaying request's context
// before waiting for it to end: reach moves a virtual clock to that
// context's deadline (agent.ReplayClock.AdvanceToDeadline), so the recorded
// cut-off happens at once, at exactly the recorded request. Without it the
// replay waits for the request's real deadline.
func WithDeadlineClock(reach func(context.Context)) Option {
	return func(c *config) { c.reachDeadline = reach }
}

// WithMaxCassetteBytes caps the size of a cassette file that Open reads
// (default DefaultMaxCassetteBytes); a larger file is an error naming it
// and the limit.
func WithMaxCassetteBytes(n int64) Option {
	return func(c *config) { c.maxFile = n }
}

// InteractionInfo describes one interaction of a cassette, for reports.
type InteractionInfo struct {
	// Index is the interaction's position in the cassette, from 0.
	Index int
	// Method is the request method.
	Method string
	// Path is the request's escaped URL path.
	Path string
	// Status is the recorded response status code.
	Status int
	// DurationMS is the recorded latency in milliseconds: data for reports,
	// never waited for in replay.
	DurationMS float64
	// Played reports whether this run used the interaction.
	Played bool
	// Live reports whether this run sent the request to the real
	// transport (recorded it) rather than replaying it.
	Live bool
	// EventMS is, for a recorded server-sent-event stream, the arrival time
	// of each event in milliseconds since the request was sent (see
	// EventTimesHeader); EventMS[0] is the time to first token. Nil for
	// other responses.
	EventMS []int64
	// TransportError is the recorded transport failure of an interaction
	// with status TransportErrorStatus (see TransportErrorHeader); empty for
	// a real response.
	TransportError string
}

// DefaultMaxResponseBytes is the largest response body the record modes
// accept from the real transport unless WithMaxResponseBytes says
// otherwise (64 MiB: the image tool's own cap; the model client's is 8 MiB).
const DefaultMaxResponseBytes = 64 << 20

// DefaultMaxCassetteBytes is the largest cassette file Open reads unless
// WithMaxCassetteBytes says otherwise (256 MiB: a few recorded images at
// the response cap, base64-encoded).
const DefaultMaxCassetteBytes = 256 << 20

// Cassette is one cassette file opened in one mode. Its Client and
// Transport are safe for concurrent use; Close or Discard must be called
// exactly once at the end of the run (later calls do nothing).
//
// All file access goes through an *os.Root on the cassette's folder, so no
// symlink or ".." in the cassette's name can make it read or write outside
// that folder. go-vcr never touches the file system: replay serves from a
// go-vcr cassette built from the file parsed once, recording uses go-vcr's
// recorder only to capture interactions, and Close writes them itself.
type Cassette struct {
	path string // as given to Open, for messages
	mode Mode
	cfg  config

	root    *os.Root // the cassette's folder; nil until needed (record modes)
	dir     string   // that folder's path, to open the root lazily
	name    string   // the file's name inside root
	ownRoot bool     // Close closes root

	vcr *cassette.Cassette // replay modes: the loaded interactions
	rec *recorder.Recorder // record modes: captures live interactions

	liveMu sync.Mutex // record modes: one live request at a time, in order

	mu       sync.Mutex
	loaded   []*cassette.Interaction // as parsed at Open
	canon    []Request               // their canonical forms
	consumed []bool                  // which of them this run played
	infos    []InteractionInfo
	served   []int // per served request: the loaded index, or -1 if live
	misses   []error
	lost     []error                 // live requests go-vcr did not record
	captured []*cassette.Interaction // live interactions, in arrival order
	closed   bool
}

// slotKey carries a request's *slot through go-vcr to the matcher.
type slotKey struct{}

// slot is the per-request matching state: the canonical form computed once
// from the body read once, and the loaded index matched (-1 when none).
type slot struct {
	canon Request
	index int
}

// Open opens the cassette file at path (which must end in .yaml) in mode
// (the zero Mode is ModeReplay). The file is reached through an *os.Root
// on its folder.
//
// In ModeReplay the file must exist, parse and be at most
// DefaultMaxCassetteBytes (WithMaxCassetteBytes); the network is never
// used. In ModeRecord the old file is not read; in ModeReplayOrRecord it is
// read if it exists. Both record modes write nothing until Close, which
// replaces the file atomically.
func Open(path string, mode Mode, opts ...Option) (*Cassette, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var root *os.Root
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		root, err = os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("open cassette %s: %w", path, err)
		}
	}
	c, err := open(root, dir, name, path, mode, opts)
	if err != nil {
		if root != nil {
			root.Close()
		}
		return nil, err
	}
	c.ownRoot = true
	return c, nil
}

// open opens the cassette name inside root (nil: dir does not exist yet;
// only the record modes accept that). path is for messages.
func open(root *os.Root, dir, name, path string, mode Mode, opts []Option) (*Cassette, error) {
	if mode == "" {
		mode = ModeReplay
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, fmt.Errorf("open cassette %s: %w", path, err)
	}
	if !strings.HasSuffix(name, ".yaml") {
		return nil, fmt.Errorf("open cassette %s: path must end in .yaml", path)
	}
	c := &Cassette{path: path, mode: mode, root: root, dir: dir, name: name}
	c.cfg.maxBody, c.cfg.maxFile = DefaultMaxResponseBytes, DefaultMaxCassetteBytes
	for _, o := range opts {
		o(&c.cfg)
	}
	if mode != ModeRecord {
		data, err := c.readFile()
		switch {
		case err == nil:
			if err := c.load(data); err != nil {
				return nil, err
			}
		case mode == ModeReplayOrRecord && errors.Is(err, fs.ErrNotExist):
			c.vcr = cassette.New(name)
		default:
			return nil, fmt.Errorf("open cassette: %w%s", err, c.hintLine())
		}
		c.vcr.Matcher = c.match
	}
	if mode.records() {
		// A recorder on a cassette name that never exists starts empty in
		// recording mode; it is never stopped, so go-vcr writes nothing.
		// Recorded latency is data: it never waits for it.
		rec, err := recorder.NewAsMode(filepath.Join(os.TempDir(), ".agenthub-never-written-"+hex.EncodeToString(randomBytes())), recorder.ModeRecording,
			errorRecorder{wire{rt: c.realTransport(), max: c.cfg.maxBody}})
		if err != nil {
			return nil, fmt.Errorf("open cassette %s: %w", path, err)
		}
		rec.SkipRequestLatency = true
		rec.AddFilter(func(i *cassette.Interaction) error {
			c.mu.Lock()
			c.captured = append(c.captured, i)
			c.mu.Unlock()
			return nil
		})
		c.rec = rec
	}
	return c, nil
}

func (c *Cassette) realTransport() http.RoundTripper {
	if c.cfg.transport != nil {
		return c.cfg.transport
	}
	return http.DefaultTransport
}

func randomBytes() []byte {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return b[:]
}

// readFile reads the cassette file through the root (readRegular, with
// the cassette size limit).
func (c *Cassette) readFile() ([]byte, error) {
	if c.root == nil {
		return nil, &fs.PathError{Op: "open", Path: c.path, Err: fs.ErrNotExist}
	}
	return readRegular(c.root, c.name, c.path, c.cfg.maxFile, "cassette")
}

// load parses the recorded interactions once, computes their canonical
// forms and builds the go-vcr cassette replay serves from.
func (c *Cassette) load(data []byte) error {
	interactions, err := decodeCassette(data)
	if err != nil {
		return fmt.Errorf("open cassette %s: %w", c.path, err)
	}
	c.vcr = cassette.New(strings.TrimSuffix(c.name, ".yaml"))
	c.loaded = interactions
	c.canon = make([]Request, len(interactions))
	c.consumed = make([]bool, len(interactions))
	c.infos = make([]InteractionInfo, len(interactions))
	for i, in := range interactions {
		u, err := url.Parse(in.Request.URL)
		if err != nil {
			return fmt.Errorf("open cassette %s: interaction %d: %w", c.path, i, err)
		}
		c.canon[i] = canonicalize(in.Request.Method, u, in.Request.Headers.Get("Content-Type"), []byte(in.Request.Body))
		c.infos[i] = info(i, in)
		c.vcr.AddInteraction(in)
	}
	return nil
}

// info describes a recorded interaction.
func info(i int, in *cassette.Interaction) InteractionInfo {
	path := in.Request.URL
	if u, err := url.Parse(in.Request.URL); err == nil {
		path = u.EscapedPath()
	}
	inf := InteractionInfo{
		Index:      i,
		Method:     in.Request.Method,
		Path:       path,
		Status:     in.Response.Code,
		DurationMS: float64(in.Response.Duration) / float64(time.Millisecond),
	}
	if in.Response.Code == TransportErrorStatus {
		inf.TransportError = in.Response.Headers.Get(TransportErrorHeader)
	}
	inf.EventMS = parseOffsets(in.Response.Headers.Get(EventTimesHeader))
	return inf
}

// Responses returns the request line and response of every interaction
// loaded at Open, in recorded order (nil in ModeRecord).
func (c *Cassette) Responses() []RecordedResponse {
	out := make([]RecordedResponse, len(c.loaded))
	for i, in := range c.loaded {
		inf := info(i, in)
		out[i] = RecordedResponse{Method: inf.Method, Path: inf.Path, Status: in.Response.Code, Body: in.Response.Body}
	}
	return out
}

// Path returns the cassette file's path as given to Open.
func (c *Cassette) Path() string { return c.path }

// Mode returns the mode the cassette was opened in.
func (c *Cassette) Mode() Mode { return c.mode }

// Client returns a new *http.Client whose transport is Transport(), with
// no timeout and default redirect handling.
func (c *Cassette) Client() *http.Client { return &http.Client{Transport: c.Transport()} }

// Transport returns the cassette's http.RoundTripper. A recorded transport
// failure (see TransportErrorHeader) comes back as an error.
func (c *Cassette) Transport() http.RoundTripper {
	return errorReplayer{rt: transport{c}, reach: c.cfg.reachDeadline}
}

// Interactions describes the cassette's interactions: in replay modes
// those loaded at Open, followed by those recorded so far; after Close in a
// record mode, those saved.
func (c *Cassette) Interactions() []InteractionInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]InteractionInfo(nil), c.infos...)
}

// Misses returns the replay misses seen so far, each a *MissError wrapping
// ErrNoMatch. A tool may swallow the error its HTTP client got; the harness
// asks here afterwards.
func (c *Cassette) Misses() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.misses...)
}

func (c *Cassette) hintLine() string {
	if c.cfg.hint == "" {
		return ""
	}
	return "\nre-record with: " + c.cfg.hint
}

// match is the go-vcr matcher. go-vcr calls it, under its cassette lock,
// for each unplayed interaction in order until one returns true, and then
// marks that one played. The go-vcr cassette holds exactly the loaded
// interactions, so the candidate's index is found by its identity.
func (c *Cassette) match(r *http.Request, rec cassette.Request) bool {
	s, _ := r.Context().Value(slotKey{}).(*slot)
	if s == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, in := range c.loaded {
		if c.consumed[i] || in.Request.URL != rec.URL || in.Request.Method != rec.Method || in.Request.Body != rec.Body {
			continue
		}
		if !c.canon[i].Equal(s.canon) {
			return false
		}
		c.consumed[i] = true
		c.infos[i].Played = true
		s.index = i
		return true
	}
	return false
}

// transport is the cassette's RoundTripper.
type transport struct{ c *Cassette }

// RoundTrip reads the request body once and computes its canonical form;
// it replays the first unplayed interaction that matches, or (record
// modes) sends the request through go-vcr's recorder to the real
// transport. Replayed response headers are copies: a caller that edits
// them cannot change the cassette.
func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("replay %s %s: read request body: %w", req.Method, req.URL.Path, err)
		}
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("replay %s %s: %w: %s", req.Method, req.URL.Path, ErrClosed, c.path)
	}

	s := &slot{canon: canonicalize(req.Method, req.URL, req.Header.Get("Content-Type"), body), index: -1}
	r := req.Clone(context.WithValue(req.Context(), slotKey{}, s))
	if req.Body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	if c.vcr != nil {
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		in, err := c.vcr.GetInteraction(r)
		if err == nil {
			return c.serve(req, s.index, replayed(req, in), 0), nil
		}
		if c.rec == nil {
			miss := c.miss(s.canon)
			c.mu.Lock()
			c.misses = append(c.misses, miss)
			c.mu.Unlock()
			return nil, miss
		}
	}
	// Record modes: one live request at a time, so that the captured
	// interactions are in the order the requests were served.
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	if err := r.Context().Err(); err != nil {
		// The caller gave up before anything was sent: nothing to record.
		return nil, err
	}
	c.mu.Lock()
	before := len(c.captured)
	c.mu.Unlock()
	start := time.Now()
	resp, err := c.rec.RoundTrip(r)
	if err != nil {
		c.mu.Lock()
		switch {
		case len(c.captured) == before && r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
			// go-vcr stopped before the real transport because the caller's
			// context ended (every failure of the real transport itself is
			// recorded by errorRecorder): nothing went on the wire.
		case len(c.captured) == before:
			c.lost = append(c.lost, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err))
		default:
			// Recorded, but the caller's context ended as it arrived:
			// go-vcr then returns the context's error.
			c.served = append(c.served, -1)
		}
		c.mu.Unlock()
		return nil, err
	}
	return c.serve(req, -1, resp, time.Since(start)), nil
}

// serve notes a served request (index -1: recorded live) and returns its
// response with copied headers.
func (c *Cassette) serve(req *http.Request, index int, resp *http.Response, elapsed time.Duration) *http.Response {
	resp.Header = resp.Header.Clone()
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Request = req
	c.mu.Lock()
	defer c.mu.Unlock()
	c.served = append(c.served, index)
	if index < 0 {
		c.infos = append(c.infos, InteractionInfo{
			Index:          len(c.infos),
			Method:         req.Method,
			Path:           req.URL.EscapedPath(),
			Status:         resp.StatusCode,
			DurationMS:     float64(elapsed) / float64(time.Millisecond),
			Played:         true,
			Live:           true,
			TransportError: resp.Header.Get(TransportErrorHeader),
			EventMS:        parseOffsets(resp.Header.Get(EventTimesHeader)),
		})
	}
	return resp
}

// replayed builds the response of a recorded interaction, as go-vcr's
// recorder does.
func replayed(req *http.Request, in *cassette.Interaction) *http.Response {
	return &http.Response{
		Status:        in.Response.Status,
		StatusCode:    in.Response.Code,
		Proto:         "HTTP/1.0",
		ProtoMajor:    1,
		Request:       req,
		Header:        in.Response.Headers,
		Close:         true,
		ContentLength: int64(len(in.Response.Body)),
		Body:          io.NopCloser(strings.NewReader(in.Response.Body)),
	}
}

// canonicalRequest is a Request without its Equal method, so that cmp.Diff
// descends into the fields and shows only what changed.
type canonicalRequest struct {
	Method, Path, Query, MediaType string
	Body                           any
}

func viewOf(r Request) canonicalRequest {
	return canonicalRequest{Method: r.Method, Path: r.Path, Query: r.Query, MediaType: r.MediaType, Body: r.Body}
}

// miss builds the error for a request no unplayed interaction matched.
func (c *Cassette) miss(live Request) *MissError {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &MissError{Cassette: c.path, Method: live.Method, Path: live.Path, Nearest: -1, Hint: c.cfg.hint}
	for i, rc := range c.canon {
		if rc.Method != live.Method || rc.Path != live.Path {
			continue
		}
		if c.consumed[i] {
			e.Played++
			continue
		}
		d := cmp.Diff(viewOf(rc), viewOf(live))
		if e.Nearest < 0 || len(d) < len(e.Diff) {
			e.Nearest, e.Diff = i, d
		}
	}
	return e
}

// Close ends the run well. In ModeReplay it returns an *UnusedError
// (wrapping ErrUnusedInteractions) if some interactions were never played.
// In the record modes it fails with ErrIncomplete when a live request was
// not recorded; otherwise it redacts, writes the cassette to a temporary
// file, re-reads it, verifies it parses back to what was recorded, scans it
// for secrets (ErrSecretLeak), and only then renames it over the old
// cassette; on any error the old cassette is left intact and nothing else
// remains. A run with no requests writes an explicit empty cassette. Calls
// after the first Close or Discard do nothing and return nil.
func (c *Cassette) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	defer c.closeRoot()
	if c.mode == ModeReplay {
		return c.unused()
	}
	return c.save()
}

// Discard ends a failed run: in the record modes nothing is saved and the
// old cassette, if any, stays as it was. Calls after the first Close or
// Discard do nothing, so `defer c.Discard()` after Open is safe.
func (c *Cassette) Discard() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.closeRoot()
	return nil
}

func (c *Cassette) closeRoot() {
	if c.ownRoot && c.root != nil {
		c.root.Close()
	}
}

// unused reports the interactions a replay never played.
func (c *Cassette) unused() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &UnusedError{Cassette: c.path, Total: len(c.consumed)}
	for i, played := range c.consumed {
		if !played {
			e.Unused = append(e.Unused, c.infos[i])
		}
	}
	if len(e.Unused) == 0 {
		return nil
	}
	return e
}

// save writes the recording atomically; see Close.
func (c *Cassette) save() error {
	c.mu.Lock()
	lost := append([]error(nil), c.lost...)
	c.mu.Unlock()
	if len(lost) > 0 {
		return fmt.Errorf("save cassette %s: %w: %d live requests were not recorded: %w", c.path, ErrIncomplete, len(lost), errors.Join(lost...))
	}
	final, live := c.ordered()
	redacted := make([]*cassette.Interaction, len(final))
	for i, in := range final {
		// Old interactions were redacted when they were recorded; redacting
		// is idempotent, and copies leave the live run's maps alone.
		cp := *in
		if err := redactInteraction(&cp); err != nil {
			return fmt.Errorf("save cassette %s: %w", c.path, err)
		}
		redacted[i] = &cp
	}
	data, err := encodeCassette(redacted)
	if err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}
	if err := c.verify(data, redacted); err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}
	if err := c.writeAtomic(data); err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.infos = make([]InteractionInfo, len(redacted))
	for i, in := range redacted {
		c.infos[i] = info(i, in)
		c.infos[i].Played = true
		c.infos[i].Live = live[i]
	}
	return nil
}

// verify parses data back as go-vcr's own loader does (yaml.v3 into a
// cassette.Cassette), requires the interactions recorded, and scans the
// text and every decoded body for secrets.
func (c *Cassette) verify(data []byte, want []*cassette.Interaction) error {
	back := cassette.New(strings.TrimSuffix(c.name, ".yaml"))
	if err := yaml.Unmarshal(data, back); err != nil {
		return fmt.Errorf("re-read: %w", err)
	}
	if d := cmp.Diff(want, back.Interactions, cmpopts.IgnoreUnexported(cassette.Response{}, cassette.Interaction{}), cmpopts.EquateEmpty()); d != "" {
		return fmt.Errorf("re-read differs from what was recorded (-recorded +read):\n%s", d)
	}
	// Each part of each interaction first, so that a finding names where
	// it is (bodies written as !!binary are base64 in the file: they are
	// scanned decoded); then the whole file, as a backstop.
	name := c.name
	for i, in := range back.Interactions {
		parts := []struct{ part, text string }{
			{"request url", in.Request.URL},
			{"request headers", headerText(in.Request.Headers)},
			{"request form", in.Request.Form.Encode()},
			{"request body", in.Request.Body},
			{"response headers", headerText(in.Response.Headers)},
			{"response body", in.Response.Body},
		}
		if isEventStream(in.Response.Headers) {
			// A key split over several events reads whole once the stream
			// is assembled (llm owns the stream format).
			if reply, err := llm.AssembleStream(strings.NewReader(in.Response.Body)); err == nil || reply.Content != "" {
				text := reply.Content + "\n" + reply.Reasoning
				for _, tc := range reply.ToolCalls {
					text += "\n" + tc.Function.Name + "\n" + tc.Function.Arguments
				}
				parts = append(parts, struct{ part, text string }{"response stream (assembled)", text})
			}
		}
		var inflated bytes.Buffer
		if ok, err := inflate(in.Response.Headers.Get("Content-Encoding"), []byte(in.Response.Body), c.cfg.maxBody, &inflated); ok && err == nil {
			// A body kept compressed is scanned as it reads once inflated.
			parts = append(parts, struct{ part, text string }{"response body (inflated)", inflated.String()})
		}
		for _, p := range parts {
			where := fmt.Sprintf("%s #%d (%s %s) %s", name, i, in.Request.Method, info(i, in).Path, p.part)
			if err := scanBody([]byte(p.text), where, c.cfg.secrets); err != nil {
				return err
			}
		}
	}
	return scanSecrets(data, name, c.cfg.secrets)
}

// headerText renders headers one "Name: value" per line, sorted, for the
// secret scan.
func headerText(h http.Header) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	return b.String()
}

// writeAtomic writes data to a hidden temporary file beside the cassette,
// flushes it to stable storage and renames it over the cassette, all
// through the root.
func (c *Cassette) writeAtomic(data []byte) error {
	if c.root == nil {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return err
		}
		root, err := os.OpenRoot(c.dir)
		if err != nil {
			return err
		}
		c.root, c.ownRoot = root, true
	}
	dir, base := filepath.Split(c.name)
	tmp := filepath.Join(dir, "."+strings.TrimSuffix(base, ".yaml")+".tmp-"+hex.EncodeToString(randomBytes())+".yaml")
	f, err := c.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.root.Rename(tmp, c.name)
	}
	if err != nil {
		c.root.Remove(tmp)
	}
	return err
}

// ordered returns the interactions to save: in ModeRecord all recorded
// ones; in ModeReplayOrRecord those this run used, in the order it used
// them (unused old interactions are dropped), so that the next replay
// consumes them in the same order. live[i] reports whether interaction i
// was recorded by this run.
func (c *Cassette) ordered() (out []*cassette.Interaction, live []bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := 0
	for _, idx := range c.served {
		switch {
		case idx >= 0 && idx < len(c.loaded):
			out = append(out, c.loaded[idx])
			live = append(live, false)
		case idx < 0 && next < len(c.captured):
			out = append(out, c.captured[next])
			live = append(live, true)
			next++
		}
	}
	// Recorded interactions whose request never reported back (the
	// caller's context ended as the response arrived) are kept, not lost.
	for _, in := range c.captured[next:] {
		out = append(out, in)
		live = append(live, true)
	}
	if out == nil {
		out = []*cassette.Interaction{}
	}
	return out, live
}
