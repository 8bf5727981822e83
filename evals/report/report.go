// Package report owns the result of an eval: Run, the scored result of
// one run, and Report, the runs with the summary computed once from them
// (New) — a group per prompt variant and per tag, with its sums, pass
// rate, pass@k and pass^k. Every renderer (Render: the table, markdown,
// JSON and JUnit) and the baseline diff (Compare, RenderDiff) only format
// those groups; none re-sums. It also owns the JSON format (Report.JSON,
// Load, SchemaVersion) and sharding: the runs a shard holds (InShard) and
// the merge of the shards' reports (Merge).
//
// Runs come from evals.Score; a run's failure paths are named as the
// scenario format names them (scenario.FailurePath).
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals/scenario"
)

// SchemaVersion is the version of the JSON report format.
const SchemaVersion = 1

// Verdict is the judgement of one run.
type Verdict string

// The verdicts. VerdictError never counts as a pass or as a fail.
const (
	VerdictPass  Verdict = "pass"
	VerdictFail  Verdict = "fail"
	VerdictError Verdict = "error"
)

// Check is one expectation of a run.
type Check struct {
	// Name names the expectation ("outcome", "answer.contains",
	// "trajectory", "steps.max", "file out/a.jpg", "failure_path tool_error").
	Name string `json:"name"`
	// OK says whether it held.
	OK bool `json:"ok"`
	// Reason says why it did not hold; empty when OK.
	Reason string `json:"reason,omitempty"`
}

// FailurePathResult is one failure path of a run.
type FailurePathResult struct {
	// Path is the failure path.
	Path scenario.FailurePath `json:"path"`
	// Listed says the scenario expects the path; unlisted paths that
	// occurred are informational.
	Listed bool `json:"listed"`
	// Occurred says the trace shows the path.
	Occurred bool `json:"occurred"`
	// Handled says every occurrence was handled as the agent contract says
	// (see evals.Score).
	Handled bool `json:"handled"`
}

// Tokens is the token usage of a run, from the recorded API usage.
type Tokens struct {
	// Prompt is the number of input tokens.
	Prompt int `json:"prompt"`
	// Completion is the number of generated tokens.
	Completion int `json:"completion"`
	// Reasoning is the part of Completion a reasoning model spent
	// reasoning, and Cached the part of Prompt served from the provider's
	// prompt cache, as the provider reported them (0: not reported).
	Reasoning int `json:"reasoning,omitempty"`
	Cached    int `json:"cached,omitempty"`
}

// Latency is the latency recorded in a run's cassettes.
type Latency struct {
	// Model is the summed model-call latency in milliseconds.
	Model int64 `json:"model"`
	// Tool is the summed tool (image service) latency in milliseconds.
	Tool int64 `json:"tool"`
	// FirstToken is the time to first token of the run's streamed model
	// calls, in milliseconds: the mean over those calls of the recorded
	// arrival of the first event (see replay.InteractionInfo.EventMS),
	// rounded; nil when no model call streamed.
	FirstToken *int64 `json:"first_token,omitempty"`
}

// Run is the scored result of one run.
type Run struct {
	// ID is "<scenario>/<prompt>/<trial>".
	ID string `json:"id"`
	// Scenario is the scenario id.
	Scenario string `json:"scenario"`
	// Prompt is the prompt variant.
	Prompt string `json:"prompt"`
	// Trial is 1-based.
	Trial int `json:"trial"`
	// Tags are the scenario's tags.
	Tags []string `json:"tags,omitempty"`
	// Verdict is pass, fail or error.
	Verdict Verdict `json:"verdict"`
	// Outcome is how the run ended (empty if the agent never ran).
	Outcome agent.Outcome `json:"outcome"`
	// ModelCalls, ToolCalls and ParseErrors count model calls (Result),
	// tool_call events and parse_error events.
	ModelCalls  int `json:"model_calls"`
	ToolCalls   int `json:"tool_calls"`
	ParseErrors int `json:"parse_errors"`
	// ReferenceSteps is expect.steps.reference (0: none).
	ReferenceSteps int `json:"reference_steps,omitempty"`
	// FailurePaths are the listed paths, then the unlisted ones that
	// occurred.
	FailurePaths []FailurePathResult `json:"failure_paths"`
	// Checks are the expectations in scenario order (empty on error).
	Checks []Check `json:"checks"`
	// Tokens is the run's token usage.
	Tokens Tokens `json:"tokens"`
	// RecordedMS is the latency recorded in the cassettes.
	RecordedMS Latency `json:"recorded_ms"`
	// ReplayMS is the replay wall time; it varies between runs and is not
	// compared by baselines.
	ReplayMS int64 `json:"replay_ms"`
	// Error is the harness error of a VerdictError run.
	Error string `json:"error,omitempty"`
	// NotRecorded marks a recorded run (agenthub record) whose recording
	// was refused — not complete and replayable (replay.ErrIncomplete), or
	// holding a secret (replay.ErrSecretLeak): its old recording is
	// unchanged, and Error says why.
	NotRecorded bool `json:"not_recorded,omitempty"`
}

// failurePathCounts returns how many failure paths occurred in the run and
// how many of those were handled.
func (r Run) failurePathCounts() (handled, exercised int) {
	for _, f := range r.FailurePaths {
		if f.Occurred {
			exercised++
			if f.Handled {
				handled++
			}
		}
	}
	return handled, exercised
}

// Report is the canonical result of an eval: runs sorted by id and the
// summary computed from them. Build it with New.
type Report struct {
	// Schema is SchemaVersion.
	Schema int `json:"schema"`
	// Runs are sorted by id.
	Runs []Run `json:"runs"`
	// Summary is computed from Runs.
	Summary Summary `json:"summary"`
	// Shard says which shard of a sharded eval the report holds (nil: the
	// whole selection). Merge uses it to notice a missing shard.
	Shard *ShardInfo `json:"shard,omitempty"`
}

// Summary aggregates every run; ByPrompt and ByTag aggregate subsets.
type Summary struct {
	// Group aggregates every run (its fields are inlined in JSON).
	Group
	// ByPrompt aggregates the runs of each prompt variant.
	ByPrompt map[string]Group `json:"by_prompt"`
	// ByTag aggregates the runs of each scenario tag.
	ByTag map[string]Group `json:"by_tag"`
}

// Group aggregates a set of runs. A "case" is a scenario × prompt pair;
// its trials are the runs of that pair. Ratios are rounded to 4 decimals
// and are null (n/a) when nothing was measured.
type Group struct {
	// Total counts the runs; Pass, Fail and Error count them by verdict.
	Total int `json:"total"`
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Error int `json:"error"`
	// PassRate is pass / (pass + fail).
	PassRate *float64 `json:"pass_rate"`
	// Trials is the most trials any case has.
	Trials int `json:"trials"`
	// Reliability holds pass@k and pass^k for k = 1..Trials when Trials > 1.
	Reliability []KScore `json:"reliability,omitempty"`
	// Flaky lists the cases ("scenario/prompt") with 0 < passes < trials.
	Flaky []string `json:"flaky,omitempty"`
	// ModelCalls are the mean, p50 and p95 model calls of the judged runs.
	ModelCalls Dist `json:"model_calls"`
	// StepEfficiency is SPL, success weighted by path length (Anderson et
	// al., "On Evaluation of Embodied Navigation Agents", 2018), over the
	// judged runs with a reference: the mean of S·l/max(p, l), where S is 1
	// for a pass and 0 for a fail, l the reference steps and p the model
	// calls. It lies in [0, 1]: a failed run counts 0 however few calls it
	// made, a run that beat the reference counts 1.
	StepEfficiency *float64 `json:"step_efficiency"`
	// FailurePathsExercised and FailurePathsHandled sum the failure paths
	// that occurred and that were handled; HandlingRate is their ratio.
	FailurePathsExercised int      `json:"failure_paths_exercised"`
	FailurePathsHandled   int      `json:"failure_paths_handled"`
	HandlingRate          *float64 `json:"handling_rate"`
	// TokensPerRun is the mean prompt + completion tokens of the judged runs.
	TokensPerRun *float64 `json:"tokens_per_run"`
	// Sums are the totals of the run table's columns over every run of the
	// group, errored runs included (what the runs cost). They are not in
	// the JSON: each run there carries its own counts.
	Sums Sums `json:"-"`
}

// Sums are the totals of a group's runs that the table's summary rows
// show.
type Sums struct {
	// ModelCalls, ToolCalls and Tokens (prompt + completion) are summed
	// over the runs.
	ModelCalls, ToolCalls, Tokens int
	// ModelMS and ToolMS sum the recorded latency, in milliseconds.
	ModelMS, ToolMS int64
	// FirstTokenMS sums the runs' Latency.FirstToken over the Streamed runs
	// that have one; FirstToken() is their mean.
	FirstTokenMS int64
	Streamed     int
}

// add counts run r into the sums.
func (s *Sums) add(r Run) {
	s.ModelCalls += r.ModelCalls
	s.ToolCalls += r.ToolCalls
	s.Tokens += r.Tokens.Prompt + r.Tokens.Completion
	s.ModelMS += r.RecordedMS.Model
	s.ToolMS += r.RecordedMS.Tool
	if r.RecordedMS.FirstToken != nil {
		s.FirstTokenMS += *r.RecordedMS.FirstToken
		s.Streamed++
	}
}

// FirstToken is the mean time to first token of the streamed runs, in
// milliseconds, rounded; nil when no run streamed.
func (s Sums) FirstToken() *int64 {
	if s.Streamed == 0 {
		return nil
	}
	ms := (s.FirstTokenMS + int64(s.Streamed)/2) / int64(s.Streamed)
	return &ms
}

// KScore is pass@k and pass^k for one k, with τ-bench's estimator over the
// cases of a group (n judged trials, c passes per case):
// pass^k = mean of C(c,k)/C(n,k); pass@k = mean of 1 - C(n-c,k)/C(n,k).
// Both are null (n/a) when some case has fewer than k judged trials.
type KScore struct {
	// K is the number of trials drawn.
	K int `json:"k"`
	// PassAtK is pass@k: at least one of k trials passes.
	PassAtK *float64 `json:"pass_at_k"`
	// PassHat is pass^k: all k trials pass.
	PassHat *float64 `json:"pass_hat_k"`
}

// Dist is a distribution summary; percentiles use the nearest-rank method.
type Dist struct {
	// Mean is the arithmetic mean.
	Mean *float64 `json:"mean"`
	// P50 and P95 are the median and the 95th percentile.
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
}

// New sorts the runs by id (scenario, prompt, then trial
// numerically) and computes the summary. It does not modify runs.
func New(runs []Run) Report {
	rs := append([]Run(nil), runs...)
	sortRuns(rs)
	s := Summary{Group: aggregate(rs), ByPrompt: map[string]Group{}, ByTag: map[string]Group{}}
	byPrompt, byTag := map[string][]Run{}, map[string][]Run{}
	for _, r := range rs {
		byPrompt[r.Prompt] = append(byPrompt[r.Prompt], r)
		for _, t := range r.Tags {
			byTag[t] = append(byTag[t], r)
		}
	}
	for p, g := range byPrompt {
		s.ByPrompt[p] = aggregate(g)
	}
	for t, g := range byTag {
		s.ByTag[t] = aggregate(g)
	}
	if rs == nil {
		rs = []Run{}
	}
	return Report{Schema: SchemaVersion, Runs: rs, Summary: s}
}

func sortRuns(rs []Run) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Prompt != b.Prompt {
			return a.Prompt < b.Prompt
		}
		if a.Trial != b.Trial {
			return a.Trial < b.Trial
		}
		return a.ID < b.ID
	})
}

func aggregate(rs []Run) Group {
	g := Group{Total: len(rs)}
	type tally struct{ n, c int }
	cases := map[string]*tally{}
	var calls []float64
	var eff, tokens []float64
	for _, r := range rs {
		g.Sums.add(r)
		key := r.Scenario + "/" + r.Prompt
		t := cases[key]
		if t == nil {
			t = &tally{}
			cases[key] = t
		}
		switch r.Verdict {
		case VerdictPass:
			g.Pass++
			t.c++
		case VerdictFail:
			g.Fail++
		default:
			// A run the harness could not judge says nothing about how the
			// agent handled failures either.
			g.Error++
			continue
		}
		h, e := r.failurePathCounts()
		g.FailurePathsHandled += h
		g.FailurePathsExercised += e
		t.n++
		g.Trials = max(g.Trials, t.n)
		calls = append(calls, float64(r.ModelCalls))
		tokens = append(tokens, float64(r.Tokens.Prompt+r.Tokens.Completion))
		if r.ReferenceSteps > 0 {
			eff = append(eff, spl(r))
		}
	}
	g.PassRate = ratio(g.Pass, g.Pass+g.Fail)
	g.HandlingRate = ratio(g.FailurePathsHandled, g.FailurePathsExercised)
	g.ModelCalls = distribution(calls)
	g.StepEfficiency = mean(eff)
	g.TokensPerRun = mean(tokens)
	keys := slices.Sorted(maps.Keys(cases))
	for _, k := range keys {
		if t := cases[k]; t.c > 0 && t.c < t.n {
			g.Flaky = append(g.Flaky, k)
		}
	}
	if g.Trials > 1 {
		ns, cs := make([]int, len(keys)), make([]int, len(keys))
		for i, k := range keys {
			ns[i], cs[i] = cases[k].n, cases[k].c
		}
		for k := 1; k <= g.Trials; k++ {
			ks := KScore{K: k}
			if hat, ok := passHatK(ns, cs, k); ok {
				ks.PassHat = round(hat)
			}
			if at, ok := passAtK(ns, cs, k); ok {
				ks.PassAtK = round(at)
			}
			g.Reliability = append(g.Reliability, ks)
		}
	}
	return g
}

// spl is a judged run's term of StepEfficiency: S·l/max(p, l).
func spl(r Run) float64 {
	if r.Verdict != VerdictPass {
		return 0
	}
	l := float64(r.ReferenceSteps)
	return l / max(float64(r.ModelCalls), l)
}

// passHatK is τ-bench's pass^k: the mean over cases of C(c,k)/C(n,k), the
// chance that k trials drawn without replacement all pass. ns[i] and cs[i]
// are the judged trials and passes of case i. ok is false (n/a) when there
// are no cases, k < 1, or some case has n < k. The arithmetic is exact
// (math/big) up to the final conversion.
func passHatK(ns, cs []int, k int) (float64, bool) {
	return meanOverCases(ns, cs, k, func(n, c int) *big.Rat {
		return new(big.Rat).SetFrac(binomial(c, k), binomial(n, k))
	})
}

// passAtK is pass@k with the same estimator: the mean over cases of
// 1 - C(n-c,k)/C(n,k), the chance that at least one of k trials passes.
// ok is false under the same conditions as passHatK.
func passAtK(ns, cs []int, k int) (float64, bool) {
	return meanOverCases(ns, cs, k, func(n, c int) *big.Rat {
		miss := new(big.Rat).SetFrac(binomial(n-c, k), binomial(n, k))
		return miss.Sub(big.NewRat(1, 1), miss)
	})
}

func meanOverCases(ns, cs []int, k int, f func(n, c int) *big.Rat) (float64, bool) {
	if len(ns) == 0 || len(ns) != len(cs) || k < 1 {
		return 0, false
	}
	sum := new(big.Rat)
	for i := range ns {
		if ns[i] < k || cs[i] < 0 || cs[i] > ns[i] {
			return 0, false
		}
		sum.Add(sum, f(ns[i], cs[i]))
	}
	sum.Quo(sum, big.NewRat(int64(len(ns)), 1))
	v, _ := sum.Float64()
	return v, true
}

// binomial is C(n,k), 0 when k > n.
func binomial(n, k int) *big.Int {
	if k > n || n < 0 {
		return new(big.Int)
	}
	return new(big.Int).Binomial(int64(n), int64(k))
}

func round(v float64) *float64 {
	r := math.Round(v*1e4) / 1e4
	return &r
}

func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	return round(float64(a) / float64(b))
}

func mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return round(s / float64(len(xs)))
}

func distribution(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := func(p float64) *float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return round(s[max(i, 0)])
	}
	return Dist{Mean: mean(s), P50: rank(0.50), P95: rank(0.95)}
}

// JSON returns the canonical JSON of the report: object keys sorted,
// two-space indent, a final newline. A report that parse would
// refuse (a run without an id or with a negative count, …) is an error:
// what is written can be read back.
func (r Report) JSON() ([]byte, error) {
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	// Round-trip through generic values so that every object's keys come
	// out sorted, whatever the struct field order.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return buf.Bytes(), nil
}

// Load reads a JSON report written by Report.JSON. Unknown fields,
// another schema version, duplicate run ids or trailing data are errors
// ("load report FILE: …"). The summary is recomputed from the runs.
func Load(file string) (Report, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Report{}, fmt.Errorf("load report: %w", err)
	}
	r, err := parse(data)
	if err != nil {
		return Report{}, fmt.Errorf("load report %s: %w", file, err)
	}
	return r, nil
}

// parse decodes a JSON report; see Load.
func parse(data []byte) (Report, error) {
	var head struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Report{}, fmt.Errorf("not a JSON report: %w", err)
	}
	if head.Schema == nil {
		return Report{}, fmt.Errorf("not a report: no \"schema\" field")
	}
	if *head.Schema != SchemaVersion {
		return Report{}, fmt.Errorf("schema %d is not supported (want %d)", *head.Schema, SchemaVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return Report{}, fmt.Errorf("decode: %w", err)
	}
	if err := r.validate(); err != nil {
		return Report{}, err
	}
	out := New(r.Runs)
	out.Shard = r.Shard
	return out, nil
}

// validate checks what JSON writes and parse reads: every run has
// an id of its own, a known verdict and no negative count or duration,
// and the shard, if any, is one.
func (r Report) validate() error {
	seen := map[string]bool{}
	for i, run := range r.Runs {
		if run.ID == "" {
			return fmt.Errorf("runs[%d]: missing id", i)
		}
		if seen[run.ID] {
			return fmt.Errorf("duplicate run id %q", run.ID)
		}
		seen[run.ID] = true
		switch run.Verdict {
		case VerdictPass, VerdictFail, VerdictError:
		default:
			return fmt.Errorf("run %s: unknown verdict %q", run.ID, run.Verdict)
		}
		if run.ModelCalls < 0 || run.ToolCalls < 0 || run.ParseErrors < 0 || run.Tokens.Prompt < 0 || run.Tokens.Completion < 0 || run.Tokens.Reasoning < 0 || run.Tokens.Cached < 0 ||
			run.RecordedMS.Model < 0 || run.RecordedMS.Tool < 0 || (run.RecordedMS.FirstToken != nil && *run.RecordedMS.FirstToken < 0) || run.ReplayMS < 0 {
			return fmt.Errorf("run %s: negative count or duration", run.ID)
		}
	}
	if sh := r.Shard; sh != nil && (sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count) {
		return fmt.Errorf("shard %d/%d is not a shard (want 1 ≤ index ≤ count)", sh.Index, sh.Count)
	}
	return nil
}

// Merge combines shard reports into one. A run id present in more than one
// report is an error.
func Merge(reports ...Report) (Report, error) {
	if err := checkShards(reports); err != nil {
		return Report{}, err
	}
	seen := map[string]bool{}
	var runs []Run
	for _, r := range reports {
		for _, run := range r.Runs {
			if seen[run.ID] {
				return Report{}, fmt.Errorf("merge reports: duplicate run id %q", run.ID)
			}
			seen[run.ID] = true
			runs = append(runs, run)
		}
	}
	return New(runs), nil
}

// ShardInfo identifies one shard of a sharded eval: shard Index of Count,
// 1-based.
type ShardInfo struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// checkShards fails when the reports are shards of one eval but not all of
// them, each once: merging a partial set would look like a smaller, green
// suite.
func checkShards(reports []Report) error {
	count := 0
	got := map[int]bool{}
	for i, r := range reports {
		if r.Shard == nil {
			if count > 0 {
				return fmt.Errorf("merge reports: report %d is not a shard but others are", i+1)
			}
			continue
		}
		if count == 0 {
			if i > 0 {
				return fmt.Errorf("merge reports: report %d is a shard but report 1 is not", i+1)
			}
			count = r.Shard.Count
		}
		switch {
		case r.Shard.Count != count:
			return fmt.Errorf("merge reports: report %d is shard %d/%d, the others are of %d", i+1, r.Shard.Index, r.Shard.Count, count)
		case got[r.Shard.Index]:
			return fmt.Errorf("merge reports: shard %d/%d given twice", r.Shard.Index, count)
		}
		got[r.Shard.Index] = true
	}
	var missing []string
	for i := 1; i <= count; i++ {
		if !got[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("merge reports: missing shards %s", strings.Join(missing, ", "))
	}
	return nil
}

// FailedIDs returns the ids of the runs whose verdict is fail or error, in
// report order (for --rerun-failed).
func (r Report) FailedIDs() []string {
	var ids []string
	for _, run := range r.Runs {
		if run.Verdict != VerdictPass {
			ids = append(ids, run.ID)
		}
	}
	return ids
}

// fmtRatio renders an optional ratio with 4 decimals, or "n/a".
func fmtRatio(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}

// fmtNum renders an optional number with 2 decimals, or "n/a".
func fmtNum(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// fmtPercent renders an optional ratio as a percentage with 1 decimal.
func fmtPercent(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strings.TrimSpace(strconv.FormatFloat(*v*100, 'f', 1, 64)) + "%"
}
