package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/evals/report"
	"github.com/agenthub/agenthub/evals/scenario"
)

func runReplay(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "replay", "replay [flags] cassettes/<scenario>/<prompt>/<trial>",
		"agenthub replay cassettes/scale-window/react-text/1")
	root := fs.String("root", ".", "repository root")
	scenarios := fs.String("scenarios", "fixtures/scenarios", "folder of scenario files, relative to --root")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("replay: want one cassette folder cassettes/<scenario>/<prompt>/<trial> (run 'agenthub replay -h')")
	}
	dir := filepath.Clean(fs.Arg(0))
	parts := strings.Split(filepath.ToSlash(dir), "/")
	if len(parts) < 3 {
		return usageErrorf("replay: %s is not a cassette folder <cassettes>/<scenario>/<prompt>/<trial>", dir)
	}
	id, prompt, trialStr := parts[len(parts)-3], parts[len(parts)-2], parts[len(parts)-1]
	trial, err := strconv.Atoi(trialStr)
	if err != nil || trial < 1 {
		return usageErrorf("replay: %s: the last folder must be a trial number, got %q", dir, trialStr)
	}
	suite, err := scenario.LoadSuite(inRoot(*root, *scenarios), agent.PromptVariants())
	if err != nil {
		return suiteError("replay", *root, *scenarios, err)
	}
	var sc *scenario.Scenario
	for _, s := range suite {
		if s.ID == id {
			sc = s
		}
	}
	if sc == nil {
		return usageErrorf("replay: no scenario %q in %s", id, *scenarios)
	}
	runner := &evals.Runner{Root: *root, CassetteDir: filepath.Dir(filepath.Dir(filepath.Dir(dir))), Jobs: 1,
		Observer: func(string) agent.Observer { return agent.NewConsoleObserver(e.stderr) }}
	run := runner.RunJob(ctx, evals.Job{Scenario: sc, Prompt: prompt, Trial: trial})
	rep := report.New([]report.Run{run})
	if err := report.RenderTable(e.stdout, rep); err != nil {
		return err
	}
	return verdictError(rep.Summary.Group, fmt.Sprintf("replay: %s failed", run.ID), fmt.Sprintf("replay: %s could not be judged", run.ID))
}
