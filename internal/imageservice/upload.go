package imageservice

import (
	"errors"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"
)

// Upload admission. A request body is received under an upload slot and
// only then takes a worker slot, so a slow client holds an upload slot,
// never a worker. A slot whose client has sent little costs a goroutine
// and a few buffers (tens of kilobytes), so there are many of them,
// uploadsPerWorker × MaxConcurrent (128 on 2 CPUs), and a few slow
// clients cannot take them all; each still has to keep up MinUploadRate
// to hold one. What uploads hold in memory is bounded by bytes instead of
// slots: together they may have received uploadBudgetPerWorker ×
// MaxConcurrent × MaxBodyBytes (160 MiB on 2 CPUs), so a client holds the
// memory it has sent, not the MaxBodyBytes it might send. A request beyond
// either limit is answered 503 busy; BenchmarkFastAmongSlow measures it.
const (
	uploadsPerWorker      = 64
	uploadBudgetPerWorker = 4
)

// uploadBudget is the byte budget of the bodies being received for cfg
// (defaults filled in), saturating at math.MaxInt64.
func uploadBudget(cfg Config) int64 {
	n := int64(uploadBudgetPerWorker * cfg.MaxConcurrent)
	if cfg.MaxBodyBytes > math.MaxInt64/n {
		return math.MaxInt64
	}
	return n * cfg.MaxBodyBytes
}

// byteBudget is a count of bytes held against a limit, safe for
// concurrent use.
type byteBudget struct {
	limit int64
	used  atomic.Int64
}

// take charges n bytes and reports true, or charges nothing and reports
// false when that would exceed the limit.
func (b *byteBudget) take(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// give returns n bytes taken before.
func (b *byteBudget) give(n int64) { b.used.Add(-n) }

var (
	// errUploadTooSlow is returned by rateReader for a body below
	// MinUploadRate or silent for UploadGrace.
	errUploadTooSlow = errors.New("upload below the minimum rate")
	// errUploadBudget is returned by rateReader when the bodies being
	// received would hold more than their byte budget.
	errUploadBudget = errors.New("upload over the byte budget")
)

// rateReader is a request body that enforces Config.MinUploadRate and
// Config.UploadGrace, and charges what it receives to the uploads' byte
// budget. After the grace period the average rate must stay above the
// minimum, and the connection's read deadline is kept at most one grace
// period ahead (never past the request's own deadline), so a client that
// stops sending is cut off too. The caller gives charged back to the
// budget when it is done with the body.
type rateReader struct {
	rc       io.ReadCloser
	ctl      *http.ResponseController
	budget   *byteBudget
	start    time.Time
	end      time.Time // the request's deadline
	grace    time.Duration
	minRate  int64
	received int64
	charged  int64     // bytes taken from budget
	last     time.Time // when bytes last arrived
	cause    error     // errUploadTooSlow or errUploadBudget once Read has returned it
}

// newRateReader starts the clock of an upload that must end by end (the
// request's deadline).
func newRateReader(rc io.ReadCloser, ctl *http.ResponseController, cfg Config, budget *byteBudget, end time.Time) *rateReader {
	start := time.Now()
	r := &rateReader{rc: rc, ctl: ctl, budget: budget, start: start, last: start, end: end, grace: cfg.UploadGrace, minRate: cfg.MinUploadRate}
	r.extend(start)
	return r
}

// extend moves the read deadline to one grace period from now, capped by
// the request's deadline. Recorders without a connection ignore it.
func (r *rateReader) extend(now time.Time) {
	d := now.Add(r.grace)
	if d.After(r.end) {
		d = r.end
	}
	_ = r.ctl.SetReadDeadline(d)
}

func (r *rateReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.received += int64(n)
	if !r.budget.take(int64(n)) {
		r.cause = errUploadBudget
		return n, r.cause
	}
	r.charged += int64(n)
	now := time.Now()
	if elapsed := now.Sub(r.start); elapsed > r.grace && float64(r.received) < float64(r.minRate)*elapsed.Seconds() {
		r.cause = errUploadTooSlow
		return n, r.cause
	}
	if err != nil && !errors.Is(err, io.EOF) && now.Before(r.end) && now.Sub(r.last) >= r.grace*9/10 {
		// The idle read deadline set by extend fired (the connection's
		// error text varies; the silence is what counts).
		r.cause = errUploadTooSlow
		return n, r.cause
	}
	if n > 0 {
		r.last = now
	}
	r.extend(now)
	return n, err
}

func (r *rateReader) Close() error { return r.rc.Close() }
