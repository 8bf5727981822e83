// Package durationflag defines time.Duration flags whose parse error says
// how to fix the value. The flag package's own answer to "--timeout 30" is
// "parse error"; this one's is "missing unit: add one, e.g. 30s".
package durationflag

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// Var defines a duration flag on fs, as fs.DurationVar does: p holds value
// until the flag is set. Write `duration` in usage to keep the
// "-name duration" synopsis of fs.PrintDefaults.
func Var(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*durationValue)(p), name, usage)
}

type durationValue time.Duration

func (d *durationValue) String() string { return (*time.Duration)(d).String() }

func (d *durationValue) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// Parse parses a Go duration (time.ParseDuration). A bare number other than
// 0 is refused with the value to type instead ("missing unit: add one,
// e.g. 30s ..."); anything else that is not a duration is refused with
// examples.
func Parse(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if n := strings.TrimLeft(s, "+-"); n != "" && strings.Trim(n, "0123456789.") == "" {
		return 0, fmt.Errorf("missing unit: add one, e.g. %ss (ns, us, ms, s, m, h)", s)
	}
	return 0, fmt.Errorf("not a duration: want a number and a unit, e.g. 30s, 500ms, 2m, 1h30m")
}
