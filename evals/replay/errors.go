package replay

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNoMatch is wrapped by the error a replaying transport returns for
	// a request that no unplayed interaction matches. The concrete error is
	// a *MissError.
	ErrNoMatch = errors.New("no recorded interaction matches")
	// ErrUnusedInteractions is wrapped by the error Close returns in
	// ModeReplay when some recorded interactions were never played (the run
	// stopped early or took another path). The concrete error is an
	// *UnusedError.
	ErrUnusedInteractions = errors.New("recorded interactions never played")
	// ErrIncomplete is wrapped by the error that refuses to save a
	// recording that is not complete and replayable (see Recording.Close):
	// a live request went unrecorded, a response was cut short or over the
	// size cap, the provider could not be reached. The old recording is
	// left as it was.
	ErrIncomplete = errors.New("recording incomplete")
	// ErrClosed is returned by a round trip through a closed Cassette.
	ErrClosed = errors.New("cassette closed")
)

// MissError is the replay miss: a request that no unplayed interaction of
// the cassette matches. It wraps ErrNoMatch.
type MissError struct {
	// Cassette is the path of the cassette file.
	Cassette string
	// Method and Path are the live request's method and escaped URL path.
	Method, Path string
	// Nearest is the index of the unplayed interaction with the same method
	// and path whose canonical form is closest to the live request's, or -1
	// when there is none.
	Nearest int
	// Diff is the cmp.Diff of the canonical forms of interaction Nearest
	// (-recorded) and the live request (+live); empty when Nearest is -1.
	Diff string
	// Played counts the interactions with the same method and path that
	// were already played.
	Played int
	// Hint is the command that re-records the cassette; empty when unknown.
	Hint string
}

// Error renders the miss on several lines: what missed and where, the
// nearest interaction and the diff, and how to re-record.
func (e *MissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replay %s %s: %v in %s", e.Method, e.Path, ErrNoMatch, e.Cassette)
	switch {
	case e.Nearest >= 0:
		fmt.Fprintf(&b, "\nnearest unplayed interaction: #%d (%s %s); what changed (-recorded +live):\n%s", e.Nearest, e.Method, e.Path, strings.TrimRight(e.Diff, "\n"))
	case e.Played > 0:
		fmt.Fprintf(&b, "\nall %d recorded %s %s interactions were already played: the run made more calls than the recording", e.Played, e.Method, e.Path)
	default:
		fmt.Fprintf(&b, "\nthe cassette has no %s %s interaction", e.Method, e.Path)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "\nre-record with: %s", e.Hint)
	} else {
		b.WriteString("\nre-record the cassette in record mode")
	}
	return b.String()
}

// Unwrap returns ErrNoMatch.
func (e *MissError) Unwrap() error { return ErrNoMatch }

// UnusedError lists the interactions a replay never played. It wraps
// ErrUnusedInteractions.
type UnusedError struct {
	// Cassette is the path of the cassette file.
	Cassette string
	// Unused are the interactions never played, in cassette order.
	Unused []InteractionInfo
	// Total is the number of interactions in the cassette.
	Total int
}

// Indices returns the cassette indices of the unused interactions.
func (e *UnusedError) Indices() []int {
	idx := make([]int, len(e.Unused))
	for i, u := range e.Unused {
		idx[i] = u.Index
	}
	return idx
}

// Error names the cassette and every unused interaction.
func (e *UnusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "close cassette %s: %d of %d %v:", e.Cassette, len(e.Unused), e.Total, ErrUnusedInteractions)
	for _, u := range e.Unused {
		fmt.Fprintf(&b, " #%d (%s %s)", u.Index, u.Method, u.Path)
	}
	return b.String()
}

// Unwrap returns ErrUnusedInteractions.
func (e *UnusedError) Unwrap() error { return ErrUnusedInteractions }
