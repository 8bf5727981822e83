package evals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/agent/llm"
	"github.com/agenthub/agenthub/agent/tools"
	"github.com/agenthub/agenthub/evals/replay"
	"github.com/agenthub/agenthub/internal/atomicfile"
	"github.com/agenthub/agenthub/internal/imageservice"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
	"github.com/agenthub/agenthub/internal/version"
	"github.com/agenthub/agenthub/parser"
)

// DecisionsFile is the sidecar, beside a run's cassettes, that holds each
// model reply of the recording and the decision the parser made of it then;
// `agenthub eval --reparse` compares them with the current parser.
const DecisionsFile = "decisions.json"

// replayLLMBase and replayImageBase are the base URLs the clients use in
// replay: the host is never contacted (replay has no network) and never
// matched; only the path is.
const (
	replayLLMHost   = "http://llm.replay.invalid"
	replayImageBase = "http://image.replay.invalid"
)

// Provider says where the model lives when recording.
type Provider struct {
	// Scripted records against the in-process scripted model, answering
	// with each scenario's script for the prompt variant.
	Scripted bool
	// BaseURL, Model and APIKey reach a real OpenAI-compatible provider
	// when Scripted is false.
	BaseURL, Model, APIKey string
}

// Runner runs scenario × prompt variant × trial jobs, each on its own
// cassettes, workspace and agent, in a bounded worker pool.
type Runner struct {
	// Root is the repository root: scenario workspaces are Root/<workspace>.
	Root string
	// CassetteDir holds cassettes/<scenario>/<prompt>/<trial>/ (default
	// Root/cassettes).
	CassetteDir string
	// Mode is the cassette mode (default replay.ModeReplay).
	Mode replay.Mode
	// Jobs is the number of runs at once (default GOMAXPROCS).
	Jobs int
	// Provider is the model to record against (record modes only).
	Provider Provider
	// ImageURL is the real image service to record against; empty: an
	// in-process service on loopback with the scenario's image faults.
	ImageURL string
	// Observer, when set, returns an extra observer for one run (for
	// example a console trace); it is called from the run's goroutine.
	Observer func(runID string) agent.Observer
	// Progress, when set, is called after each run with the number of
	// runs done, the total and the runs that did not pass so far.
	Progress func(done, total, notPassed int)
	// Logger receives the in-process image service's access log (default:
	// discarded).
	Logger *slog.Logger
}

// Job is one run to do.
type Job struct {
	Scenario *Scenario
	Prompt   string
	Trial    int
}

// ID is the run id "<scenario>/<prompt>/<trial>".
func (j Job) ID() string { return RunID(j.Scenario.ID, j.Prompt, j.Trial) }

// Filter selects jobs.
type Filter struct {
	// Run keeps scenarios whose id matches (nil: all).
	Run *regexp.Regexp
	// Prompt keeps one prompt variant ("" all).
	Prompt string
	// Tags keeps scenarios with at least one of these tags (empty: all).
	Tags []string
	// Trials is the number of trials per scenario × prompt: 0 in replay
	// means every recorded trial, in record modes 1.
	Trials int
	// ShardIndex / ShardCount keep the runs of one shard (1-based; 0/0 all).
	ShardIndex, ShardCount int
	// Only keeps the run ids in the set (nil: all); --rerun-failed.
	Only map[string]bool
}

// Plan expands the scenarios into jobs in a stable order (scenario id,
// prompt, trial). In replay mode with Filter.Trials 0, the trials are the
// recorded ones (at least trial 1, which reports a missing cassette).
func (r *Runner) Plan(scenarios []*Scenario, f Filter) []Job {
	var jobs []Job
	for _, sc := range scenarios {
		if !f.selectsScenario(sc.ID, sc.Tags) {
			continue
		}
		for _, p := range sc.Prompts {
			if f.Prompt != "" && p != f.Prompt {
				continue
			}
			trials := f.Trials
			if trials <= 0 {
				trials = 1
				if r.mode() == replay.ModeReplay {
					trials = max(1, len(recordedTrials(r.cassetteDir(), sc.ID, p)))
				}
			}
			for t := 1; t <= trials; t++ {
				j := Job{Scenario: sc, Prompt: p, Trial: t}
				if !f.selectsRun(j.ID()) {
					continue
				}
				jobs = append(jobs, j)
			}
		}
	}
	return jobs
}

func (f Filter) selectsScenario(id string, tags []string) bool {
	if f.Run != nil && !f.Run.MatchString(id) {
		return false
	}
	return len(f.Tags) == 0 || slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(f.Tags, t) })
}

func (f Filter) selectsRun(id string) bool {
	if f.ShardCount > 0 && !InShard(id, f.ShardIndex, f.ShardCount) {
		return false
	}
	return f.Only == nil || f.Only[id]
}

// Selects reports whether the filter keeps a run of a report (by its
// scenario, prompt, tags and id), whether or not the run still exists in
// the suite: a baseline is cut to the same selection as the current eval,
// so that a deleted scenario inside the selection still shows as missing.
func (f Filter) Selects(r RunReport) bool {
	if !f.selectsScenario(r.Scenario, r.Tags) || (f.Prompt != "" && r.Prompt != f.Prompt) {
		return false
	}
	return f.selectsRun(r.ID)
}

// recordedTrials lists the numeric trial folders of a scenario × prompt.
func recordedTrials(dir, scenario, prompt string) []int {
	entries, err := os.ReadDir(filepath.Join(dir, scenario, prompt))
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && n > 0 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

func (r *Runner) mode() replay.Mode {
	if r.Mode == "" {
		return replay.ModeReplay
	}
	return r.Mode
}

func (r *Runner) cassetteDir() string {
	if r.CassetteDir != "" {
		return r.CassetteDir
	}
	return filepath.Join(r.Root, "cassettes")
}

// Run runs the jobs in a pool of Jobs workers and returns one RunReport
// per job, sorted by run id whatever the concurrency.
func (r *Runner) Run(ctx context.Context, jobs []Job) []RunReport {
	n := r.Jobs
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	out := make([]RunReport, len(jobs))
	var (
		mu        sync.Mutex
		done, bad int
		wg        sync.WaitGroup
	)
	next := make(chan int)
	for w := 0; w < min(n, max(len(jobs), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = r.RunJob(ctx, jobs[i])
				mu.Lock()
				done++
				if out[i].Verdict != VerdictPass {
					bad++
				}
				if r.Progress != nil {
					r.Progress(done, len(jobs), bad)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			// Interrupted: the runs not started are harness errors, not
			// started at all.
			out[i] = Score(jobs[i].Scenario, RunInput{Prompt: jobs[i].Prompt, Trial: jobs[i].Trial,
				HarnessErr: fmt.Errorf("run %s: not started: %w", jobs[i].ID(), ctx.Err())})
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RunJob runs one job: it prepares a fresh workspace, opens the run's
// cassettes, runs the agent and scores the result. Harness failures (a
// stale or missing cassette, a replay miss, unused interactions, a failed
// save) give the verdict error.
func (r *Runner) RunJob(ctx context.Context, j Job) RunReport {
	var in RunInput
	ws, err := os.MkdirTemp("", "agenthub-ws-")
	if err == nil {
		// The workspace lives until the run is scored (expect.files).
		defer os.RemoveAll(ws)
		in, err = r.runJob(ctx, j, ws)
	}
	if err != nil {
		in.HarnessErr = err
	}
	in.Prompt, in.Trial = j.Prompt, j.Trial
	return Score(j.Scenario, in)
}

func (r *Runner) runJob(ctx context.Context, j Job, ws string) (in RunInput, err error) {
	sc := j.Scenario
	mode := r.mode()
	dir := replay.Dir(r.cassetteDir(), sc.ID, j.Prompt, j.Trial)
	hint := r.rerecordHint(j)

	if sc.Workspace != "" {
		if err := copyWorkspace(ws, filepath.Join(r.Root, sc.Workspace)); err != nil {
			return in, fmt.Errorf("run %s: %s: workspace %s: %w", j.ID(), sc.File, sc.Workspace, err)
		}
	}
	in.Workspace = ws
	workspace, err := tools.NewWorkspace(ws)
	if err != nil {
		return in, fmt.Errorf("run %s: %w", j.ID(), err)
	}

	// The real services behind the cassettes when recording.
	var (
		llmBase    = replayLLMHost
		model      string
		imageBase  = replayImageBase
		secrets    []string
		llmReal    http.RoundTripper
		imageReal  http.RoundTripper
		providerHP string
	)
	if mode == replay.ModeReplay {
		meta, err := replay.ReadMeta(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return in, fmt.Errorf("run %s: no recording in %s; record it with: %s", j.ID(), dir, hint)
			}
			return in, fmt.Errorf("run %s: %w", j.ID(), err)
		}
		model = meta.Model
		// A recording copied into another folder is not another trial.
		if (meta.Scenario != "" && meta.Scenario != sc.ID) || (meta.Prompt != "" && meta.Prompt != j.Prompt) || (meta.Trial != 0 && meta.Trial != j.Trial) {
			return in, fmt.Errorf("run %s: %s/%s says it records %s/%s/%d: a copied or moved recording; record it with: %s",
				j.ID(), dir, replay.MetaFile, meta.Scenario, meta.Prompt, meta.Trial, hint)
		}
		if _, err := os.Stat(filepath.Join(dir, DecisionsFile)); err != nil {
			return in, fmt.Errorf("run %s: %w (written with the cassettes; record it with: %s)", j.ID(), err, hint)
		}
	} else {
		if r.Provider.Scripted {
			turns, err := scriptFor(sc, j.Prompt)
			if err != nil {
				return in, fmt.Errorf("run %s: %w", j.ID(), err)
			}
			srv := httptest.NewServer(scriptedmodel.New(turns))
			defer srv.Close()
			llmBase, model = srv.URL+"/v1", "scripted"
		} else {
			llmBase, model = r.Provider.BaseURL, r.Provider.Model
			if r.Provider.APIKey != "" {
				secrets = append(secrets, r.Provider.APIKey)
			}
		}
		if u, err := url.Parse(llmBase); err == nil {
			providerHP = u.Host
		}
		// Credentials written into a base URL are secrets too: the saved
		// cassettes are scanned for them.
		for _, base := range []string{llmBase, r.ImageURL} {
			if u, err := url.Parse(base); err == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok && pw != "" {
					secrets = append(secrets, pw)
				}
			}
		}
		llmReal = http.DefaultTransport
		imageReal = http.DefaultTransport
		if r.ImageURL != "" {
			imageBase = r.ImageURL
		} else {
			logger := r.Logger
			if logger == nil {
				logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			}
			srv := httptest.NewServer(imageservice.WithFaults(imageservice.New(imageservice.Config{}, logger), sc.ImageFaults))
			defer srv.Close()
			imageBase = srv.URL
		}
	}

	// A recording is staged in a hidden sibling folder and swapped in
	// whole once everything is written: a crash or a failed run never
	// leaves a folder mixing new cassettes with old metadata.
	final := dir
	if mode != replay.ModeReplay {
		stage, err := stageRecording(final)
		if err != nil {
			return in, fmt.Errorf("run %s: %w", j.ID(), err)
		}
		defer os.RemoveAll(stage) // gone after a successful swap
		dir = stage
	}

	openOpts := []replay.Option{replay.WithSecrets(secrets...), replay.WithRerecordHint(hint)}
	llmCas, err := replay.Open(filepath.Join(dir, replay.LLMCassette), mode, append(openOpts, replay.WithTransport(llmReal))...)
	if err != nil {
		return in, fmt.Errorf("run %s: %w", j.ID(), err)
	}
	defer llmCas.Discard()
	imgCas, err := replay.Open(filepath.Join(dir, replay.ImageCassette), mode, append(openOpts, replay.WithTransport(imageReal))...)
	if err != nil {
		return in, fmt.Errorf("run %s: %w", j.ID(), err)
	}
	defer imgCas.Discard()

	if mode == replay.ModeReplay {
		// The base URL's path must be the recorded one; the host is ignored.
		for _, it := range llmCas.Interactions() {
			llmBase = replayLLMHost + strings.TrimSuffix(it.Path, "/chat/completions")
			break
		}
	}

	var ts []agent.Tool
	for _, name := range sc.Tools {
		switch name {
		case "echo":
			ts = append(ts, &tools.Echo{})
		case "image_scaling":
			ts = append(ts, tools.NewImageScaling(workspace, imageBase, imgCas.Client()))
		default:
			return in, fmt.Errorf("run %s: unknown tool %q", j.ID(), name)
		}
	}
	system, _, err := agent.SystemPrompt(j.Prompt, ts)
	if err != nil {
		return in, fmt.Errorf("run %s: %w", j.ID(), err)
	}
	hash := replay.PromptHash(system, sc.Tools...)
	if mode == replay.ModeReplay {
		if err := replay.CheckPrompt(dir, hash); err != nil {
			return in, fmt.Errorf("run %s: %w; re-record with: %s", j.ID(), err, hint)
		}
	}

	client, err := llm.NewClient(llm.Config{BaseURL: llmBase, APIKey: r.Provider.APIKey, Model: model, HTTPClient: llmCas.Client()})
	if err != nil {
		return in, fmt.Errorf("run %s: %w", j.ID(), err)
	}
	rec := &agent.Recorder{}
	var obs agent.Observer = rec
	if r.Observer != nil {
		obs = agent.MultiObserver(rec, r.Observer(j.ID()))
	}
	var clock agent.Clock = agent.NoSleepClock{}
	if mode != replay.ModeReplay && !r.Provider.Scripted {
		clock = agent.RealClock{}
	}
	a, err := agent.New(client, ts, agent.Config{MaxSteps: sc.MaxSteps, Timeout: sc.Timeout, Prompt: j.Prompt}, agent.WithObserver(obs), agent.WithClock(clock))
	if err != nil {
		return in, fmt.Errorf("run %s: %w", j.ID(), err)
	}
	start := time.Now()
	res, _ := a.Run(ctx, sc.Task)
	in.ReplayMS = time.Since(start).Milliseconds()
	in.Result, in.Events = res, rec.Events()

	if misses := append(llmCas.Misses(), imgCas.Misses()...); len(misses) > 0 {
		return in, fmt.Errorf("run %s: %w", j.ID(), misses[0])
	}
	if ctx.Err() != nil {
		return in, fmt.Errorf("run %s: interrupted: %w", j.ID(), ctx.Err())
	}
	for _, c := range []*replay.Cassette{llmCas, imgCas} {
		if err := c.Close(); err != nil {
			if errors.Is(err, replay.ErrUnusedInteractions) {
				return in, fmt.Errorf("run %s: %w (the run stopped earlier than the recording: re-record with: %s)", j.ID(), err, hint)
			}
			return in, fmt.Errorf("run %s: %w", j.ID(), err)
		}
	}
	in.RecordedModelMS = recordedMS(llmCas)
	in.RecordedToolMS = recordedMS(imgCas)
	if mode != replay.ModeReplay {
		meta := replay.Meta{RecordedAt: time.Now().UTC().Format(time.RFC3339), ProviderHost: providerHP, Model: model,
			Prompt: j.Prompt, PromptHash: hash, AgentHubVersion: version.Version, Scenario: sc.ID, Trial: j.Trial}
		if err := writeDecisions(dir, res); err != nil {
			return in, fmt.Errorf("run %s: %w", j.ID(), err)
		}
		if err := replay.WriteMeta(dir, meta); err != nil {
			return in, fmt.Errorf("run %s: %w", j.ID(), err)
		}
		if err := swapIn(dir, final); err != nil {
			return in, fmt.Errorf("run %s: %w", j.ID(), err)
		}
	}
	return in, nil
}

// stageRecording makes the hidden folder a recording of final is written
// to (".N.tmp-…" beside final, skipped when trials are listed), holding a
// copy of final's files so that replay-or-record can keep what matches.
func stageRecording(final string) (string, error) {
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("stage recording: %w", err)
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(final)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("stage recording: %w", err)
	}
	if fi, err := os.Lstat(final); err == nil {
		if !fi.IsDir() {
			os.RemoveAll(stage)
			return "", fmt.Errorf("stage recording: %s is not a folder", final)
		}
		if err := copyWorkspace(stage, final); err != nil {
			os.RemoveAll(stage)
			return "", fmt.Errorf("stage recording: %w", err)
		}
	}
	return stage, nil
}

// swapIn replaces the folder final with stage: the old folder is moved
// aside, the new one renamed into place, then the old one removed.
func swapIn(stage, final string) error {
	old := ""
	if _, err := os.Lstat(final); err == nil {
		old = stage + ".old"
		if err := os.Rename(final, old); err != nil {
			return fmt.Errorf("save recording: %w", err)
		}
	}
	if err := os.Rename(stage, final); err != nil {
		if old != "" {
			_ = os.Rename(old, final) // put the previous recording back
		}
		return fmt.Errorf("save recording: %w", err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// scriptFor returns the scripted model's turns for a prompt variant: the
// scenario's script for that variant, or else the script of another
// variant that asks for the same reply protocol (a new variant of the text
// protocol replays react-text's replies), so that a new prompt variant can
// be recorded with --scripted before anyone writes replies for it.
func scriptFor(sc *Scenario, prompt string) ([]scriptedmodel.Turn, error) {
	if turns, ok := sc.Script[prompt]; ok {
		return turns, nil
	}
	_, want, err := agent.SystemPrompt(prompt, nil)
	if err != nil {
		return nil, err
	}
	family := func(p parser.Protocol) parser.Protocol {
		if p == parser.JSON {
			return parser.JSON
		}
		return parser.Text // auto and text read the same replies
	}
	var names []string
	for name := range sc.Script {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, p, err := agent.SystemPrompt(name, nil); err == nil && family(p) == family(want) {
			return sc.Script[name], nil
		}
	}
	return nil, fmt.Errorf("scenario %s has no script for prompt %s, nor for another variant of its protocol (%s); add script.%s (needed by --scripted)", sc.File, prompt, want, prompt)
}

// copyWorkspace copies the scenario's workspace folder into dst. Only
// regular files and folders are copied: a symlink (which could point out of
// the repository, and which expect.files would follow) is an error.
func copyWorkspace(dst, src string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", src)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return fmt.Errorf("%s is not a regular file or folder (symlinks and devices are not copied into workspaces)", rel)
	})
}

// recordedMS sums the recorded latency of a cassette's interactions,
// rounded to whole milliseconds.
func recordedMS(c *replay.Cassette) int64 {
	var ms float64
	for _, it := range c.Interactions() {
		ms += it.DurationMS
	}
	return int64(ms + 0.5)
}

// rerecordHint is the command that re-records one job.
func (r *Runner) rerecordHint(j Job) string {
	provider := "--scripted"
	if !r.Provider.Scripted && r.Provider.BaseURL != "" {
		provider = "--base-url " + r.Provider.BaseURL + " --model " + r.Provider.Model
	}
	trials := ""
	if j.Trial > 1 {
		trials = fmt.Sprintf(" --trials %d", j.Trial)
	}
	return fmt.Sprintf("go run ./cmd/agenthub record %s --run '^%s$' --prompt %s%s", provider, regexp.QuoteMeta(j.Scenario.ID), j.Prompt, trials)
}

// RecordedDecision is one model reply of a recording and what the parser
// made of it at record time.
type RecordedDecision struct {
	// Step is the 1-based model call number.
	Step int `json:"step"`
	// Reply is the model's reply text.
	Reply string `json:"reply"`
	// Decision is parser.Render's JSON of the reply at record time.
	Decision json.RawMessage `json:"decision"`
}

// writeDecisions stores the replies of a recorded run and their decisions.
func writeDecisions(dir string, res agent.Result) error {
	var out []RecordedDecision
	for _, s := range res.Steps {
		if s.Decision == nil && s.ParseError == nil {
			continue // the model call failed: no reply
		}
		var perr error
		d := parser.Decision{}
		if s.Decision != nil {
			d = *s.Decision
		} else {
			perr = s.ParseError
		}
		raw, err := parser.Render(d, perr)
		if err != nil {
			return fmt.Errorf("write decisions: step %d: %w", s.Index, err)
		}
		out = append(out, RecordedDecision{Step: s.Index, Reply: s.Reply, Decision: json.RawMessage(raw)})
	}
	return atomicfile.Write(filepath.Join(dir, DecisionsFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if out == nil {
			out = []RecordedDecision{}
		}
		return enc.Encode(out)
	})
}

// ReparseChange is a recorded reply whose decision changed under the
// current parser.
type ReparseChange struct {
	// RunID is "<scenario>/<prompt>/<trial>".
	RunID string `json:"run"`
	// Step is the 1-based model call number.
	Step int `json:"step"`
	// Before and After are the rendered decisions (compact JSON).
	Before string `json:"before"`
	After  string `json:"after"`
}

// ReparseResult is what Reparse found.
type ReparseResult struct {
	// Runs is the number of recorded runs read; Replies the replies
	// re-parsed.
	Runs, Replies int
	// Changes lists every step whose decision changed, in run-id order.
	Changes []ReparseChange
}

// Reparse re-parses every recorded reply of the jobs with the current
// parser and the prompt variant's protocol, and lists each decision that
// changed, without running the agent. A missing or unreadable decisions
// file is an error naming it.
func (r *Runner) Reparse(jobs []Job) (ReparseResult, error) {
	var res ReparseResult
	var errs []error
	for _, j := range jobs {
		path := filepath.Join(replay.Dir(r.cassetteDir(), j.Scenario.ID, j.Prompt, j.Trial), DecisionsFile)
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("reparse %s: %w", j.ID(), err))
			continue
		}
		var recs []RecordedDecision
		if err := json.Unmarshal(data, &recs); err != nil || recs == nil {
			if err == nil {
				err = errors.New("want a list of recorded decisions")
			}
			errs = append(errs, fmt.Errorf("reparse %s: %s: %v", j.ID(), path, err))
			continue
		}
		_, protocol, err := agent.SystemPrompt(j.Prompt, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("reparse %s: %w", j.ID(), err))
			continue
		}
		if err := checkDecisions(filepath.Join(filepath.Dir(path), replay.LLMCassette), recs); err != nil {
			errs = append(errs, fmt.Errorf("reparse %s: %s: %w", j.ID(), path, err))
			continue
		}
		res.Runs++
		for i, rd := range recs {
			if rd.Step < 1 || !json.Valid(rd.Decision) || len(rd.Decision) == 0 || rd.Decision[0] != '{' {
				errs = append(errs, fmt.Errorf("reparse %s: %s: entry %d is not a recorded decision (want {\"step\": N ≥ 1, \"reply\": …, \"decision\": {…}})", j.ID(), path, i))
				continue
			}
			res.Replies++
			d, perr := parser.Parse(rd.Reply, parser.WithProtocol(protocol))
			now, err := parser.Render(d, perr)
			if err != nil {
				errs = append(errs, fmt.Errorf("reparse %s: step %d: %w", j.ID(), rd.Step, err))
				continue
			}
			before, after := compactJSON(rd.Decision), compactJSON(now)
			if before != after {
				res.Changes = append(res.Changes, ReparseChange{RunID: j.ID(), Step: rd.Step, Before: before, After: after})
			}
		}
	}
	return res, errors.Join(errs...)
}

// checkDecisions checks that the recorded decisions hold exactly the model
// replies of the run's llm cassette, in order: a decisions file that was
// edited, emptied or copied from another run would make reparse judge
// replies that were never recorded.
func checkDecisions(cassettePath string, recs []RecordedDecision) error {
	responses, err := replay.Responses(cassettePath)
	if err != nil {
		return err
	}
	var replies []string
	for _, r := range responses {
		if r.Status != 200 {
			continue
		}
		var body struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(r.Body), &body) == nil && len(body.Choices) > 0 {
			replies = append(replies, body.Choices[0].Message.Content)
		}
	}
	if len(replies) != len(recs) {
		return fmt.Errorf("holds %d replies, the cassette %d: it does not belong to this recording (re-record it)", len(recs), len(replies))
	}
	for i, rd := range recs {
		// The client cuts a reply at its stop sequence: the recorded reply
		// is a prefix of what the provider sent.
		if !strings.HasPrefix(strings.TrimSpace(replies[i]), strings.TrimSpace(rd.Reply)) {
			return fmt.Errorf("step %d: the reply differs from the cassette's reply %d: it does not belong to this recording (re-record it)", rd.Step, i+1)
		}
	}
	return nil
}

func compactJSON(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return strings.TrimSpace(string(b))
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(buf.String())
}
