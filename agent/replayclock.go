package agent

import (
	"context"
	"sync"
	"time"
)

// TimeoutClock is an optional capability of a Clock: it makes the run's
// deadline and the tool timeouts, instead of the wall clock
// (context.WithTimeout). The agent uses it when its Clock has it.
type TimeoutClock interface {
	WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc)
}

// ReplayClock is the clock of a replayed run: time stands still, Sleep
// returns at once (as NoSleepClock: the recording holds no real waits for
// retries), and the deadlines it makes (the run's deadline, tool timeouts)
// are virtual — they fire only when AdvanceToDeadline reaches them, which
// the replaying transport calls when the recording says a request was cut
// off by its deadline. So a recorded deadline fires at exactly the
// recorded request, without waiting for real time, and a run that was not
// cut off is never cut off in replay. It is safe for concurrent use.
type ReplayClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*virtualDeadline
}

var (
	_ Clock        = (*ReplayClock)(nil)
	_ TimeoutClock = (*ReplayClock)(nil)
)

// NewReplayClock returns a replay clock standing at start.
func NewReplayClock(start time.Time) *ReplayClock { return &ReplayClock{now: start} }

// Now returns the clock's time; it moves only by AdvanceToDeadline.
func (c *ReplayClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep returns at once, with ctx.Err() when ctx is done.
func (c *ReplayClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// WithTimeout returns a child of parent whose deadline is d after the
// clock's now, on the clock: it is done when parent is, when cancel is
// called, or when AdvanceToDeadline passes the deadline (then its Err is
// context.DeadlineExceeded).
func (c *ReplayClock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c.mu.Lock()
	v := &virtualDeadline{Context: parent, deadline: c.now.Add(d), done: make(chan struct{})}
	c.timers = append(c.timers, v)
	c.mu.Unlock()
	stop := context.AfterFunc(parent, func() { v.fire(parent.Err()) })
	return v, func() {
		stop()
		v.fire(context.Canceled)
	}
}

// AdvanceToDeadline moves the clock to the deadline ctx carries (the
// earliest of its virtual deadlines), firing every virtual deadline it
// reaches. A ctx without a deadline, or one already passed, changes
// nothing.
func (c *ReplayClock) AdvanceToDeadline(ctx context.Context) {
	d, ok := ctx.Deadline()
	if !ok {
		return
	}
	c.mu.Lock()
	if d.After(c.now) {
		c.now = d
	}
	var due []*virtualDeadline
	kept := c.timers[:0]
	for _, v := range c.timers {
		if !v.deadline.After(c.now) {
			due = append(due, v)
		} else {
			kept = append(kept, v)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, v := range due {
		v.fire(context.DeadlineExceeded)
	}
}

// virtualDeadline is a context whose deadline is on a ReplayClock.
type virtualDeadline struct {
	context.Context // the parent, for Value
	deadline        time.Time
	once            sync.Once
	mu              sync.Mutex
	err             error
	done            chan struct{}
}

func (v *virtualDeadline) fire(err error) {
	v.once.Do(func() {
		v.mu.Lock()
		v.err = err
		v.mu.Unlock()
		close(v.done)
	})
}

// Deadline is the virtual deadline, or the parent's when that is earlier.
func (v *virtualDeadline) Deadline() (time.Time, bool) {
	if pd, ok := v.Context.Deadline(); ok && pd.Before(v.deadline) {
		return pd, true
	}
	return v.deadline, true
}

// Done is closed when the context ends.
func (v *virtualDeadline) Done() <-chan struct{} { return v.done }

// Err is nil until the context ends, then why it ended.
func (v *virtualDeadline) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}
