package main

import (
	"context"
	"io"

	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/internal/atomicfile"
)

func init() {
	register(command{name: "report", summary: "merge shard reports: agenthub report merge A.json B.json…", run: runReport})
}

func runReport(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "report", "report merge [flags] A.json B.json…",
		"agenthub report merge --out report.json shard-1.json shard-2.json")
	format := fs.String("format", "table", "stdout format: table, markdown, json or junit")
	out := fs.String("out", "", "also write the merged JSON report to this file (atomically)")
	if len(args) > 0 && args[0] == "merge" {
		args = args[1:]
	} else if len(args) == 0 || !isHelpArg(args[0]) {
		return usageErrorf("report: usage: agenthub report merge A.json B.json… (run 'agenthub report -h')")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return usageErrorf("report merge: want the reports to merge (run 'agenthub report -h')")
	}
	f, err := evals.ParseFormat(*format)
	if err != nil {
		return usageErrorf("report: --format: %v", err)
	}
	var reports []evals.Report
	for _, p := range fs.Args() {
		r, err := evals.LoadReport(p)
		if err != nil {
			return usageErrorf("report merge: %v", err)
		}
		reports = append(reports, r)
	}
	merged, err := evals.Merge(reports...)
	if err != nil {
		return usageErrorf("report merge: %v", err)
	}
	if err := evals.Render(e.stdout, merged, f); err != nil {
		return err
	}
	if *out != "" {
		if err := atomicfile.Write(*out, func(w io.Writer) error { return evals.RenderJSON(w, merged) }); err != nil {
			return usageErrorf("report merge: --out: %v", err)
		}
	}
	s := merged.Summary
	switch {
	case s.Error > 0:
		return &exitError{code: exitUsage, msg: "report merge: some runs could not be judged"}
	case s.Fail > 0:
		return failedErrorf("report merge: %d of %d runs failed", s.Fail, s.Total)
	}
	return nil
}
