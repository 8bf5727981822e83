// Command imaged serves the image-resize HTTP service of package
// internal/imageservice: POST /resize and GET /healthz.
//
// Usage:
//
//	imaged [flags]
//
// It listens on loopback (127.0.0.1:8080) unless told otherwise, logs one
// line per request to stderr, and on SIGINT or SIGTERM stops accepting
// connections and lets in-flight requests finish (up to -drain-timeout).
// Run "imaged -h" for every flag and its default.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/agenthub/agenthub/internal/durationflag"
	"github.com/agenthub/agenthub/internal/imageservice"

	agenthubversion "github.com/agenthub/agenthub/internal/version"
)

// version is reported by /healthz: the agenthub release this tree builds.
var version = agenthubversion.Version

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError marks a bad command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

// exitCode prints err (if any) and maps it to the exit status.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, "imaged:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "imaged:", err)
		return exitError
	}
}

// options are the parsed flags.
type options struct {
	addr         string
	drainTimeout time.Duration
	logJSON      bool
	cfg          imageservice.Config
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("imaged", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: imaged [flags]

Serve POST /resize (multipart: file field "image", field "width") and
GET /healthz.

Example:
  imaged --addr 127.0.0.1:8080 &
  curl -F image=@x.jpg -F width=256 http://127.0.0.1:8080/resize -o out.jpg

Flags:
`)
		fs.PrintDefaults()
	}
	d := imageservice.DefaultConfig()
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on (loopback by default; \":8080\" listens on every interface)")
	fs.Int64Var(&o.cfg.MaxBodyBytes, "max-body-bytes", d.MaxBodyBytes, "largest request body in `bytes` (larger: 413 payload_too_large)")
	fs.IntVar(&o.cfg.MaxWidth, "max-width", d.MaxWidth, "largest target width in `pixels` (outside 1..N: 400 invalid_width)")
	fs.Int64Var(&o.cfg.MaxSourcePixels, "max-pixels", d.MaxSourcePixels, "pixel budget for source and target, width×height, checked before decoding (larger: 422 image_too_large)")
	fs.Int64Var(&o.cfg.MaxWorkBytes, "max-work-bytes", d.MaxWorkBytes, "working memory one request may need, estimated before decoding, in `bytes` (larger: 422 image_too_large)")
	durationflag.Var(fs, &o.cfg.Timeout, "timeout", d.Timeout, "per-request deadline, body read included (exceeded: 503 timeout)")
	fs.IntVar(&o.cfg.MaxConcurrent, "max-concurrent", runtime.NumCPU(), "resize requests processed at once; more are answered 503 busy with Retry-After")
	durationflag.Var(fs, &o.cfg.RetryAfter, "retry-after", d.RetryAfter, "Retry-After advertised with 503 busy (rounded up to whole seconds)")
	fs.IntVar(&o.cfg.JPEGQuality, "jpeg-quality", d.JPEGQuality, "JPEG encoding `quality`, 1-100")
	fs.Int64Var(&o.cfg.MinUploadRate, "min-upload-rate", d.MinUploadRate, "slowest average upload accepted after -upload-grace, in `bytes` per second (slower: 408 timeout)")
	durationflag.Var(fs, &o.cfg.UploadGrace, "upload-grace", d.UploadGrace, "time before -min-upload-rate applies, and the longest pause allowed in an upload (resizing is bounded by -timeout alone)")
	durationflag.Var(fs, &o.drainTimeout, "drain-timeout", 35*time.Second, "on SIGINT/SIGTERM, how long in-flight requests may take to finish")
	fs.BoolVar(&o.logJSON, "log-json", false, "write the access log as JSON lines instead of text")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err}
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	o.cfg.Version = version
	if err := validate(o); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// validate rejects values the service would silently replace by defaults.
func validate(o options) error {
	c := o.cfg
	switch {
	case c.MaxBodyBytes < 1:
		return fmt.Errorf("-max-body-bytes %d: must be at least 1", c.MaxBodyBytes)
	case c.MaxWidth < 1:
		return fmt.Errorf("-max-width %d: must be at least 1", c.MaxWidth)
	case c.MaxSourcePixels < 1:
		return fmt.Errorf("-max-pixels %d: must be at least 1", c.MaxSourcePixels)
	case c.MaxWorkBytes < 1:
		return fmt.Errorf("-max-work-bytes %d: must be at least 1", c.MaxWorkBytes)
	case c.Timeout <= 0:
		return fmt.Errorf("-timeout %v: must be positive", c.Timeout)
	case c.MaxConcurrent < 1:
		return fmt.Errorf("-max-concurrent %d: must be at least 1", c.MaxConcurrent)
	case c.RetryAfter <= 0:
		return fmt.Errorf("-retry-after %v: must be positive", c.RetryAfter)
	case c.JPEGQuality < 1 || c.JPEGQuality > 100:
		return fmt.Errorf("-jpeg-quality %d: must be in 1..100", c.JPEGQuality)
	case c.MinUploadRate < 1:
		return fmt.Errorf("-min-upload-rate %d: must be at least 1", c.MinUploadRate)
	case c.UploadGrace <= 0:
		return fmt.Errorf("-upload-grace %v: must be positive", c.UploadGrace)
	case o.drainTimeout <= 0:
		return fmt.Errorf("-drain-timeout %v: must be positive", o.drainTimeout)
	}
	return nil
}

// run parses args, listens and serves until ctx is done, then drains.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if o.logJSON {
		h = slog.NewJSONHandler(stderr, nil)
	}
	logger := slog.New(h)
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	svc := imageservice.New(o.cfg, logger)
	c := svc.Config()
	logger.Info("imaged listening", slog.String("url", "http://"+ln.Addr().String()),
		slog.Int64("max_body_bytes", c.MaxBodyBytes), slog.Int("max_width", c.MaxWidth),
		slog.Int64("max_pixels", c.MaxSourcePixels), slog.Int64("max_work_bytes", c.MaxWorkBytes), slog.Duration("timeout", c.Timeout),
		slog.Int("max_concurrent", c.MaxConcurrent), slog.String("version", c.Version))
	srv := newServer(svc, o.cfg.Timeout, logger)
	return serve(ctx, srv, ln, o.drainTimeout, logger)
}

// newServer wraps h with connection-level timeouts that leave room for
// the service's own per-request deadline.
func newServer(h http.Handler, requestTimeout time.Duration, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      requestTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// serve runs srv on ln until ctx is done, then shuts down gracefully:
// it stops accepting, waits up to drain for in-flight requests, and
// returns nil if they all finished.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, drain time.Duration, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("imaged shutting down; draining in-flight requests", slog.Duration("drain_timeout", drain))
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		<-errc
		return fmt.Errorf("shutdown: in-flight requests did not finish within %v: %w", drain, err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("imaged stopped")
	return nil
}
