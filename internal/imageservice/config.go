package imageservice

import (
	"runtime"
	"time"
)

// The defaults withDefaults gives the zero fields of Config (documented
// on each field; DefaultConfig returns them all).
const (
	defaultMaxBodyBytes    int64 = 20 << 20 // 20 MiB
	defaultMaxWidth              = 4096
	defaultMaxSourcePixels int64 = 40_000_000
	defaultMaxWorkBytes    int64 = 1 << 30 // 1 GiB
	defaultTimeout               = 30 * time.Second
	defaultRetryAfter            = time.Second
	defaultJPEGQuality           = 90
	defaultVersion               = "dev"
	defaultMinUploadRate   int64 = 1 << 10 // 1 KiB/s
	defaultUploadGrace           = 5 * time.Second
)

// Config holds the service's limits. A zero field takes its default, so
// Config{} is a valid production configuration. New also replaces
// negative values and a JPEGQuality above 100 with the defaults, so check
// values that come from a user first (cmd/imaged refuses them).
type Config struct {
	// MaxBodyBytes is the largest request body in bytes (default 20 MiB).
	// A larger body is answered 413 payload_too_large.
	MaxBodyBytes int64
	// MaxWidth is the largest target width in pixels (default 4096). A
	// width outside 1..MaxWidth is answered 400 invalid_width.
	MaxWidth int
	// MaxSourcePixels is the pixel budget (default 40 000 000): a source
	// whose header claims more than width×height pixels, or a target
	// larger than that, is answered 422 image_too_large before any pixel
	// is decoded.
	MaxSourcePixels int64
	// MaxWorkBytes is the working memory one request may need, estimated
	// from the header before decoding (default 1 GiB): the decoded source
	// (4 bytes a pixel; 8 for a 16-bit PNG with colour or transparency,
	// as image/png decodes it), x/image/draw's scratch buffer (32 bytes per
	// target-width × scaled-source-height pixel) and the target (4 bytes a
	// pixel). A request over it is answered 422 image_too_large. With the
	// defaults it bites only for huge targets (a 4000×10000 scan kept 4000
	// px wide needs about 1.4 GiB; a 6000×6000 photo to 4096 px, 1 GB).
	MaxWorkBytes int64
	// Timeout is the per-request deadline, body read included (default
	// 30 s). A request that runs out of time is answered 503 timeout.
	Timeout time.Duration
	// MaxConcurrent is the number of /resize requests processed at once
	// (default runtime.NumCPU()). A request that arrives while all are
	// busy is answered at once, before its body is read, with 503 busy and
	// a Retry-After header; one whose upload ends while all are busy gets
	// the same answer then; nothing queues. It also sizes the uploads: 64
	// request bodies per worker may be received at once, holding together
	// at most 4 × MaxBodyBytes per worker.
	MaxConcurrent int
	// RetryAfter is the delay advertised with 503 busy, rounded up to
	// whole seconds, at least 1 (default 1 s).
	RetryAfter time.Duration
	// JPEGQuality is the JPEG encoding quality, 1–100 (default 90).
	JPEGQuality int
	// MinUploadRate is the slowest average upload accepted, in bytes per
	// second (default 1 KiB/s), measured once UploadGrace has passed: a
	// slower body (a slowloris) is answered 408 timeout, freeing its
	// upload slot long before Timeout.
	MinUploadRate int64
	// UploadGrace is how long a body may be received before MinUploadRate
	// is enforced, and the longest silence allowed while receiving it
	// (default 5 s).
	UploadGrace time.Duration
	// Version is the version string /healthz reports (default "dev").
	Version string
}

// DefaultConfig returns the configuration New uses for Config{}.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// withDefaults returns c with every zero or invalid field set to its default.
func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = defaultMaxBodyBytes
	}
	if c.MaxWidth <= 0 {
		c.MaxWidth = defaultMaxWidth
	}
	if c.MaxSourcePixels <= 0 {
		c.MaxSourcePixels = defaultMaxSourcePixels
	}
	if c.MaxWorkBytes <= 0 {
		c.MaxWorkBytes = defaultMaxWorkBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = runtime.NumCPU()
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = defaultRetryAfter
	}
	if c.JPEGQuality <= 0 || c.JPEGQuality > 100 {
		c.JPEGQuality = defaultJPEGQuality
	}
	if c.Version == "" {
		c.Version = defaultVersion
	}
	if c.MinUploadRate <= 0 {
		c.MinUploadRate = defaultMinUploadRate
	}
	if c.UploadGrace <= 0 {
		c.UploadGrace = defaultUploadGrace
	}
	return c
}

// retryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1.
func (c Config) retryAfterSeconds() int {
	s := int((c.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}
