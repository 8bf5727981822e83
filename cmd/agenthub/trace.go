package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/agenthub/agenthub/agent"
)

func runTrace(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "trace", "trace report RUN.jsonl", "agenthub run --trace run.jsonl \"…\" && agenthub trace report run.jsonl")
	if len(args) > 0 && args[0] == "report" {
		args = args[1:]
	} else if len(args) == 0 || !isHelpArg(args[0]) {
		return usageErrorf("trace: usage: agenthub trace report RUN.jsonl")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("trace: usage: agenthub trace report RUN.jsonl")
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return usageErrorf("trace: %v", err)
	}
	defer f.Close()
	events, err := agent.ReadTrace(f)
	if err != nil {
		return usageErrorf("trace: %s: %v", fs.Arg(0), err)
	}
	s := agent.SummarizeTrace(events)
	w := e.stdout
	outcome := string(s.Outcome)
	if outcome == "" {
		outcome = "(no done event: the run did not finish)"
	}
	fmt.Fprintf(w, "outcome: %s after %d model calls\n", outcome, s.Steps)
	fmt.Fprintf(w, "model: %d attempts, %d failed, %d ms, tokens %d prompt + %d completion\n", s.ModelAttempts, s.ModelFailures, s.ModelMS, s.PromptTokens, s.CompletionTokens)
	fmt.Fprintf(w, "tools: %d ms (model %d ms); parse errors: %d; recoveries: %d attempted, %d succeeded\n\n", s.ToolMS, s.ModelMS, s.ParseErrors, s.RecoveriesAttempted, s.RecoveriesSucceeded)
	table := newASCIITable(w, []string{"tool", "calls", "failures", "failure rate", "ms"})
	var calls, failures int
	var ms int64
	for _, t := range s.Tools {
		calls += t.Calls
		failures += t.Failures
		ms += t.MS
		_ = table.Append([]string{agent.PrintableLine(t.Name, 100), strconv.Itoa(t.Calls), strconv.Itoa(t.Failures), fmt.Sprintf("%.1f%%", 100*t.FailureRate()), strconv.FormatInt(t.MS, 10)})
	}
	total := agent.ToolStats{Calls: calls, Failures: failures}
	_ = table.Append([]string{"TOTAL", strconv.Itoa(calls), strconv.Itoa(failures), fmt.Sprintf("%.1f%%", 100*total.FailureRate()), strconv.FormatInt(ms, 10)})
	if err := table.Render(); err != nil {
		return err
	}
	if len(s.ErrorCodes) > 0 {
		fmt.Fprintln(w, "\nerror codes:")
		for _, c := range s.ErrorCodes {
			fmt.Fprintf(w, "  %-24s %d\n", agent.PrintableLine(c.Code, 100), c.Count)
		}
	}
	return nil
}

// newASCIITable returns a tablewriter table with plain ASCII borders and
// left-aligned cells, so that output is stable across terminals.
func newASCIITable(w interface{ Write([]byte) (int, error) }, header []string) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
	)
	t.Header(header)
	return t
}
