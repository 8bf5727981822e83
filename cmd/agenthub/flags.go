package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// errHelp is returned by parseFlags after printing help for -h.
var errHelp = errors.New("help requested")

// newFlagSet returns a flag set for a subcommand whose -h prints the
// synopsis, every flag with its default, and the example.
func newFlagSet(e *env, name, synopsis, example string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Parse errors come back once, through usageErrorf; -h prints the
	// help below (from parseFlags).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := e.stdout
		fmt.Fprintf(w, "Usage: %s %s\n\n", programName, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "Flags:\n")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
		if example != "" {
			fmt.Fprintf(w, "\nExample:\n  %s\n", example)
		}
	}
	return fs
}

// isHelpArg reports whether a is -h, -help or --help.
func isHelpArg(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// parseFlags parses args; -h prints help and returns errHelp (exit 0); a bad
// flag returns a usage error (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	// The flag package calls Usage on every parse error; only -h shows it.
	help := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = help
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return errHelp
		}
		return usageErrorf("%s: %v (run '%s %s -h')", fs.Name(), err, programName, fs.Name())
	}
	return nil
}

// durationValue is a time.Duration flag whose parse error says how to fix
// the value: the flag package's own says only "parse error".
type durationValue time.Duration

// durationFlag defines a duration flag on fs. Write `duration` in usage
// to keep the flag's "-name duration" synopsis.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = value
	fs.Var((*durationValue)(p), name, usage)
	return p
}

func (d *durationValue) String() string { return (*time.Duration)(d).String() }

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// parseDuration parses a Go duration; a bare number is refused with the
// value to type instead ("30" → "add a unit, e.g. 30s").
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if n := strings.TrimLeft(s, "+-"); n != "" && strings.Trim(n, "0123456789.") == "" {
		return 0, fmt.Errorf("missing unit: add one, e.g. %ss (ns, us, ms, s, m, h)", s)
	}
	return 0, fmt.Errorf("not a duration: want a number and a unit, e.g. 30s, 500ms, 2m, 1h30m")
}
