package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/internal/atomicfile"
)

func init() {
	register(command{name: "eval", summary: "replay the scenario suite offline, score it, print the report (the main job)", run: runEval})
}

// selection holds the flags that pick scenarios and runs, shared by eval,
// record and replay.
type selection struct {
	root, scenarios, cassettes string
	run, prompt, tags, shard   string
	trials, jobs               int
}

func (s *selection) register(fs *flag.FlagSet) {
	fs.StringVar(&s.root, "root", ".", "repository root: scenario workspaces are read from ROOT/testdata/…")
	fs.StringVar(&s.scenarios, "scenarios", "fixtures/scenarios", "folder of scenario files (*.yaml), relative to --root")
	fs.StringVar(&s.cassettes, "cassettes", "cassettes", "folder of recorded runs, relative to --root")
	fs.StringVar(&s.run, "run", "", "only scenarios whose id matches this regular expression")
	fs.StringVar(&s.prompt, "prompt", "", "only this prompt variant ("+strings.Join(agent.PromptVariants(), ", ")+")")
	fs.StringVar(&s.tags, "tags", "", "only scenarios with one of these comma-separated tags")
	fs.StringVar(&s.shard, "shard", "", "only shard i of n, as i/n (1-based; stable hash of the run id)")
	fs.IntVar(&s.trials, "trials", 0, "trials per scenario and prompt (0: every recorded trial; record: 1)")
	fs.IntVar(&s.jobs, "j", 0, "runs at once (0: GOMAXPROCS)")
}

// maxTrials bounds --trials: far more than a pass^k estimate needs, and
// small enough that a typo cannot exhaust memory.
const maxTrials = 1000

// load reads the suite and builds the runner and filter.
func (s *selection) load(cmd string) ([]*evals.Scenario, *evals.Runner, evals.Filter, error) {
	var f evals.Filter
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(s.root, p)
	}
	suite, err := evals.LoadSuite(rel(s.scenarios), agent.PromptVariants())
	if err != nil {
		return nil, nil, f, usageErrorf("%s: invalid scenarios:\n%v", cmd, err)
	}
	if s.run != "" {
		re, err := regexp.Compile(s.run)
		if err != nil {
			return nil, nil, f, usageErrorf("%s: --run: %v", cmd, err)
		}
		f.Run = re
	}
	if s.prompt != "" {
		if !contains(agent.PromptVariants(), s.prompt) {
			return nil, nil, f, usageErrorf("%s: unknown prompt variant %q; valid variants: %s", cmd, s.prompt, strings.Join(agent.PromptVariants(), ", "))
		}
		f.Prompt = s.prompt
	}
	if s.tags != "" {
		for _, t := range strings.Split(s.tags, ",") {
			if t = strings.TrimSpace(t); t != "" {
				f.Tags = append(f.Tags, t)
			}
		}
	}
	if s.shard != "" {
		i, n, err := evals.ParseShard(s.shard)
		if err != nil {
			return nil, nil, f, usageErrorf("%s: --shard: %v", cmd, err)
		}
		f.ShardIndex, f.ShardCount = i, n
	}
	if s.trials < 0 || s.trials > maxTrials {
		return nil, nil, f, usageErrorf("%s: --trials must be between 0 and %d, got %d", cmd, maxTrials, s.trials)
	}
	if s.jobs < 0 {
		return nil, nil, f, usageErrorf("%s: -j must be ≥ 0 (0: GOMAXPROCS), got %d", cmd, s.jobs)
	}
	f.Trials = s.trials
	r := &evals.Runner{Root: s.root, CassetteDir: rel(s.cassettes), Jobs: s.jobs}
	return suite, r, f, nil
}

// filtered reports whether the selection leaves out part of the suite.
func (s *selection) filtered(f evals.Filter) bool {
	return f.Run != nil || f.Prompt != "" || len(f.Tags) > 0 || f.ShardCount > 0 || f.Only != nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func runEval(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "eval", "eval [flags]", "agenthub eval --format markdown --out report.json --baseline baseline.json")
	var sel selection
	sel.register(fs)
	format := fs.String("format", "table", "stdout format: table, markdown, json or junit")
	out := fs.String("out", "", "also write the canonical JSON report to this file (atomically)")
	junit := fs.String("junit", "", "also write a JUnit XML report to this file (atomically)")
	baseline := fs.String("baseline", "", "compare with this JSON report; a regression exits 1 (with --run, --prompt, --tags, --shard or --rerun-failed only the selected runs are compared)")
	bless := fs.String("bless", "", "write this run's JSON report to this file as the new baseline")
	rerun := fs.String("rerun-failed", "", "only the runs that did not pass in this JSON report")
	reparse := fs.Bool("reparse", false, "re-parse every recorded reply with the current parser and list changed decisions (no agent run)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("eval: unexpected argument %q (run 'agenthub eval -h')", fs.Arg(0))
	}
	f, err := evals.ParseFormat(*format)
	if err != nil {
		return usageErrorf("eval: --format: %v", err)
	}
	suite, runner, filter, err := sel.load("eval")
	if err != nil {
		return err
	}
	if *rerun != "" {
		prev, err := evals.LoadReport(*rerun)
		if err != nil {
			return usageErrorf("eval: --rerun-failed: %v", err)
		}
		filter.Only = map[string]bool{}
		for _, id := range prev.FailedIDs() {
			filter.Only[id] = true
		}
		// A failed run that no longer exists (a renamed scenario) must not
		// pass for "nothing to rerun".
		known := map[string]bool{}
		for _, j := range runner.Plan(suite, evals.Filter{Trials: filter.Trials}) {
			known[j.ID()] = true
		}
		var gone []string
		for id := range filter.Only {
			if !known[id] {
				gone = append(gone, id)
			}
		}
		if len(gone) > 0 {
			sort.Strings(gone)
			return usageErrorf("eval: --rerun-failed: %d runs that did not pass in %s are not in the suite: %s", len(gone), *rerun, strings.Join(gone, ", "))
		}
	}
	var base *evals.Report
	if *baseline != "" {
		b, err := evals.LoadReport(*baseline)
		if err != nil {
			return usageErrorf("eval: --baseline: %v", err)
		}
		base = &b
	}
	jobs := runner.Plan(suite, filter)
	if base != nil && sel.filtered(filter) {
		// Compare like with like: runs the selection leaves out are not
		// missing from this result (but a deleted scenario the selection
		// would keep is).
		var keep []evals.RunReport
		for _, r := range base.Runs {
			if filter.Selects(r) {
				keep = append(keep, r)
			}
		}
		b := evals.NewReport(keep)
		base = &b
	}
	if len(jobs) == 0 {
		if filter.Only != nil {
			if len(filter.Only) == 0 {
				fmt.Fprintf(e.stdout, "nothing to rerun: every run in %s passed\n", *rerun)
			} else {
				fmt.Fprintf(e.stdout, "nothing to rerun: none of the %d runs that did not pass in %s is in this selection\n", len(filter.Only), *rerun)
			}
			return nil
		}
		return usageErrorf("eval: no scenario run matches the selection (%d scenarios in %s)", len(suite), sel.scenarios)
	}
	if *reparse {
		return reparseCmd(e, runner, jobs)
	}
	if e.isTerminal {
		runner.Progress = progressPrinter(e.stderr)
	}
	runs := runner.Run(ctx, jobs)
	if e.isTerminal {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	rep := evals.NewReport(runs)
	if filter.ShardCount > 0 {
		rep.Shard = &evals.ShardInfo{Index: filter.ShardIndex, Count: filter.ShardCount}
	}
	if err := evals.Render(e.stdout, rep, f); err != nil {
		return err
	}
	if *out != "" {
		if err := atomicfile.Write(*out, func(w io.Writer) error { return evals.RenderJSON(w, rep) }); err != nil {
			return usageErrorf("eval: --out: %v", err)
		}
	}
	if *junit != "" {
		if err := atomicfile.Write(*junit, func(w io.Writer) error { return evals.RenderJUnit(w, rep) }); err != nil {
			return usageErrorf("eval: --junit: %v", err)
		}
	}
	if *bless != "" {
		if err := atomicfile.Write(*bless, func(w io.Writer) error { return evals.RenderJSON(w, rep) }); err != nil {
			return usageErrorf("eval: --bless: %v", err)
		}
		fmt.Fprintf(e.stderr, "%s: wrote baseline %s (%d runs)\n", programName, *bless, len(rep.Runs))
	}
	regressed := false
	if base != nil {
		d := evals.Compare(*base, rep)
		w := e.stdout
		if f == evals.FormatJSON || f == evals.FormatJUnit {
			w = e.stderr // keep stdout machine-readable
		}
		fmt.Fprintln(w)
		if f == evals.FormatMarkdown {
			fmt.Fprint(w, "### Baseline comparison\n\n```text\n")
		}
		if err := evals.RenderDiff(w, d); err != nil {
			return err
		}
		if f == evals.FormatMarkdown {
			fmt.Fprint(w, "```\n")
		}
		regressed = d.Regressed()
	}
	s := rep.Summary
	switch {
	case s.Error > 0:
		return &exitError{code: exitUsage, msg: fmt.Sprintf("eval: %d of %d runs could not be judged (verdict error; see the reasons above)", s.Error, s.Total)}
	case s.Fail > 0:
		return failedErrorf("eval: %d of %d runs failed", s.Fail, s.Total)
	case regressed:
		return failedErrorf("eval: regression against the baseline %s", *baseline)
	}
	return nil
}

// progressPrinter returns a Progress callback that redraws one status line.
func progressPrinter(w io.Writer) func(done, total, bad int) {
	return func(done, total, bad int) {
		fmt.Fprintf(w, "\r\033[Kruns %d/%d, not passed so far: %d", done, total, bad)
	}
}

func reparseCmd(e *env, runner *evals.Runner, jobs []evals.Job) error {
	res, err := runner.Reparse(jobs)
	for _, c := range res.Changes {
		fmt.Fprintf(e.stdout, "%s step %d:\n  before: %s\n  after:  %s\n", c.RunID, c.Step, c.Before, c.After)
	}
	fmt.Fprintf(e.stdout, "reparse: %d replies in %d recorded runs, %d decisions changed\n", res.Replies, res.Runs, len(res.Changes))
	if err != nil {
		var msgs []string
		for _, u := range unwrapJoined(err) {
			msgs = append(msgs, u.Error())
		}
		return usageErrorf("eval --reparse: %d recorded runs unreadable:\n  %s", len(msgs), strings.Join(msgs, "\n  "))
	}
	if len(res.Changes) > 0 {
		return failedErrorf("eval --reparse: the current parser changes %d recorded decisions", len(res.Changes))
	}
	return nil
}

func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
