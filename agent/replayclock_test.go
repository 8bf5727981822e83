package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/agent/llm"
)

// TestReplayClock: virtual deadlines fire only when AdvanceToDeadline
// reaches them, with context.DeadlineExceeded; a parent's cancellation and
// cancel pass through; time stands still otherwise.
func TestReplayClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := agent.NewReplayClock(start)
	run, cancelRun := c.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelRun()
	tool, cancelTool := c.WithTimeout(run, 30*time.Second)
	defer cancelTool()
	d, ok := tool.Deadline()
	require.True(t, ok)
	require.Equal(t, start.Add(500*time.Millisecond), d, "a child's deadline is the earlier one")
	require.NoError(t, c.Sleep(run, time.Hour), "sleep returns at once")
	require.Equal(t, start, c.Now(), "and time stands still")
	require.NoError(t, run.Err())

	c.AdvanceToDeadline(tool)
	<-run.Done()
	<-tool.Done()
	require.ErrorIs(t, run.Err(), context.DeadlineExceeded)
	require.ErrorIs(t, tool.Err(), context.DeadlineExceeded)
	require.Equal(t, start.Add(500*time.Millisecond), c.Now())

	parent, cancel := context.WithCancel(context.Background())
	child, stop := c.WithTimeout(parent, time.Minute)
	defer stop()
	cancel()
	<-child.Done()
	require.True(t, errors.Is(child.Err(), context.Canceled))
	c.AdvanceToDeadline(context.Background()) // no deadline: nothing moves
	require.Equal(t, start.Add(500*time.Millisecond), c.Now())
}

// TestReplayClockRunDeadline: an agent on a ReplayClock ends with the
// deadline outcome as soon as its clock reaches the run's deadline, not on
// the wall clock.
func TestReplayClockRunDeadline(t *testing.T) {
	c := agent.NewReplayClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	model := &reachingModel{clock: c}
	a, err := agent.New(model, nil, agent.Config{Timeout: time.Hour}, agent.WithClock(c))
	require.NoError(t, err)
	begin := time.Now()
	res, err := a.Run(context.Background(), "wait")
	require.ErrorIs(t, err, agent.ErrDeadline)
	require.Equal(t, agent.OutcomeDeadline, res.Outcome)
	require.Less(t, time.Since(begin), time.Minute, "the hour-long deadline was virtual")
}

// reachingModel stands for a replayed model call cut off by the run's
// deadline: it moves the clock to the deadline and waits for it.
type reachingModel struct{ clock *agent.ReplayClock }

func (m *reachingModel) Chat(ctx context.Context, _ llm.Request) (llm.Reply, error) {
	m.clock.AdvanceToDeadline(ctx)
	<-ctx.Done()
	return llm.Reply{}, ctx.Err()
}
