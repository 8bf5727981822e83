package main

import (
	"context"
	"io"
	"os"

	"github.com/agenthub/agenthub/parser"
)

// runParse implements "agenthub parse [--protocol auto|text|json] [FILE|-]":
// it prints the decision (or the parse error) as one JSON object, exits 0
// for a decision, 1 for a parse error and 2 for bad usage or unreadable
// input.
func runParse(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "parse", "parse [--protocol auto|text|json] [FILE|-]",
		"agenthub parse fixtures/parser/seed-complete-action.txt")
	protocol := fs.String("protocol", "auto", "reply protocol: auto (JSON when the reply starts with '{'), text or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var p parser.Protocol
	switch *protocol {
	case "auto":
		p = parser.Auto
	case "text":
		p = parser.Text
	case "json":
		p = parser.JSON
	default:
		return usageErrorf("parse: unknown --protocol %q: want auto, text or json", *protocol)
	}
	if fs.NArg() > 1 {
		return usageErrorf("parse: want at most one FILE, got %d arguments (run 'agenthub parse -h')", fs.NArg())
	}
	name, r := "standard input", e.stdin
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return usageErrorf("parse: %v", err)
		}
		defer f.Close()
		name, r = fs.Arg(0), f
	}
	reply, err := io.ReadAll(r)
	if err != nil {
		return usageErrorf("parse: read %s: %v", name, err)
	}
	d, perr := parser.Parse(string(reply), parser.WithProtocol(p))
	out, err := parser.Render(d, perr)
	if err != nil {
		return usageErrorf("parse: %v", err)
	}
	if _, err := e.stdout.Write(out); err != nil {
		return usageErrorf("parse: write output: %v", err)
	}
	if perr != nil {
		return errSilentFailure
	}
	return nil
}
