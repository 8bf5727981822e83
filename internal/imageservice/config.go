package imageservice

import (
	"fmt"
	"runtime"
	"time"
)

// Defaults applied by New to every zero field of Config.
const (
	// DefaultMaxBodyBytes is the default request body limit: 20 MiB.
	DefaultMaxBodyBytes int64 = 20 << 20
	// DefaultMaxWidth is the default largest target width: 4096 pixels.
	DefaultMaxWidth = 4096
	// DefaultMaxSourcePixels is the default pixel budget: 40 megapixels.
	DefaultMaxSourcePixels int64 = 40_000_000
	// DefaultMaxWorkBytes is the default working-memory budget of one
	// request: 1 GiB.
	DefaultMaxWorkBytes int64 = 1 << 30
	// DefaultTimeout is the default per-request deadline: 30 s.
	DefaultTimeout = 30 * time.Second
	// DefaultRetryAfter is the default Retry-After sent with 503 busy: 1 s.
	DefaultRetryAfter = time.Second
	// DefaultJPEGQuality is the default JPEG encoding quality: 90.
	DefaultJPEGQuality = 90
	// DefaultVersion is the version /healthz reports when Config.Version is empty.
	DefaultVersion = "dev"
	// DefaultMinUploadRate is the default slowest average upload: 1 KiB/s.
	DefaultMinUploadRate int64 = 1 << 10
	// DefaultUploadGrace is the default time before MinUploadRate applies: 5 s.
	DefaultUploadGrace = 5 * time.Second
)

// Config holds the service's limits. A zero field takes its default, so
// Config{} is a valid production configuration. Negative values and
// JPEGQuality above 100 are rejected by Validate; New replaces them with
// the defaults too, so call Validate first when the values come from a
// user.
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

// Validate reports the first field that holds an impossible value: a
// negative limit or a JPEGQuality above 100. Zero values are valid (they
// select the defaults).
func (c Config) Validate() error {
	switch {
	case c.MaxBodyBytes < 0:
		return fmt.Errorf("imageservice config: max body bytes %d is negative", c.MaxBodyBytes)
	case c.MaxWidth < 0:
		return fmt.Errorf("imageservice config: max width %d is negative", c.MaxWidth)
	case c.MaxSourcePixels < 0:
		return fmt.Errorf("imageservice config: max source pixels %d is negative", c.MaxSourcePixels)
	case c.MaxWorkBytes < 0:
		return fmt.Errorf("imageservice config: max work bytes %d is negative", c.MaxWorkBytes)
	case c.Timeout < 0:
		return fmt.Errorf("imageservice config: timeout %v is negative", c.Timeout)
	case c.MaxConcurrent < 0:
		return fmt.Errorf("imageservice config: max concurrent %d is negative", c.MaxConcurrent)
	case c.RetryAfter < 0:
		return fmt.Errorf("imageservice config: retry after %v is negative", c.RetryAfter)
	case c.MinUploadRate < 0:
		return fmt.Errorf("imageservice config: min upload rate %d is negative", c.MinUploadRate)
	case c.UploadGrace < 0:
		return fmt.Errorf("imageservice config: upload grace %v is negative", c.UploadGrace)
	case c.JPEGQuality < 0 || c.JPEGQuality > 100:
		return fmt.Errorf("imageservice config: jpeg quality %d is outside 1..100", c.JPEGQuality)
	}
	return nil
}

// withDefaults returns c with every zero or invalid field set to its default.
func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxWidth <= 0 {
		c.MaxWidth = DefaultMaxWidth
	}
	if c.MaxSourcePixels <= 0 {
		c.MaxSourcePixels = DefaultMaxSourcePixels
	}
	if c.MaxWorkBytes <= 0 {
		c.MaxWorkBytes = DefaultMaxWorkBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = runtime.NumCPU()
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.JPEGQuality <= 0 || c.JPEGQuality > 100 {
		c.JPEGQuality = DefaultJPEGQuality
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.MinUploadRate <= 0 {
		c.MinUploadRate = DefaultMinUploadRate
	}
	if c.UploadGrace <= 0 {
		c.UploadGrace = DefaultUploadGrace
	}
	return c
}

// retryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1.
func (c Config) retryAfterSeconds() int {
	s := int((c.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}
