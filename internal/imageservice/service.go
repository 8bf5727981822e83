package imageservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Service is the image-resize HTTP handler. It serves
//
//	POST /resize   multipart/form-data: file field "image", field "width"
//	               (or ?width=N); answers the resized image
//	GET  /healthz  200 with a JSON health body (see the package documentation)
//
// Every other path is 404 not_found; a wrong method is 405
// method_not_allowed. A Service is safe for concurrent use; create it with
// New.
type Service struct {
	cfg       Config
	log       *slog.Logger
	slots     chan struct{} // one token per running /resize request
	uploads   chan struct{} // one token per request body being received
	bodyBytes byteBudget    // what the bodies being received hold so far
	inFlight  atomic.Int64
	// resize decodes, scales and encodes a read request: process, or a
	// stand-in in tests.
	resize func(context.Context, resizeRequest) resizeResult
}

var _ http.Handler = (*Service)(nil)

// New returns the service for cfg (zero fields take their defaults; see
// Config) logging one access-log record per request to logger (nil:
// discard). The result is an http.Handler; mount it at the root, or use it
// with httptest.NewServer.
func New(cfg Config, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	s := &Service{cfg: cfg, log: logger, slots: make(chan struct{}, cfg.MaxConcurrent),
		uploads:   make(chan struct{}, uploadsPerWorker*cfg.MaxConcurrent),
		bodyBytes: byteBudget{limit: uploadBudget(cfg)}}
	s.resize = s.process
	return s
}

// Config returns the effective configuration, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// health is the JSON body of GET /healthz.
type health struct {
	// Status is always "ok".
	Status string `json:"status"`
	// Version is Config.Version.
	Version string `json:"version"`
	// Formats lists the accepted and produced formats: ["jpeg","png"].
	Formats []string `json:"formats"`
	// InFlight is the number of /resize requests being processed now.
	InFlight int64 `json:"in_flight"`
	// Uploading is the number of /resize request bodies being received.
	Uploading int `json:"uploading"`
	// Limits are the effective limits.
	Limits healthLimits `json:"limits"`
}

// healthLimits is the limits part of health.
type healthLimits struct {
	MaxBodyBytes    int64 `json:"max_body_bytes"`
	MaxWidth        int   `json:"max_width"`
	MaxSourcePixels int64 `json:"max_source_pixels"`
	MaxWorkBytes    int64 `json:"max_work_bytes"`
	TimeoutMS       int64 `json:"timeout_ms"`
	MaxConcurrent   int   `json:"max_concurrent"`
	JPEGQuality     int   `json:"jpeg_quality"`
}

// accessRecord collects what the access log reports about one request.
type accessRecord struct {
	src, dst string // "WxH", empty when unknown
	code     Code   // error code, empty on success
}

// countingWriter records the status and the body bytes written.
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *countingWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP routes the request and writes one access-log record.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	cw := &countingWriter{ResponseWriter: w}
	rec := &accessRecord{}
	switch r.URL.Path {
	case "/resize":
		s.serveResize(cw, r, rec)
	case "/healthz":
		s.serveHealth(cw, r, rec)
	default:
		s.fail(cw, rec, newError(http.StatusNotFound, CodeNotFound, fmt.Sprintf("route: no handler for path %q", r.URL.Path)))
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", cw.status),
		slog.Int64("bytes", cw.bytes),
		slog.Float64("ms", float64(time.Since(start).Microseconds())/1000),
	}
	if rec.src != "" {
		attrs = append(attrs, slog.String("src", rec.src))
	}
	if rec.dst != "" {
		attrs = append(attrs, slog.String("dst", rec.dst))
	}
	if rec.code != "" {
		attrs = append(attrs, slog.String("code", string(rec.code)))
	}
	level := slog.LevelInfo
	if cw.status >= http.StatusInternalServerError && rec.code != CodeBusy && rec.code != CodeTimeout {
		level = slog.LevelError
	}
	s.log.LogAttrs(r.Context(), level, "http request", attrs...)
}

func (s *Service) fail(w http.ResponseWriter, rec *accessRecord, e *apiError) {
	rec.code = e.code
	writeError(w, e)
}

func methodNotAllowed(w http.ResponseWriter, allow string) *apiError {
	w.Header().Set("Allow", allow)
	return newError(http.StatusMethodNotAllowed, CodeMethodNotAllowed, fmt.Sprintf("route: method not allowed; use %s", allow))
}

func (s *Service) serveHealth(w http.ResponseWriter, r *http.Request, rec *accessRecord) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.fail(w, rec, methodNotAllowed(w, "GET, HEAD"))
		return
	}
	body, err := json.Marshal(health{
		Status:    "ok",
		Version:   s.cfg.Version,
		Formats:   []string{formatJPEG, formatPNG},
		InFlight:  s.inFlight.Load(),
		Uploading: len(s.uploads),
		Limits: healthLimits{
			MaxBodyBytes:    s.cfg.MaxBodyBytes,
			MaxWidth:        s.cfg.MaxWidth,
			MaxSourcePixels: s.cfg.MaxSourcePixels,
			MaxWorkBytes:    s.cfg.MaxWorkBytes,
			TimeoutMS:       s.cfg.Timeout.Milliseconds(),
			MaxConcurrent:   s.cfg.MaxConcurrent,
			JPEGQuality:     s.cfg.JPEGQuality,
		},
	})
	if err != nil {
		s.fail(w, rec, newError(http.StatusInternalServerError, CodeInternal, "healthz: encode body"))
		return
	}
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// resizeRequest is a parsed /resize request.
type resizeRequest struct {
	width int
	image []byte
}

// resizeResult is what the worker hands back to the handler.
type resizeResult struct {
	out           *encoded
	err           *apiError
	srcW, srcH    int
	haveSrcConfig bool
}

func (s *Service) serveResize(w http.ResponseWriter, r *http.Request, rec *accessRecord) {
	if r.Method != http.MethodPost {
		s.fail(w, rec, methodNotAllowed(w, http.MethodPost))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	req, aerr := s.receive(ctx, w, r)
	if aerr != nil {
		s.fail(w, rec, aerr)
		return
	}
	res := s.work(ctx, req)
	if res.haveSrcConfig {
		rec.src = fmt.Sprintf("%dx%d", res.srcW, res.srcH)
	}
	if res.err != nil {
		s.fail(w, rec, res.err)
		return
	}
	out := res.out
	rec.dst = fmt.Sprintf("%dx%d", out.width, out.height)
	h := w.Header()
	h.Set("Content-Type", out.contentType)
	h.Set("Content-Length", strconv.Itoa(len(out.data)))
	h.Set("X-Image-Width", strconv.Itoa(out.width))
	h.Set("X-Image-Height", strconv.Itoa(out.height))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.data)
}

// receive admits the request to an upload slot and reads its body, under
// ctx's deadline and the upload limits.
func (s *Service) receive(ctx context.Context, w http.ResponseWriter, r *http.Request) (resizeRequest, *apiError) {
	// Shed load before reading a byte of the body. A body is received
	// under an upload slot and only then takes a worker slot, so slow
	// clients (a slowloris) tie up upload slots, not the workers; see
	// upload.go for why a few of them cannot take every upload slot.
	if len(s.slots) == cap(s.slots) {
		// No worker could take it now: say so before the client sends
		// the body, not after.
		return resizeRequest{}, s.busy(fmt.Sprintf("%d requests in flight", s.cfg.MaxConcurrent)).unread()
	}
	select {
	case s.uploads <- struct{}{}:
	default:
		return resizeRequest{}, s.busy(fmt.Sprintf("%d uploads in flight", cap(s.uploads))).unread()
	}
	defer func() { <-s.uploads }()
	// The body reader bounds the read by ctx's deadline (and the idle
	// limit) through the connection's read deadline; recorders without a
	// connection answer ErrNotSupported, which is fine.
	ctl := http.NewResponseController(w)
	deadline, _ := ctx.Deadline()
	body := newRateReader(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), ctl, s.cfg, &s.bodyBytes, deadline)
	defer func() { s.bodyBytes.give(body.charged) }()
	r.Body = body
	req, aerr := s.readRequest(ctx, r, body)
	if aerr == nil {
		// The body is in: disarm the upload's idle deadline. Left armed,
		// it fires during a resize longer than UploadGrace, fails the
		// server's background read and cancels ctx. ctx alone bounds the
		// processing.
		_ = ctl.SetReadDeadline(time.Time{})
	}
	return req, aerr
}

// work processes req in a worker slot, taken without waiting (503 busy
// when every worker is busy), and gives up at ctx's deadline.
func (s *Service) work(ctx context.Context, req resizeRequest) resizeResult {
	select {
	case s.slots <- struct{}{}:
	default:
		return resizeResult{err: s.busy(fmt.Sprintf("%d requests in flight", s.cfg.MaxConcurrent))}
	}
	s.inFlight.Add(1)
	done := make(chan resizeResult, 1)
	go func() {
		res := s.processSafely(ctx, req)
		// Free the slot before the answer is written, so that a client
		// that sends its next request on receipt finds it free.
		s.inFlight.Add(-1)
		<-s.slots
		done <- res
	}()
	select {
	case res := <-done:
		return res
	case <-ctx.Done():
		// The worker keeps its slot until it finishes, so the
		// concurrency limit still bounds CPU and memory.
		return resizeResult{err: timeoutError(s.cfg.Timeout)}
	}
}

// busy is the 503 answer with Retry-After; why says which limit is full.
func (s *Service) busy(why string) *apiError {
	e := newError(http.StatusServiceUnavailable, CodeBusy,
		fmt.Sprintf("resize: server busy (%s); retry later", why))
	e.retryAfter = s.cfg.retryAfterSeconds()
	return e
}

// processSafely is process with a panic turned into 500 internal.
func (s *Service) processSafely(ctx context.Context, req resizeRequest) (res resizeResult) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("resize: panic", slog.Any("panic", p))
			res = resizeResult{err: newError(http.StatusInternalServerError, CodeInternal, "resize: internal error")}
		}
	}()
	return s.resize(ctx, req)
}

func timeoutError(d time.Duration) *apiError {
	return newError(http.StatusServiceUnavailable, CodeTimeout, fmt.Sprintf("resize: request exceeded the %v deadline", d))
}

// maxWidthField bounds the bytes read from the width field.
const maxWidthField = 32

// readRequest reads the width and the image bytes from the request, whose
// body is rr.
func (s *Service) readRequest(ctx context.Context, r *http.Request, rr *rateReader) (resizeRequest, *apiError) {
	var req resizeRequest
	haveWidth := false
	if q := r.URL.Query(); q.Has("width") {
		wd, aerr := s.parseWidth(q.Get("width"))
		if aerr != nil {
			return req, aerr
		}
		req.width, haveWidth = wd, true
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return req, s.tooLarge()
	}
	// A too-slow upload can surface as any parse error (the multipart
	// reader does not keep the cause), so the reader's verdict comes first.
	readError := func(op string, err error) *apiError {
		if rr.cause != nil {
			err = rr.cause
		}
		return s.readError(ctx, op, err)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return req, newError(http.StatusBadRequest, CodeMissingImage,
			fmt.Sprintf("resize: want a multipart/form-data body with file field \"image\": %v", err))
	}
	haveImage := false
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return req, readError("read multipart body", err)
		}
		switch p.FormName() {
		case "width":
			b, err := io.ReadAll(io.LimitReader(p, maxWidthField+1))
			if err != nil {
				return req, readError("read width field", err)
			}
			if len(b) > maxWidthField {
				return req, newError(http.StatusBadRequest, CodeInvalidWidth, "resize: width field is too long")
			}
			wd, aerr := s.parseWidth(string(b))
			if aerr != nil {
				return req, aerr
			}
			req.width, haveWidth = wd, true
		case "image":
			if haveImage {
				return req, newError(http.StatusBadRequest, CodeInvalidRequest, "resize: more than one \"image\" part")
			}
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(p); err != nil {
				return req, readError("read image part", err)
			}
			req.image, haveImage = buf.Bytes(), true
		default:
			if _, err := io.Copy(io.Discard, p); err != nil {
				return req, readError("read multipart body", err)
			}
		}
		_ = p.Close()
	}
	if !haveImage || len(req.image) == 0 {
		return req, newError(http.StatusBadRequest, CodeMissingImage, "resize: no image in file field \"image\"")
	}
	if !haveWidth {
		return req, newError(http.StatusBadRequest, CodeInvalidWidth,
			fmt.Sprintf("resize: width is required (form field or query parameter, 1..%d)", s.cfg.MaxWidth))
	}
	return req, nil
}

func (s *Service) tooLarge() *apiError {
	return newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
		fmt.Sprintf("resize: request body exceeds %d bytes", s.cfg.MaxBodyBytes))
}

// readError classifies a failure to read the request body.
func (s *Service) readError(ctx context.Context, op string, err error) *apiError {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return s.tooLarge()
	case errors.Is(err, errUploadBudget):
		return s.busy(fmt.Sprintf("the request bodies being received fill their %d-byte budget", s.bodyBytes.limit)).unread()
	case errors.Is(err, errUploadTooSlow):
		return newError(http.StatusRequestTimeout, CodeTimeout,
			fmt.Sprintf("resize: %s: upload too slow (at least %d bytes/s after %v, no pause longer than %v)", op, s.cfg.MinUploadRate, s.cfg.UploadGrace, s.cfg.UploadGrace))
	case ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
		return timeoutError(s.cfg.Timeout)
	case errors.Is(err, multipart.ErrMessageTooLarge):
		return newError(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("resize: %s: part headers too large", op))
	default:
		return newError(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("resize: %s: %v", op, err))
	}
}

// parseWidth parses a decimal width in 1..MaxWidth.
func (s *Service) parseWidth(v string) (int, *apiError) {
	v = strings.TrimSpace(v)
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > s.cfg.MaxWidth {
		return 0, newError(http.StatusBadRequest, CodeInvalidWidth,
			fmt.Sprintf("resize: width %q is not an integer in 1..%d", truncate(v, maxWidthField), s.cfg.MaxWidth))
	}
	return n, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
