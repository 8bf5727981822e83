package durationflag

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParse: a bare number is refused with the value to type.
func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "1m30s", want: 90 * time.Second},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "0", want: 0},
		{in: "30", wantErr: "missing unit: add one, e.g. 30s (ns, us, ms, s, m, h)"},
		{in: "1.5", wantErr: "missing unit: add one, e.g. 1.5s (ns, us, ms, s, m, h)"},
		{in: "-5", wantErr: "missing unit: add one, e.g. -5s (ns, us, ms, s, m, h)"},
		{in: "30 s", wantErr: "not a duration: want a number and a unit, e.g. 30s, 500ms, 2m, 1h30m"},
		{in: "soon", wantErr: "not a duration: want a number and a unit, e.g. 30s, 500ms, 2m, 1h30m"},
		{in: "", wantErr: "not a duration: want a number and a unit, e.g. 30s, 500ms, 2m, 1h30m"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestVar: the flag keeps its default until set, its parse error says to
// add a unit, and its help reads as a duration flag's.
func TestVar(t *testing.T) {
	newSet := func() (*flag.FlagSet, *time.Duration, *strings.Builder) {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		var out strings.Builder
		fs.SetOutput(&out)
		var d time.Duration
		Var(fs, &d, "timeout", time.Minute, "deadline of the run, a `duration`")
		return fs, &d, &out
	}

	fs, d, _ := newSet()
	require.NoError(t, fs.Parse(nil))
	require.Equal(t, time.Minute, *d)
	require.NoError(t, fs.Parse([]string{"--timeout", "90s"}))
	require.Equal(t, 90*time.Second, *d)

	fs, _, _ = newSet()
	fs.Usage = func() {}
	err := fs.Parse([]string{"--timeout", "30"})
	require.EqualError(t, err, `invalid value "30" for flag -timeout: missing unit: add one, e.g. 30s (ns, us, ms, s, m, h)`)

	fs, _, out := newSet()
	fs.PrintDefaults()
	require.Equal(t, "  -timeout duration\n    \tdeadline of the run, a duration (default 1m0s)\n", out.String())
	fs.SetOutput(io.Discard)
}
