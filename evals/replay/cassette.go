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
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/dnaeon/go-vcr.v2/cassette"
	"gopkg.in/dnaeon/go-vcr.v2/recorder"
)

// File names inside a run's cassette directory,
// cassettes/<scenario>/<prompt>/<trial>/.
const (
	// LLMCassette is the cassette of the model provider's traffic.
	LLMCassette = "llm.yaml"
	// ImageCassette is the cassette of the image service's traffic.
	ImageCassette = "image.yaml"
)

// Dir returns the cassette directory of one run:
// root/<scenario>/<prompt>/<trial>.
func Dir(root, scenario, prompt string, trial int) string {
	return filepath.Join(root, scenario, prompt, fmt.Sprint(trial))
}

// Option configures Open.
type Option func(*config)

type config struct {
	transport  http.RoundTripper
	secrets    []string
	hint       string
	promptHash string
	ci         bool
	ignore     map[string]bool
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

// WithPromptHash makes Open in ModeReplay check the meta.json beside the
// cassette first (see CheckPrompt) and fail with ErrStaleCassette, before
// any request is made, when the recorded prompt hash differs from hash.
func WithPromptHash(hash string) Option {
	return func(c *config) { c.promptHash = hash }
}

// WithCI marks a CI run: Open then refuses ModeRecord and
// ModeReplayOrRecord with ErrRecordInCI.
func WithCI(ci bool) Option {
	return func(c *config) { c.ci = ci }
}

// WithIgnoreJSONFields names volatile JSON object keys (request ids,
// stream ids, timestamps) that matching ignores at any depth of a JSON
// request body, on both the live and the recorded side.
func WithIgnoreJSONFields(names ...string) Option {
	return func(c *config) {
		if c.ignore == nil {
			c.ignore = map[string]bool{}
		}
		for _, n := range names {
			c.ignore[n] = true
		}
	}
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
}

// Cassette is one cassette file opened in one mode. Its Client and
// Transport are safe for concurrent use; Close or Discard must be called
// exactly once at the end of the run (later calls do nothing).
type Cassette struct {
	path    string
	mode    Mode
	cfg     config
	rec     *recorder.Recorder
	tmpName string // go-vcr cassette name of the temporary file (no .yaml)

	mu       sync.Mutex
	canon    []Request // canonical forms of the interactions loaded at Open
	urls     []string  // their recorded URLs, to check the matcher's step
	consumed []bool    // mirror of go-vcr's replayed flags for those
	infos    []InteractionInfo
	served   []int // per served request: the loaded index, or -1 if live
	misses   []error
	captured []*cassette.Interaction // filtered interactions, at save
	closed   bool
}

// slotKey carries a request's *slot through go-vcr to the matcher.
type slotKey struct{}

// slot is the per-request matching state: the canonical form computed once
// from the body read once, and the matcher's scan position.
type slot struct {
	canon Request
	next  int // the loaded index go-vcr's next matcher call refers to
	index int // the loaded index matched, -1 when none
	err   error
}

// Open opens the cassette file at path (which must end in .yaml) in mode
// (the zero Mode is ModeReplay).
//
// In ModeReplay the file must exist and parse; the real transport is
// replaced by one that fails, so no request can reach the network. In
// ModeRecord the old file is not read; in ModeReplayOrRecord it is read if
// it exists. Both record modes write nothing until Close, which replaces
// the file atomically.
func Open(path string, mode Mode, opts ...Option) (*Cassette, error) {
	if mode == "" {
		mode = ModeReplay
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, fmt.Errorf("open cassette %s: %w", path, err)
	}
	if !strings.HasSuffix(path, ".yaml") {
		return nil, fmt.Errorf("open cassette %s: path must end in .yaml", path)
	}
	c := &Cassette{path: path, mode: mode}
	for _, o := range opts {
		o(&c.cfg)
	}
	if c.cfg.ci && mode.records() {
		return nil, fmt.Errorf("open cassette %s: %w (mode %s)", path, ErrRecordInCI, mode)
	}
	var real http.RoundTripper = http.DefaultTransport
	if c.cfg.transport != nil {
		real = c.cfg.transport
	}
	real = errorRecorder{real}

	var err error
	switch mode {
	case ModeReplay:
		if c.cfg.promptHash != "" {
			if err := CheckPrompt(filepath.Dir(path), c.cfg.promptHash); err != nil {
				return nil, fmt.Errorf("open cassette %s: %w%s", path, err, c.hintLine())
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("open cassette: %w%s", err, c.hintLine())
		}
		if err := c.load(data); err != nil {
			return nil, err
		}
		c.rec, err = recorder.NewAsMode(strings.TrimSuffix(path, ".yaml"), recorder.ModeReplaying, noNetwork{})
		if err != nil {
			return nil, fmt.Errorf("open cassette %s: %w", path, err)
		}
	case ModeRecord:
		c.tmpName = tempName(path)
		c.rec, err = recorder.NewAsMode(c.tmpName, recorder.ModeRecording, real)
		if err != nil {
			return nil, fmt.Errorf("open cassette %s: %w", path, err)
		}
	case ModeReplayOrRecord:
		c.tmpName = tempName(path)
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := c.load(data); err != nil {
				return nil, err
			}
			// go-vcr saves where it loaded from: give it a copy, so that
			// the old file stays intact until Close renames over it.
			if err := os.WriteFile(c.tmpName+".yaml", data, 0o644); err != nil {
				return nil, fmt.Errorf("open cassette %s: %w", path, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("open cassette: %w", err)
		}
		c.rec, err = recorder.NewAsMode(c.tmpName, recorder.ModeReplayingOrRecording, real)
		if err != nil {
			os.Remove(c.tmpName + ".yaml")
			return nil, fmt.Errorf("open cassette %s: %w", path, err)
		}
	}
	// Recorded latency is data: replay never waits for it (and in
	// recording go-vcr would otherwise wait a second time after the live
	// response).
	c.rec.SkipRequestLatency = true
	c.rec.SetMatcher(c.match)
	if mode.records() {
		// Save filters run on go-vcr's interactions just before saving;
		// redactInteraction replaces maps rather than editing them, since
		// they alias the live request's and response's headers.
		c.rec.AddSaveFilter(redactInteraction)
		c.rec.AddSaveFilter(func(i *cassette.Interaction) error {
			c.captured = append(c.captured, i)
			return nil
		})
	}
	return c, nil
}

// load parses the recorded interactions and computes their canonical forms.
func (c *Cassette) load(data []byte) error {
	interactions, err := decodeCassette(data)
	if err != nil {
		return fmt.Errorf("open cassette %s: %w", c.path, err)
	}
	c.canon = make([]Request, len(interactions))
	c.consumed = make([]bool, len(interactions))
	c.infos = make([]InteractionInfo, len(interactions))
	c.urls = make([]string, len(interactions))
	for i, in := range interactions {
		c.urls[i] = in.Request.URL
		u, err := url.Parse(in.Request.URL)
		if err != nil {
			return fmt.Errorf("open cassette %s: interaction %d: %w", c.path, i, err)
		}
		c.canon[i] = canonicalize(in.Request.Method, u, in.Request.Headers.Get("Content-Type"), []byte(in.Request.Body), c.cfg.ignore)
		c.infos[i] = info(i, in)
	}
	return nil
}

// info describes a recorded interaction.
func info(i int, in *cassette.Interaction) InteractionInfo {
	path := in.Request.URL
	if u, err := url.Parse(in.Request.URL); err == nil {
		path = u.EscapedPath()
	}
	return InteractionInfo{
		Index:      i,
		Method:     in.Request.Method,
		Path:       path,
		Status:     in.Response.Code,
		DurationMS: float64(in.Response.Duration) / float64(time.Millisecond),
	}
}

// tempName returns a fresh go-vcr cassette name (without .yaml) beside
// path, hidden and unique.
func tempName(path string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir, base := filepath.Split(strings.TrimSuffix(path, ".yaml"))
	return filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(b[:]))
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
func (c *Cassette) Transport() http.RoundTripper { return errorReplayer{transport{c}} }

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
// marks that one played. The slot's cursor follows the same walk over the
// consumed mirror, which is how a candidate's index is known.
func (c *Cassette) match(r *http.Request, rec cassette.Request) bool {
	s, _ := r.Context().Value(slotKey{}).(*slot)
	if s == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i := s.next
	for i < len(c.consumed) && c.consumed[i] {
		i++
	}
	s.next = i + 1
	if i >= len(c.consumed) {
		// Recorded during this run (replay-or-record): never replayed.
		return false
	}
	if c.urls[i] != rec.URL || c.infos[i].Method != rec.Method {
		s.err = fmt.Errorf("replay: internal error: matcher out of step at interaction %d", i)
		return false
	}
	if !c.canon[i].Equal(s.canon) {
		return false
	}
	c.consumed[i] = true
	c.infos[i].Played = true
	s.index = i
	return true
}

// transport is the cassette's RoundTripper.
type transport struct{ c *Cassette }

// RoundTrip reads the request body once, computes its canonical form, and
// hands go-vcr a clone carrying a fresh copy of the body for every reader
// (matcher, request dump, real transport). Replayed response headers are
// copies: a caller that edits them cannot change the cassette.
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

	s := &slot{canon: canonicalize(req.Method, req.URL, req.Header.Get("Content-Type"), body, c.cfg.ignore), index: -1}
	r := req.Clone(context.WithValue(req.Context(), slotKey{}, s))
	if req.Body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	start := time.Now()
	resp, err := c.rec.RoundTrip(r)
	if s.err != nil {
		return nil, s.err
	}
	if err != nil {
		if errors.Is(err, cassette.ErrInteractionNotFound) {
			miss := c.miss(s.canon)
			c.mu.Lock()
			c.misses = append(c.misses, miss)
			c.mu.Unlock()
			return nil, miss
		}
		return nil, err
	}
	elapsed := time.Since(start)
	resp.Header = resp.Header.Clone()
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Request = req

	c.mu.Lock()
	c.served = append(c.served, s.index)
	if s.index < 0 {
		c.infos = append(c.infos, InteractionInfo{
			Index:      len(c.infos),
			Method:     s.canon.Method,
			Path:       s.canon.Path,
			Status:     resp.StatusCode,
			DurationMS: float64(elapsed) / float64(time.Millisecond),
			Played:     true,
			Live:       true,
		})
	}
	c.mu.Unlock()
	return resp, nil
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

// noNetwork is the real transport of ModeReplay: it fails every request.
type noNetwork struct{}

func (noNetwork) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("replay %s %s: network disabled in replay mode", req.Method, req.URL.Path)
}

// Close ends the run well. In ModeReplay it returns an *UnusedError
// (wrapping ErrUnusedInteractions) if some interactions were never played.
// In the record modes it redacts, writes the cassette to a temporary file,
// re-reads it, verifies it parses back to what was recorded, scans it for
// secrets (ErrSecretLeak), and only then renames it over the old cassette;
// on any error the old cassette is left intact and nothing else remains.
// A run with no requests writes an explicit empty cassette. Calls after
// the first Close or Discard do nothing and return nil.
func (c *Cassette) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
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
	if c.tmpName != "" {
		if err := os.Remove(c.tmpName + ".yaml"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("discard cassette %s: %w", c.path, err)
		}
	}
	return nil
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
func (c *Cassette) save() (err error) {
	tmp := c.tmpName + ".yaml"
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	// go-vcr runs the save filters (redaction, then capture) on its
	// interactions and writes them to tmp (or nothing, for none). Its
	// rendering is replaced below: yaml.v3 cannot read back some bodies it
	// writes as text.
	if err := c.rec.Stop(); err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}
	final, live := c.ordered()
	data, err := encodeCassette(final)
	if err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}
	if err := writeSync(tmp, data); err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}

	// Re-read what is on disk, through go-vcr's own loader.
	back, err := os.ReadFile(tmp)
	if err != nil {
		return fmt.Errorf("save cassette %s: re-read: %w", c.path, err)
	}
	loaded, err := cassette.Load(c.tmpName)
	if err != nil {
		return fmt.Errorf("save cassette %s: re-read: %w", c.path, err)
	}
	if d := cmp.Diff(final, loaded.Interactions, cmpopts.IgnoreUnexported(cassette.Response{}), cmpopts.EquateEmpty()); d != "" {
		return fmt.Errorf("save cassette %s: re-read differs from what was recorded (-recorded +read):\n%s", c.path, d)
	}
	if err := scanSecrets(back, c.path, c.cfg.secrets); err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}
	for i, in := range loaded.Interactions {
		// Bodies written as !!binary are base64 in the file: scan them
		// decoded too.
		for _, b := range []struct{ side, body string }{{"request", in.Request.Body}, {"response", in.Response.Body}} {
			where := fmt.Sprintf("%s interaction %d %s body", c.path, i, b.side)
			if err := scanSecrets([]byte(b.body), where, c.cfg.secrets); err != nil {
				return fmt.Errorf("save cassette %s: %w", c.path, err)
			}
		}
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("save cassette %s: %w", c.path, err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.infos = make([]InteractionInfo, len(final))
	for i, in := range final {
		c.infos[i] = info(i, in)
		c.infos[i].Played = true
		c.infos[i].Live = live[i]
	}
	return nil
}

// ordered returns the interactions to save: in ModeRecord all recorded
// ones; in ModeReplayOrRecord those this run used, in the order it used
// them (unused old interactions are dropped), so that the next replay
// consumes them in the same order. live[i] reports whether interaction i
// was recorded by this run.
func (c *Cassette) ordered() (out []*cassette.Interaction, live []bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	nOld := len(c.canon)
	if nOld > len(c.captured) {
		nOld = len(c.captured)
	}
	old, recorded := c.captured[:nOld], c.captured[nOld:]
	next := 0
	for _, idx := range c.served {
		switch {
		case idx >= 0 && idx < len(old):
			out = append(out, old[idx])
			live = append(live, false)
		case idx < 0 && next < len(recorded):
			out = append(out, recorded[next])
			live = append(live, true)
			next++
		}
	}
	// Recorded interactions whose request never reported back (should
	// not happen) are kept rather than lost.
	for _, in := range recorded[next:] {
		out = append(out, in)
		live = append(live, true)
	}
	if out == nil {
		out = []*cassette.Interaction{}
	}
	return out, live
}

// writeSync writes data to name and flushes it to stable storage.
func writeSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
