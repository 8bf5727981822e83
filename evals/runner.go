package evals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
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
	"github.com/agenthub/agenthub/evals/report"
	"github.com/agenthub/agenthub/evals/scenario"
	"github.com/agenthub/agenthub/internal/imageservice"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
	"github.com/agenthub/agenthub/internal/secret"
	"github.com/agenthub/agenthub/internal/version"
	"github.com/agenthub/agenthub/parser"
)

// DecisionsFile is the sidecar, beside a run's cassettes, that holds each
// model reply of the recording and the decision the parser made of it then;
// `agenthub eval --reparse` compares them with the current parser. Its
// owner is replay.Recording.
const DecisionsFile = replay.DecisionsFile

// replayLLMHost and replayImageBase are the base URLs the clients use in
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
	// BaseURL and Model reach a real OpenAI-compatible provider when
	// Scripted is false.
	BaseURL, Model string
	// APIKey is the provider's key, sent as a bearer token to a real
	// provider (never to the scripted model). Whenever it is set, scripted
	// or not, every saved cassette is scanned for it.
	APIKey string
}

// RecordConfig makes a Runner record instead of replay.
type RecordConfig struct {
	// Mode is replay.ModeRecord (fresh cassettes, the default) or
	// replay.ModeReplayOrRecord (keep what matches, record what is missing).
	Mode replay.Mode
	// Provider is the model to record against.
	Provider Provider
	// ImageURL is the real image service to record against; empty: an
	// in-process service on loopback with the scenario's image faults.
	ImageURL string
	// Logger receives the in-process image service's access log (default:
	// discarded).
	Logger *slog.Logger
	// KeepFailed, when set, is a folder that receives each recording that
	// was not saved because it was incomplete or not replayable (never one
	// refused for a secret) as
	// KeepFailed/<scenario>/<prompt>/<trial>, for inspection; the committed
	// recording is never touched.
	KeepFailed string
}

// Runner runs scenario × prompt variant × trial jobs, each on its own
// cassettes, workspace and agent, in a bounded worker pool. It replays
// unless Record is set.
type Runner struct {
	// Root is the repository root: scenario workspaces are Root/<workspace>,
	// opened through an *os.Root on Root so that no symlink or ".." leaves it.
	Root string
	// CassetteDir holds <scenario>/<prompt>/<trial>/ (default
	// Root/cassettes); every file below it is reached through an *os.Root on
	// it (see replay.Recording).
	CassetteDir string
	// Jobs is the number of runs at once (default GOMAXPROCS).
	Jobs int
	// Record, when set, records the runs instead of replaying them.
	Record *RecordConfig
	// Observer, when set, returns an extra observer for one run (for
	// example a console trace); it is called from the run's goroutine.
	Observer func(runID string) agent.Observer
	// Progress, when set, is called after each run with the number of
	// runs done, the total and the runs that did not pass so far.
	Progress func(done, total, notPassed int)

	rootOnce  sync.Once
	root      *os.Root // on Root
	cassettes *os.Root // on CassetteDir
	rootErr   error    // opening root
	casErr    error    // opening cassettes
}

// Job is one run to do.
type Job struct {
	Scenario *scenario.Scenario
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
func (r *Runner) Plan(scenarios []*scenario.Scenario, f Filter) []Job {
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
					trials = max(1, len(r.recordedTrials(sc.ID, p)))
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
	if f.ShardCount > 0 && !report.InShard(id, f.ShardIndex, f.ShardCount) {
		return false
	}
	return f.Only == nil || f.Only[id]
}

// Selects reports whether the filter keeps a run of a report (by its
// scenario, prompt, tags and id), whether or not the run still exists in
// the suite: a baseline is cut to the same selection as the current eval,
// so that a deleted scenario inside the selection still shows as missing.
func (f Filter) Selects(r report.Run) bool {
	if !f.selectsScenario(r.Scenario, r.Tags) || (f.Prompt != "" && r.Prompt != f.Prompt) {
		return false
	}
	return f.selectsRun(r.ID)
}

// recordedTrials lists the numeric trial folders of a scenario × prompt,
// read through the cassette folder's *os.Root.
func (r *Runner) recordedTrials(scenario, prompt string) []int {
	_, cassettes, err := r.roots()
	if err != nil {
		return nil
	}
	f, err := cassettes.Open(path.Join(scenario, prompt))
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
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
	switch {
	case r.Record == nil:
		return replay.ModeReplay
	case r.Record.Mode == "":
		return replay.ModeRecord
	}
	return r.Record.Mode
}

func (r *Runner) cassetteDir() string {
	if r.CassetteDir != "" {
		return r.CassetteDir
	}
	return filepath.Join(r.Root, "cassettes")
}

// roots opens, once, the *os.Root on Root and the one on the cassette
// folder: inside Root the cassette folder is opened through Root's, so a
// symlink there cannot lead out of the repository; a cassette folder given
// outside Root (a bench folder elsewhere) is its own root. Recording
// creates a missing cassette folder.
func (r *Runner) roots() (*os.Root, *os.Root, error) {
	r.rootOnce.Do(func() {
		root := r.Root
		if root == "" {
			root = "."
		}
		if r.root, r.rootErr = os.OpenRoot(root); r.rootErr != nil {
			r.rootErr = fmt.Errorf("open repository root: %w", r.rootErr)
			return
		}
		dir := r.cassetteDir()
		rel, err := filepath.Rel(root, dir)
		inside := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		if r.mode() != replay.ModeReplay {
			if inside {
				err = r.root.MkdirAll(rel, 0o755)
			} else {
				err = os.MkdirAll(dir, 0o755)
			}
			if err != nil {
				r.casErr = fmt.Errorf("create cassette folder %s: %w", dir, err)
				return
			}
		}
		if inside {
			r.cassettes, err = r.root.OpenRoot(rel)
		} else {
			r.cassettes, err = os.OpenRoot(dir)
		}
		if err != nil {
			r.casErr = fmt.Errorf("open cassette folder %s: %w", dir, err)
		}
	})
	if r.rootErr != nil {
		return nil, nil, r.rootErr
	}
	return r.root, r.cassettes, r.casErr
}

// Run runs the jobs in a pool of Jobs workers and returns one report.Run
// per job, sorted by run id whatever the concurrency.
func (r *Runner) Run(ctx context.Context, jobs []Job) []report.Run {
	n := r.Jobs
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	out := make([]report.Run, len(jobs))
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
				if out[i].Verdict != report.VerdictPass {
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

// RunJob runs one job — plan, services (replay or record, chosen once),
// agent, score — and returns its report. Harness failures (a stale or
// missing cassette, a replay miss, unused interactions, a recording that is
// not complete) give the verdict error; a recording refused as incomplete
// is also marked report.Run.NotRecorded.
func (r *Runner) RunJob(ctx context.Context, j Job) report.Run {
	var in RunInput
	ws, err := os.MkdirTemp("", "agenthub-ws-")
	if err == nil {
		// The workspace lives until the run is scored (expect.files).
		defer os.RemoveAll(ws)
		if r.mode() == replay.ModeReplay {
			in, err = r.replayJob(ctx, j, ws)
		} else {
			in, err = r.recordJob(ctx, j, ws)
		}
	}
	if err != nil {
		in.HarnessErr = fmt.Errorf("run %s: %w", j.ID(), err)
	}
	in.Prompt, in.Trial = j.Prompt, j.Trial
	rep := Score(j.Scenario, in)
	rep.NotRecorded = errors.Is(in.HarnessErr, replay.ErrIncomplete) || errors.Is(in.HarnessErr, replay.ErrSecretLeak)
	return rep
}

// services is what one run talks to: the recording its HTTP goes through,
// where the model and the image service are, and the clock.
type services struct {
	rec       *replay.Recording
	llmBase   string
	model     string
	apiKey    string
	imageBase string
	clock     agent.Clock
}

func (r *Runner) id(j Job) replay.RunID {
	return replay.RunID{Scenario: j.Scenario.ID, Prompt: j.Prompt, Trial: j.Trial}
}

// replayJob replays one run from its recording.
func (r *Runner) replayJob(ctx context.Context, j Job, ws string) (RunInput, error) {
	_, cassettes, err := r.roots()
	if err != nil {
		return RunInput{}, err
	}
	clock := newReplayClock()
	rec, err := replay.OpenRecording(cassettes, r.id(j), replay.ModeReplay, replay.WithRerecordHint(r.rerecordHint(j)),
		replay.WithDeadlineClock(clock.AdvanceToDeadline))
	if err != nil {
		return RunInput{}, fmt.Errorf("%w; record it with: %s", err, r.rerecordHint(j))
	}
	defer rec.Discard()
	return r.replay(ctx, j, ws, rec, clock)
}

// newReplayClock is the virtual clock of one replayed run (see
// agent.ReplayClock); its start is fixed, so replays do not depend on the
// day.
func newReplayClock() *agent.ReplayClock {
	return agent.NewReplayClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// replay runs the agent on a recording opened in ModeReplay with clock's
// deadline hook, and closes it.
func (r *Runner) replay(ctx context.Context, j Job, ws string, rec *replay.Recording, clock *agent.ReplayClock) (RunInput, error) {
	svc := services{rec: rec, llmBase: replayLLMHost + rec.BasePath(), model: rec.Meta().Model,
		imageBase: replayImageBase, clock: clock}
	in, _, err := r.runAgent(ctx, j, ws, svc, rec)
	if err != nil {
		return in, err
	}
	if err := rec.Close(replay.Meta{}, nil); err != nil {
		if errors.Is(err, replay.ErrUnusedInteractions) {
			return in, fmt.Errorf("%w (the run stopped earlier than the recording: re-record with: %s)", err, r.rerecordHint(j))
		}
		return in, err
	}
	in.RecordedModelMS, in.RecordedToolMS = recordedMS(rec.LLM()), recordedMS(rec.Image())
	in.RecordedFirstTokenMS = recordedFirstToken(rec.LLM())
	return in, nil
}

// recordJob records one run live, checks that the recording is complete,
// replays it from its stage, and only then commits it.
func (r *Runner) recordJob(ctx context.Context, j Job, ws string) (RunInput, error) {
	cfg := r.Record
	_, cassettes, err := r.roots()
	if err != nil {
		return RunInput{}, err
	}
	svc := services{apiKey: cfg.Provider.APIKey, clock: agent.RealClock{}}
	stop, err := r.startServices(j, &svc)
	if err != nil {
		return RunInput{}, err
	}
	defer stop()
	rec, err := replay.OpenRecording(cassettes, r.id(j), r.mode(), r.recordOptions(svc.llmBase)...)
	if err != nil {
		return RunInput{}, err
	}
	defer rec.Discard()
	svc.rec = rec
	in, hash, err := r.runAgent(ctx, j, ws, svc, nil)
	if err != nil {
		return in, err
	}
	if ctx.Err() != nil {
		return in, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	decisions, err := decisionsJSON(in.Result)
	if err != nil {
		return in, err
	}
	err = rec.Close(r.meta(j, svc, hash), decisions)
	if err == nil && !cfg.Provider.Scripted {
		err = providerFailure(in.Result)
	}
	if err == nil {
		err = r.verify(ctx, j, rec, in)
	}
	if err == nil {
		err = rec.Commit()
	}
	if err != nil && errors.Is(err, replay.ErrIncomplete) && cfg.KeepFailed != "" {
		if kept, kerr := rec.Keep(cfg.KeepFailed); kerr == nil {
			err = fmt.Errorf("%w (kept for inspection in %s)", err, kept)
		} else {
			err = fmt.Errorf("%w (not kept: %v)", err, kerr)
		}
	}
	in.RecordedModelMS, in.RecordedToolMS = recordedMS(rec.LLM()), recordedMS(rec.Image())
	in.RecordedFirstTokenMS = recordedFirstToken(rec.LLM())
	return in, err
}

// providerFailure refuses a live recording in which the provider gave no
// model call a reply (every call ended in an API error, a rate limit or an
// undecodable body after its retries): that records an outage or a wrong
// base URL, not the model, and must not replace a committed recording. A
// scripted recording may fail on purpose (the error-path scenarios), so
// the rule is for real providers only.
func providerFailure(res agent.Result) error {
	for _, s := range res.Steps {
		if s.Decision != nil || s.ParseError != nil {
			return nil
		}
	}
	why := "the run made no model call"
	if res.Err != nil {
		why = res.Err.Error()
	}
	return fmt.Errorf("%w: the provider answered no model call with a reply (%s)", replay.ErrIncomplete, why)
}

// startServices starts what a recording talks to: the scripted model or
// the provider, and the in-process image service or the real one.
func (r *Runner) startServices(j Job, svc *services) (stop func(), err error) {
	cfg := r.Record
	var closers []func()
	stop = func() {
		for _, c := range closers {
			c()
		}
	}
	svc.llmBase, svc.model = cfg.Provider.BaseURL, cfg.Provider.Model
	if cfg.Provider.Scripted {
		turns, err := scriptFor(j.Scenario, j.Prompt)
		if err != nil {
			return stop, err
		}
		srv := httptest.NewServer(scriptedmodel.New(turns))
		closers = append(closers, srv.Close)
		// The scripted model is never sent the key (cassettes must not
		// depend on the environment); it is still scanned for.
		svc.llmBase, svc.model, svc.clock, svc.apiKey = srv.URL+"/v1", "scripted", agent.NoSleepClock{}, ""
	}
	svc.imageBase = cfg.ImageURL
	if svc.imageBase == "" {
		logger := cfg.Logger
		if logger == nil {
			logger = slog.New(slog.DiscardHandler)
		}
		srv := httptest.NewServer(imageservice.WithFaults(imageservice.New(imageservice.Config{}, logger), j.Scenario.ImageFaults))
		closers = append(closers, srv.Close)
		svc.imageBase = srv.URL
	}
	return stop, nil
}

// recordOptions are the cassette options of a recording: the secrets to
// scan for (the key, passwords in base URLs), the hint, the wire caps.
func (r *Runner) recordOptions(llmBase string) []replay.Option {
	cfg := r.Record
	var secrets []string
	if cfg.Provider.APIKey != "" {
		secrets = append(secrets, cfg.Provider.APIKey)
	}
	for _, base := range []string{llmBase, cfg.ImageURL} {
		if pw := secret.URLPassword(base); pw != "" {
			secrets = append(secrets, pw)
		}
	}
	return []replay.Option{replay.WithSecrets(secrets...), replay.WithTransport(http.DefaultTransport),
		replay.WithMaxResponseBytes(tools.MaxResponseBytes), replay.WithModelMaxResponseBytes(llm.MaxResponseBytes)}
}

// meta is the meta.json of a recorded run.
func (r *Runner) meta(j Job, svc services, hash string) replay.Meta {
	m := replay.Meta{RecordedAt: time.Now().UTC().Format(time.RFC3339), Model: svc.model, Prompt: j.Prompt,
		PromptHash: hash, AgentHubVersion: version.Version, Scenario: j.Scenario.ID, Trial: j.Trial}
	if u, err := url.Parse(svc.llmBase); err == nil {
		m.ProviderHost, m.ProviderBasePath = u.Host, strings.TrimSuffix(u.EscapedPath(), "/")
	}
	return m
}

// verify replays a staged recording in a fresh workspace: it must replay
// without a miss or an unused interaction and end as the live run did.
func (r *Runner) verify(ctx context.Context, j Job, rec *replay.Recording, live RunInput) error {
	clock := newReplayClock()
	v, err := rec.Verify(replay.WithRerecordHint(r.rerecordHint(j)), replay.WithDeadlineClock(clock.AdvanceToDeadline))
	if err != nil {
		return err
	}
	defer v.Discard()
	ws, err := os.MkdirTemp("", "agenthub-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	got, err := r.replay(ctx, j, ws, v, clock)
	if err == nil && (got.Result.Outcome != live.Result.Outcome || len(got.Result.Steps) != len(live.Result.Steps)) {
		err = fmt.Errorf("it replays to %s after %d model calls, the live run ended %s after %d",
			got.Result.Outcome, len(got.Result.Steps), live.Result.Outcome, len(live.Result.Steps))
	}
	if err != nil {
		return fmt.Errorf("%w: the recording does not replay: %w", replay.ErrIncomplete, err)
	}
	return nil
}

// runAgent copies the scenario's workspace, builds the tools, the prompt,
// the model client and the agent on svc, and runs the task. When replaying
// (recorded set), the rendered prompt must be the one recorded.
func (r *Runner) runAgent(ctx context.Context, j Job, ws string, svc services, recorded *replay.Recording) (in RunInput, hash string, err error) {
	sc := j.Scenario
	in.Workspace = ws
	if err := r.copyWorkspace(sc, ws); err != nil {
		return in, "", err
	}
	workspace, err := tools.NewWorkspace(ws)
	if err != nil {
		return in, hash, err
	}
	defer workspace.Close()
	ts, err := tools.Build(sc.Tools, tools.Deps{Workspace: workspace, ImageBaseURL: svc.imageBase, ImageClient: svc.rec.Image().Client()})
	if err != nil {
		return in, hash, err
	}
	system, _, err := agent.SystemPrompt(j.Prompt, ts)
	if err != nil {
		return in, hash, err
	}
	hash = replay.PromptHash(system, sc.Tools...)
	if recorded != nil {
		if err := recorded.CheckPrompt(hash); err != nil {
			return in, hash, fmt.Errorf("%w; re-record with: %s", err, r.rerecordHint(j))
		}
	}
	client, err := llm.NewClient(llm.Config{BaseURL: svc.llmBase, APIKey: svc.apiKey, Model: svc.model, Stream: sc.Stream, HTTPClient: svc.rec.LLM().Client()})
	if err != nil {
		return in, hash, err
	}
	rec := &agent.Recorder{}
	var obs agent.Observer = rec
	if r.Observer != nil {
		obs = agent.MultiObserver(rec, r.Observer(j.ID()))
	}
	a, err := agent.New(client, ts, agent.Config{MaxSteps: sc.MaxSteps, Timeout: sc.Timeout, Prompt: j.Prompt}, agent.WithObserver(obs), agent.WithClock(svc.clock))
	if err != nil {
		return in, hash, err
	}
	start := time.Now()
	in.Result, _ = a.Run(ctx, sc.Task)
	in.ReplayMS = time.Since(start).Milliseconds()
	in.Events = rec.Events()
	if misses := append(svc.rec.LLM().Misses(), svc.rec.Image().Misses()...); len(misses) > 0 {
		return in, hash, misses[0]
	}
	if ctx.Err() != nil {
		return in, hash, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return in, hash, nil
}

// scriptFor returns the scripted model's turns for a prompt variant: the
// scenario's script for that variant, or else the script of another
// variant that asks for the same reply protocol (a new variant of the text
// protocol replays react-text's replies), so that a new prompt variant can
// be recorded with --scripted before anyone writes replies for it.
func scriptFor(sc *scenario.Scenario, prompt string) ([]scriptedmodel.Turn, error) {
	if turns, ok := sc.Script[prompt]; ok {
		return turns, nil
	}
	want, err := agent.PromptProtocol(prompt)
	if err != nil {
		return nil, err
	}
	family := func(p parser.Protocol) parser.Protocol {
		if p == parser.Auto {
			return parser.Text // auto and text read the same replies
		}
		return p
	}
	var names []string
	for name := range sc.Script {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if p, err := agent.PromptProtocol(name); err == nil && family(p) == family(want) {
			return sc.Script[name], nil
		}
	}
	return nil, fmt.Errorf("scenario %s has no script for prompt %s, nor for another variant of its protocol (%s); add script.%s (needed by --scripted)", sc.File, prompt, want, prompt)
}

// copyWorkspace copies the scenario's workspace folder (relative to
// Root, read through the *os.Root on Root) into dst. Only regular files and
// folders are copied: a symlink (which could point out of the repository,
// and which expect.files would follow) is an error, and no path component
// can leave Root.
func (r *Runner) copyWorkspace(sc *scenario.Scenario, dst string) error {
	if sc.Workspace == "" {
		return nil
	}
	root, _, _ := r.roots()
	if root == nil {
		_, _, err := r.roots()
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("%s: workspace %s: %w", sc.File, sc.Workspace, err)
	}
	ws, err := root.OpenRoot(filepath.ToSlash(filepath.Clean(sc.Workspace)))
	if err != nil {
		return fail(err)
	}
	defer ws.Close()
	err = fs.WalkDir(ws.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(path))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := ws.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return fmt.Errorf("%s is not a regular file or folder (symlinks and devices are not copied into workspaces)", path)
	})
	if err != nil {
		return fail(err)
	}
	return nil
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

// recordedFirstToken is the mean recorded time to first token of a
// cassette's streamed interactions (the first event's arrival), rounded
// to whole milliseconds; nil when none streamed.
func recordedFirstToken(c *replay.Cassette) *int64 {
	var sum, n int64
	for _, it := range c.Interactions() {
		if len(it.EventMS) > 0 {
			sum += it.EventMS[0]
			n++
		}
	}
	if n == 0 {
		return nil
	}
	ms := (sum + n/2) / n
	return &ms
}

// rerecordHint is the command that re-records one job.
func (r *Runner) rerecordHint(j Job) string {
	provider := "--scripted"
	if r.Record != nil && !r.Record.Provider.Scripted && r.Record.Provider.BaseURL != "" {
		provider = "--base-url " + r.Record.Provider.BaseURL + " --model " + r.Record.Provider.Model
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

// decisionsJSON renders the replies of a recorded run and their
// decisions as decisions.json.
func decisionsJSON(res agent.Result) ([]byte, error) {
	out := []RecordedDecision{}
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
			return nil, fmt.Errorf("write decisions: step %d: %w", s.Index, err)
		}
		out = append(out, RecordedDecision{Step: s.Index, Reply: s.Reply, Decision: json.RawMessage(raw)})
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("write decisions: %w", err)
	}
	return []byte(buf.String()), nil
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
		if err := r.reparse(j, &res); err != nil {
			errs = append(errs, fmt.Errorf("reparse %s: %w", j.ID(), err))
		}
	}
	return res, errors.Join(errs...)
}

// reparse re-parses the recorded replies of one run into res.
func (r *Runner) reparse(j Job, res *ReparseResult) error {
	_, cassettes, err := r.roots()
	if err != nil {
		return err
	}
	rec, err := replay.OpenRecording(cassettes, r.id(j), replay.ModeReplay)
	if err != nil {
		return err
	}
	defer rec.Discard()
	path := filepath.Join(rec.Dir(), DecisionsFile)
	data, err := rec.Decisions()
	if err != nil {
		return err
	}
	var recs []RecordedDecision
	if err := json.Unmarshal(data, &recs); err != nil || recs == nil {
		if err == nil {
			err = errors.New("want a list of recorded decisions")
		}
		return fmt.Errorf("%s: %v", path, err)
	}
	protocol, err := agent.PromptProtocol(j.Prompt)
	if err != nil {
		return err
	}
	replies, err := checkDecisions(rec.LLM().Responses(), recs)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	res.Runs++
	var errs []error
	for i, rd := range recs {
		if rd.Step < 1 || !json.Valid(rd.Decision) || len(rd.Decision) == 0 || rd.Decision[0] != '{' {
			errs = append(errs, fmt.Errorf("%s: entry %d is not a recorded decision (want {\"step\": N ≥ 1, \"reply\": …, \"decision\": {…}})", path, i))
			continue
		}
		res.Replies++
		d, perr := decide(protocol, rd.Step, rd.Reply, replies[i])
		now, err := parser.Render(d, perr)
		if err != nil {
			errs = append(errs, fmt.Errorf("step %d: %w", rd.Step, err))
			continue
		}
		before, after := compactJSON(rd.Decision), compactJSON(now)
		if before != after {
			res.Changes = append(res.Changes, ReparseChange{RunID: j.ID(), Step: rd.Step, Before: before, After: after})
		}
	}
	return errors.Join(errs...)
}

// decide is the parser's decision on one recorded reply under a prompt
// protocol: the text (Parse), or for the tools protocol the reply's
// content and native tool calls (DecideCalls).
func decide(protocol parser.Protocol, step int, text string, reply llm.Reply) (parser.Decision, error) {
	if protocol != parser.Tools {
		return parser.Parse(text, parser.WithProtocol(protocol))
	}
	calls := make([]parser.Call, len(reply.ToolCalls))
	for i, c := range reply.ToolCalls {
		calls[i] = parser.Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
		if calls[i].ID == "" {
			calls[i].ID = agent.CallID(step, i) // as the agent named it
		}
	}
	return parser.DecideCalls(reply.Content, calls)
}

// checkDecisions checks that the recorded decisions hold exactly the model
// replies of the run's llm cassette, in order, as the model client decodes
// them, and returns those replies: a decisions file that was edited,
// emptied or copied from another run would make reparse judge replies that
// were never recorded.
func checkDecisions(responses []replay.RecordedResponse, recs []RecordedDecision) ([]llm.Reply, error) {
	var replies []llm.Reply
	for _, r := range responses {
		if reply, err := llm.DecodeBody(r.Status, []byte(r.Body)); err == nil {
			replies = append(replies, reply)
		}
	}
	if len(replies) != len(recs) {
		return nil, fmt.Errorf("holds %d replies, the cassette %d: it does not belong to this recording (re-record it)", len(recs), len(replies))
	}
	for i, rd := range recs {
		// The client cuts a reply at its stop sequence: the recorded reply
		// is a prefix of what the provider sent.
		if !strings.HasPrefix(strings.TrimSpace(replies[i].Content), strings.TrimSpace(rd.Reply)) {
			return nil, fmt.Errorf("step %d: the reply differs from the cassette's reply %d: it does not belong to this recording (re-record it)", rd.Step, i+1)
		}
	}
	return replies, nil
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
