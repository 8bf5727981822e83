package main

import (
	"context"
	"fmt"

	"github.com/agenthub/agenthub/evals/report"
)

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
	f, err := report.ParseFormat(*format)
	if err != nil {
		return usageErrorf("report: --format: %v", err)
	}
	var reports []report.Report
	for _, p := range fs.Args() {
		r, err := report.Load(p)
		if err != nil {
			return usageErrorf("report merge: %v", err)
		}
		reports = append(reports, r)
	}
	merged, err := report.Merge(reports...)
	if err != nil {
		return usageErrorf("report merge: %v", err)
	}
	if err := report.Render(e.stdout, merged, f); err != nil {
		return err
	}
	if *out != "" {
		if err := writeReport(*out, merged, report.RenderJSON); err != nil {
			return usageErrorf("report merge: --out: %v", err)
		}
	}
	s := merged.Summary
	return verdictError(s.Group, fmt.Sprintf("report merge: %d of %d runs failed", s.Fail, s.Total),
		fmt.Sprintf("report merge: %d of %d runs could not be judged", s.Error, s.Total))
}
