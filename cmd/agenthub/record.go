package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/evals/replay"
	"github.com/agenthub/agenthub/evals/report"
)

func runRecord(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "record", "record [flags] (--scripted | --base-url URL --model M)",
		"agenthub record --scripted --run '^echo-' --prompt react-text")
	var sel selection
	sel.register(fs)
	scripted := fs.Bool("scripted", false, "answer with each scenario's script from the in-process scripted model")
	baseURL := fs.String("base-url", "", "OpenAI-compatible base URL of a real provider (e.g. https://open.bigmodel.cn/api/paas/v4)")
	model := fs.String("model", "", "model name at the real provider (e.g. glm-4-flash)")
	keyEnv := fs.String("api-key-env", "AGENTHUB_API_KEY", "environment variable holding the provider's API key")
	imageURL := fs.String("image-url", "", "real image service to record against (default: one started in-process on loopback, with the scenario's image_faults)")
	keepFailed := fs.String("keep-failed", "", "save each recording that was not complete into this folder (as <scenario>/<prompt>/<trial>), never over the committed one")
	modeFlag := fs.String("mode", string(replay.ModeRecord), "record (fresh cassettes) or replay-or-record (keep what matches, record what is missing)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("record: unexpected argument %q (run 'agenthub record -h')", fs.Arg(0))
	}
	mode, err := replay.ParseMode(*modeFlag)
	if err != nil || mode == replay.ModeReplay {
		return usageErrorf("record: --mode must be record or replay-or-record, got %q", *modeFlag)
	}
	if e.getenv("CI") != "" {
		return usageErrorf("record: refusing to record with CI set: CI replays only (unset CI to record on your machine)")
	}
	var p evals.Provider
	switch {
	case *scripted && *baseURL != "":
		return usageErrorf("record: --scripted and --base-url exclude each other")
	case *scripted:
		// The scripted model needs no key, but one set in the environment
		// is a secret all the same: the saved cassettes are scanned for it.
		p = evals.Provider{Scripted: true, APIKey: e.getenv(*keyEnv)}
	case *baseURL != "":
		if *model == "" {
			return usageErrorf("record: --base-url needs --model")
		}
		key := e.getenv(*keyEnv)
		if key == "" && !isLocalURL(*baseURL) {
			return usageErrorf("record: no API key: set the environment variable %s (or name another with --api-key-env)", *keyEnv)
		}
		p = evals.Provider{BaseURL: *baseURL, Model: *model, APIKey: key}
	default:
		return usageErrorf("record: say where the model is: --scripted, or --base-url URL --model M")
	}
	suite, runner, filter, err := sel.load("record")
	if err != nil {
		return err
	}
	runner.Record = &evals.RecordConfig{Mode: mode, Provider: p, ImageURL: *imageURL,
		Logger: slog.New(slog.DiscardHandler), KeepFailed: *keepFailed}
	jobs := runner.Plan(suite, filter)
	if len(jobs) == 0 {
		return usageErrorf("record: no scenario run matches the selection")
	}
	rep := runJobs(ctx, e, runner, jobs)
	if err := report.RenderTable(e.stdout, rep); err != nil {
		return err
	}
	s := rep.Summary
	fmt.Fprintf(e.stdout, "recorded %d of %d runs into %s\n", s.Total-s.Error, s.Total, sel.cassettes)
	refused := 0
	for _, r := range rep.Runs {
		if r.NotRecorded {
			refused++
		}
	}
	if refused > 0 && refused == s.Error {
		// Every harness error is a refused recording (the provider or the
		// wire failed, or a secret would be saved): a judged failure (1),
		// not bad input (2). The causes are printed under the table.
		return &exitError{code: exitFailed, msg: fmt.Sprintf("record: %s not recorded: the recording was not complete or not safe to save (their old cassettes are unchanged; the causes are above)", plural(refused, "run was", "runs were"))}
	}
	return verdictError(s.Group, fmt.Sprintf("record: %d recorded runs do not meet their expectations", s.Fail),
		fmt.Sprintf("record: %s not recorded (their old cassettes are unchanged)", plural(s.Error, "run was", "runs were")))
}

// plural renders "1 run was" / "3 runs were".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
