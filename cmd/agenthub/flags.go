package main

import (
	"errors"
	"flag"
	"fmt"
)

// errHelp is returned by parseFlags after printing help for -h.
var errHelp = errors.New("help requested")

// newFlagSet returns a flag set for a subcommand whose -h prints the
// synopsis, every flag with its default, and the example.
func newFlagSet(e *env, name, synopsis, example string) *flag.FlagSet {
	fs := flag.NewFlagSet(programName+" "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := e.stdout
		fmt.Fprintf(w, "Usage: %s %s\n\n", programName, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "Flags:\n")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(e.stderr)
		}
		if example != "" {
			fmt.Fprintf(w, "\nExample:\n  %s\n", example)
		}
	}
	return fs
}

// parseFlags parses args; -h prints help and returns errHelp (exit 0); a bad
// flag returns a usage error (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp // the flag package already printed fs.Usage
		}
		return usageErrorf("%s: %v (run '%s -h')", fs.Name(), err, fs.Name())
	}
	return nil
}
