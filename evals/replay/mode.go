package replay

import "fmt"

// Mode says whether a Cassette replays recorded interactions, records new
// ones, or both. The zero value behaves as ModeReplay.
type Mode string

const (
	// ModeReplay serves every request from the cassette and never touches
	// the network; a request without a match is an error wrapping
	// ErrNoMatch, and a missing cassette file is an error. It is the
	// default.
	ModeReplay Mode = "replay"
	// ModeRecord sends every request through the real transport and writes
	// a fresh cassette on Close, replacing (never appending to) the old one.
	ModeRecord Mode = "record"
	// ModeReplayOrRecord replays the interactions that match and records
	// the ones that are missing; on Close the cassette holds exactly the
	// interactions this run used, in the order it used them.
	ModeReplayOrRecord Mode = "replay-or-record"
)

// Modes lists the valid modes, default first.
var Modes = []Mode{ModeReplay, ModeRecord, ModeReplayOrRecord}

// ParseMode parses a mode name as given on a command line: "replay",
// "record" or "replay-or-record". The empty string is ModeReplay. Any other
// string is an error naming the valid modes.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeReplay, nil
	}
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("parse mode: unknown mode %q (want replay, record or replay-or-record)", s)
}

// String returns the mode's name; the zero value prints as "replay".
func (m Mode) String() string {
	if m == "" {
		return string(ModeReplay)
	}
	return string(m)
}

// records reports whether the mode may send requests to the real transport.
func (m Mode) records() bool { return m == ModeRecord || m == ModeReplayOrRecord }
