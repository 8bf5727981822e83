package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/evals/report"
	"github.com/agenthub/agenthub/evals/scenario"
	"github.com/agenthub/agenthub/internal/atomicfile"
)

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
func (s *selection) load(cmd string) ([]*scenario.Scenario, *evals.Runner, evals.Filter, error) {
	var f evals.Filter
	suite, err := scenario.LoadSuite(inRoot(s.root, s.scenarios), agent.PromptVariants())
	if err != nil {
		return nil, nil, f, suiteError(cmd, s.root, s.scenarios, err)
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
		i, n, err := report.ParseShard(s.shard)
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
	r := &evals.Runner{Root: s.root, CassetteDir: inRoot(s.root, s.cassettes), Jobs: s.jobs}
	return suite, r, f, nil
}

// inRoot returns the path of a --scenarios or --cassettes folder: p itself
// when absolute, else p under root.
func inRoot(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// suiteError explains why the scenarios folder (relative to root unless
// absolute) could not be loaded. A folder that does not exist usually means
// the command was run from a sub-folder of the repository: then it names
// the --root that has the folder, found by looking upward from root.
func suiteError(cmd, root, scenarios string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return usageErrorf("%s: invalid scenarios:\n%v", cmd, err)
	}
	if up := findRoot(root, scenarios); up != "" {
		return usageErrorf("%s: %v: run it from the repository root, or pass --root %s (that folder has %s)", cmd, err, up, scenarios)
	}
	return usageErrorf("%s: %v (run it from the repository root, or pass --root)", cmd, err)
}

// findRoot returns the nearest ancestor of root that holds the folder
// scenarios, as a path to pass to --root ("..", "../.."; absolute when
// root is), or "" when there is none or scenarios is absolute.
func findRoot(root, scenarios string) string {
	if filepath.IsAbs(scenarios) {
		return ""
	}
	dir, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	up := root
	for parent := filepath.Dir(dir); parent != dir; dir, parent = parent, filepath.Dir(parent) {
		up = filepath.Join(up, "..")
		if fi, err := os.Stat(filepath.Join(parent, scenarios)); err == nil && fi.IsDir() {
			return up
		}
	}
	return ""
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

// evalFlags are the flags of eval beyond the selection.
type evalFlags struct {
	sel                              selection
	format, out, junit, bless, rerun string
	baseline                         string
	reparse                          bool
}

func (f *evalFlags) register(fs *flag.FlagSet) {
	f.sel.register(fs)
	fs.StringVar(&f.format, "format", "table", "stdout format: table, markdown, json or junit")
	fs.StringVar(&f.out, "out", "", "also write the canonical JSON report to this file (atomically)")
	fs.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to this file (atomically)")
	fs.StringVar(&f.baseline, "baseline", "", "compare with this JSON report; a regression exits 1 (with --run, --prompt, --tags, --shard or --rerun-failed only the selected runs are compared)")
	fs.StringVar(&f.bless, "bless", "", "write this run's JSON report to this file as the new baseline")
	fs.StringVar(&f.rerun, "rerun-failed", "", "only the runs that did not pass in this JSON report")
	fs.BoolVar(&f.reparse, "reparse", false, "re-parse every recorded reply with the current parser and list changed decisions (no agent run)")
}

func runEval(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "eval", "eval [flags]", "agenthub eval --format markdown --out report.json --baseline baseline.json")
	var fl evalFlags
	fl.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("eval: unexpected argument %q (run 'agenthub eval -h')", fs.Arg(0))
	}
	f, err := report.ParseFormat(fl.format)
	if err != nil {
		return usageErrorf("eval: --format: %v", err)
	}
	suite, runner, filter, err := fl.sel.load("eval")
	if err != nil {
		return err
	}
	if fl.rerun != "" {
		if filter.Only, err = rerunSelection(fl.rerun, runner.Plan(suite, evals.Filter{Trials: filter.Trials})); err != nil {
			return err
		}
	}
	base, err := loadBaseline(fl.baseline, filter, fl.sel.filtered(filter))
	if err != nil {
		return err
	}
	jobs := runner.Plan(suite, filter)
	if len(jobs) == 0 {
		return nothingToRun(e, filter, fl.rerun, len(suite), fl.sel.scenarios)
	}
	if fl.reparse {
		return reparseCmd(e, runner, jobs)
	}
	rep := runJobs(ctx, e, runner, jobs)
	if filter.ShardCount > 0 {
		rep.Shard = &report.ShardInfo{Index: filter.ShardIndex, Count: filter.ShardCount}
	}
	if err := report.Render(e.stdout, rep, f); err != nil {
		return err
	}
	if err := fl.writeReports(e, rep); err != nil {
		return err
	}
	regressed := false
	if base != nil {
		if regressed, err = compareBaseline(e, *base, rep, f); err != nil {
			return err
		}
	}
	s := rep.Summary
	if err := verdictError(s.Group, fmt.Sprintf("eval: %d of %d runs failed", s.Fail, s.Total),
		fmt.Sprintf("eval: %d of %d runs could not be judged (verdict error; see the reasons above)", s.Error, s.Total)); err != nil {
		return err
	}
	if regressed {
		return failedErrorf("eval: regression against the baseline %s", fl.baseline)
	}
	return nil
}

// rerunSelection returns the ids of the runs that did not pass in the
// report at path; planned are every run of the suite, so that a failed run
// that no longer exists (a renamed scenario) cannot pass for "nothing to
// rerun".
func rerunSelection(path string, planned []evals.Job) (map[string]bool, error) {
	prev, err := report.Load(path)
	if err != nil {
		return nil, usageErrorf("eval: --rerun-failed: %v", err)
	}
	only := map[string]bool{}
	for _, id := range prev.FailedIDs() {
		only[id] = true
	}
	known := map[string]bool{}
	for _, j := range planned {
		known[j.ID()] = true
	}
	var gone []string
	for id := range only {
		if !known[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		return nil, usageErrorf("eval: --rerun-failed: %d runs that did not pass in %s are not in the suite: %s", len(gone), path, strings.Join(gone, ", "))
	}
	return only, nil
}

// loadBaseline reads the baseline report at path (nil for ""); with a
// selection it keeps only the runs the filter selects, to compare like
// with like: runs the selection leaves out are not missing from this
// result (but a deleted scenario the selection would keep is).
func loadBaseline(path string, filter evals.Filter, filtered bool) (*report.Report, error) {
	if path == "" {
		return nil, nil
	}
	b, err := report.Load(path)
	if err != nil {
		return nil, usageErrorf("eval: --baseline: %v", err)
	}
	if !filtered {
		return &b, nil
	}
	var keep []report.Run
	for _, r := range b.Runs {
		if filter.Selects(r) {
			keep = append(keep, r)
		}
	}
	b = report.New(keep)
	return &b, nil
}

// nothingToRun explains an empty plan: with --rerun-failed it is a success
// (nothing failed, or nothing failed in this selection), otherwise a usage
// error.
func nothingToRun(e *env, filter evals.Filter, rerun string, scenarios int, dir string) error {
	switch {
	case filter.Only == nil:
		return usageErrorf("eval: no scenario run matches the selection (%d scenarios in %s)", scenarios, dir)
	case len(filter.Only) == 0:
		fmt.Fprintf(e.stdout, "nothing to rerun: every run in %s passed\n", rerun)
	default:
		fmt.Fprintf(e.stdout, "nothing to rerun: none of the %d runs that did not pass in %s is in this selection\n", len(filter.Only), rerun)
	}
	return nil
}

// runJobs runs the jobs, with a progress line on a terminal, and returns
// their report.
func runJobs(ctx context.Context, e *env, runner *evals.Runner, jobs []evals.Job) report.Report {
	if e.isTerminal {
		runner.Progress = progressPrinter(e.stderr)
	}
	runs := runner.Run(ctx, jobs)
	if e.isTerminal {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	return report.New(runs)
}

// writeReports writes the --out, --junit and --bless files that are set.
func (f *evalFlags) writeReports(e *env, rep report.Report) error {
	files := []struct {
		flag, path string
		render     func(io.Writer, report.Report) error
	}{
		{"--out", f.out, report.RenderJSON},
		{"--junit", f.junit, report.RenderJUnit},
		{"--bless", f.bless, report.RenderJSON},
	}
	for _, file := range files {
		if file.path == "" {
			continue
		}
		if err := writeReport(file.path, rep, file.render); err != nil {
			return usageErrorf("eval: %s: %v", file.flag, err)
		}
	}
	if f.bless != "" {
		fmt.Fprintf(e.stderr, "%s: wrote baseline %s (%d runs)\n", programName, f.bless, len(rep.Runs))
	}
	return nil
}

// writeReport renders rep into the file at path through the one writer of
// every file a command writes (atomicfile.WriteTarget: a regular file is
// replaced atomically, a FIFO or device is written in place, a symlink is
// followed).
func writeReport(path string, rep report.Report, render func(io.Writer, report.Report) error) error {
	return atomicfile.WriteTarget(path, func(w io.Writer) error { return render(w, rep) })
}

// compareBaseline prints the comparison of rep with base (on stderr when
// stdout is machine-readable) and reports whether rep regressed.
func compareBaseline(e *env, base, rep report.Report, f report.Format) (bool, error) {
	d := report.Compare(base, rep)
	w := e.stdout
	if f == report.FormatJSON || f == report.FormatJUnit {
		w = e.stderr // keep stdout machine-readable
	}
	fmt.Fprintln(w)
	if f == report.FormatMarkdown {
		fmt.Fprint(w, "### Baseline comparison\n\n```text\n")
	}
	if err := report.RenderDiff(w, d); err != nil {
		return false, err
	}
	if f == report.FormatMarkdown {
		fmt.Fprint(w, "```\n")
	}
	return d.Regressed(), nil
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
