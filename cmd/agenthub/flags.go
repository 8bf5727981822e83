package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
		fmt.Fprintf(w, "Usage: %s %s\n", programName, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nFlags:\n")
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
