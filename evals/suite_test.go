package evals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/evals/replay"
	"github.com/agenthub/agenthub/evals/report"
	"github.com/agenthub/agenthub/evals/scenario"
)

// suite loads the bundled suite and a replay runner over its cassettes.
func suite(t testing.TB) ([]*scenario.Scenario, *evals.Runner) {
	t.Helper()
	scenarios, err := scenario.LoadSuite("../fixtures/scenarios", agent.PromptVariants())
	require.NoError(t, err)
	return scenarios, &evals.Runner{Root: "..", CassetteDir: "../cassettes"}
}

// TestBundledSuite replays every recorded run of the bundled suite offline
// and requires it to pass, so `go test ./...` alone guards the recordings.
func TestBundledSuite(t *testing.T) {
	scenarios, r := suite(t)
	jobs := r.Plan(scenarios, evals.Filter{})
	require.NotEmpty(t, jobs)
	for _, j := range jobs {
		t.Run(j.ID(), func(t *testing.T) {
			t.Parallel()
			rep := r.RunJob(context.Background(), j)
			if rep.Verdict != report.VerdictPass {
				var why []string
				for _, c := range rep.Checks {
					if !c.OK {
						why = append(why, c.Name+": "+c.Reason)
					}
				}
				t.Fatalf("verdict %s, outcome %s\nerror: %s\nfailed checks:\n  %s", rep.Verdict, rep.Outcome, rep.Error, strings.Join(why, "\n  "))
			}
		})
	}
}

// inlineScenario is a small scripted scenario used to test the runner in
// record and replay modes without touching the bundled cassettes.
const inlineScenario = `id: inline
description: echo once, then answer
task: echo hi
tools: [echo]
prompts: [react-text]
max_steps: 3
script:
  react-text:
    - reply: |
        Thought: echo it
        Action: echo
        Action Input: hi
    - reply: "Final Answer: hi"
expect:
  outcome: final_answer
  answer: {equals: hi}
`

// recordInline records inlineScenario into a fresh cassette folder and
// returns the scenario and a replay runner over it.
func recordInline(t *testing.T, src string) (*scenario.Scenario, *evals.Runner) {
	t.Helper()
	sc, err := scenario.Parse("inline.yaml", []byte(src), agent.PromptVariants())
	require.NoError(t, err)
	dir := t.TempDir()
	rec := &evals.Runner{Root: dir, CassetteDir: dir, Record: &evals.RecordConfig{Mode: replay.ModeRecord, Provider: evals.Provider{Scripted: true}}}
	runs := rec.Run(context.Background(), rec.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
	require.Len(t, runs, 1)
	require.Equal(t, report.VerdictPass, runs[0].Verdict, "recording: %s", runs[0].Error)
	return sc, &evals.Runner{Root: dir, CassetteDir: dir}
}

func TestRunnerReplaysWhatItRecorded(t *testing.T) {
	sc, r := recordInline(t, inlineScenario)
	runs := r.Run(context.Background(), r.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
	require.Len(t, runs, 1)
	require.Equal(t, report.VerdictPass, runs[0].Verdict, runs[0].Error)
	require.Equal(t, "inline/react-text/1", runs[0].ID)
	require.Equal(t, 2, runs[0].ModelCalls)
}

func TestRunnerHarnessErrors(t *testing.T) {
	tests := []struct {
		name string
		// mutate changes the scenario or the recording before the replay.
		mutate func(t *testing.T, sc *scenario.Scenario, dir string)
		want   []string
		trial  int // replayed trial (default 1)
	}{
		{
			name: "copied trial",
			mutate: func(t *testing.T, sc *scenario.Scenario, dir string) {
				require.NoError(t, os.CopyFS(filepath.Join(dir, "inline/react-text/2"), os.DirFS(filepath.Join(dir, "inline/react-text/1"))))
			},
			trial: 2,
			want:  []string{"says it records inline/react-text/1: a copied or moved recording"},
		},
		{
			name: "decisions missing",
			mutate: func(t *testing.T, sc *scenario.Scenario, dir string) {
				require.NoError(t, os.Remove(filepath.Join(dir, "inline/react-text/1", evals.DecisionsFile)))
			},
			want: []string{"decisions.json", "record it with"},
		},
		{
			name: "stale prompt",
			mutate: func(t *testing.T, sc *scenario.Scenario, dir string) {
				path := filepath.Join(dir, "inline/react-text/1", replay.MetaFile)
				var meta replay.Meta
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(data, &meta))
				meta.PromptHash = strings.Repeat("0", 64)
				data, err = json.Marshal(meta)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, data, 0o644))
			},
			want: []string{"stale cassette: prompt changed", "go run ./cmd/agenthub record --scripted --run '^inline$' --prompt react-text"},
		},
		{
			name: "missing recording",
			mutate: func(t *testing.T, sc *scenario.Scenario, dir string) {
				require.NoError(t, os.RemoveAll(filepath.Join(dir, "inline")))
			},
			want: []string{"no recording in", "record it with: go run ./cmd/agenthub record --scripted"},
		},
		{
			name: "task changed",
			mutate: func(t *testing.T, sc *scenario.Scenario, dir string) {
				sc.Task = "echo ho"
			},
			want: []string{"no recorded interaction matches", "-recorded +live", "echo ho"},
		},
		{
			name: "run stopped early",
			mutate: func(t *testing.T, sc *scenario.Scenario, dir string) {
				sc.MaxSteps = 1
			},
			want: []string{"never played", "1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, r := recordInline(t, inlineScenario)
			tt.mutate(t, sc, r.CassetteDir)
			trial := 1
			if tt.trial != 0 {
				trial = tt.trial
			}
			rep := r.RunJob(context.Background(), evals.Job{Scenario: sc, Prompt: "react-text", Trial: trial})
			require.Equal(t, report.VerdictError, rep.Verdict)
			for _, w := range tt.want {
				require.Contains(t, rep.Error, w)
			}
		})
	}
}

func TestReparseFindsChangedDecisions(t *testing.T) {
	sc, r := recordInline(t, inlineScenario)
	jobs := r.Plan([]*scenario.Scenario{sc}, evals.Filter{})
	res, err := r.Reparse(jobs)
	require.NoError(t, err)
	require.Equal(t, 1, res.Runs)
	require.Equal(t, 2, res.Replies)
	require.Empty(t, res.Changes)

	// Pretend the parser of the recording decided otherwise at step 1.
	path := filepath.Join(r.CassetteDir, "inline/react-text/1", evals.DecisionsFile)
	var recs []evals.RecordedDecision
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &recs))
	recs[0].Decision = json.RawMessage(`{"kind":"action","action":"echo","action_input":"bye"}`)
	data, err = json.Marshal(recs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))

	res, err = r.Reparse(jobs)
	require.NoError(t, err)
	require.Len(t, res.Changes, 1)
	require.Equal(t, 1, res.Changes[0].Step)
	require.Contains(t, res.Changes[0].Before, `"bye"`)
	require.Contains(t, res.Changes[0].After, `"hi"`)
}

func TestPlanFilters(t *testing.T) {
	scenarios, r := suite(t)
	all := r.Plan(scenarios, evals.Filter{})
	text := r.Plan(scenarios, evals.Filter{Prompt: "react-text"})
	require.Less(t, len(text), len(all))
	for _, j := range text {
		require.Equal(t, "react-text", j.Prompt)
	}
	// Shards partition the runs.
	seen := map[string]int{}
	for i := 1; i <= 3; i++ {
		for _, j := range r.Plan(scenarios, evals.Filter{ShardIndex: i, ShardCount: 3}) {
			seen[j.ID()]++
		}
	}
	require.Len(t, seen, len(all))
	for id, n := range seen {
		require.Equal(t, 1, n, id)
	}
}

// BenchmarkEvalSuite replays the bundled suite in process, as `agenthub
// eval` does, at 1×, 10× and 50× its size (copies of every scenario and
// recording under new ids, generated in a temp folder), and reports the
// cost per run: ns/run and B/run should stay flat as the suite grows.
func BenchmarkEvalSuite(b *testing.B) {
	for _, copies := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("x%d", copies), func(b *testing.B) {
			scenarios, r := suite(b)
			if copies > 1 {
				scenarios, r = scaledSuite(b, scenarios, copies)
			}
			jobs := r.Plan(scenarios, evals.Filter{})
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				runs := r.Run(context.Background(), jobs)
				if rep := report.New(runs); rep.Summary.Pass != len(jobs) {
					b.Fatalf("%d of %d runs passed", rep.Summary.Pass, len(jobs))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(jobs)), "ns/run")
			b.ReportMetric(float64(len(jobs)), "runs/op")
		})
	}
}

// scaledSuite copies every scenario n times under the ids <id>-cK, with
// its recordings (meta.json naming the new id), into a temp cassette
// folder; workspaces stay in the repository.
func scaledSuite(b *testing.B, scenarios []*scenario.Scenario, n int) ([]*scenario.Scenario, *evals.Runner) {
	b.Helper()
	dir := b.TempDir()
	var out []*scenario.Scenario
	for k := 1; k <= n; k++ {
		for _, sc := range scenarios {
			cp := *sc
			cp.ID = fmt.Sprintf("%s-c%d", sc.ID, k)
			out = append(out, &cp)
			src := filepath.Join("..", "cassettes", sc.ID)
			dst := filepath.Join(dir, cp.ID)
			require.NoError(b, os.CopyFS(dst, os.DirFS(src)))
			metas, err := filepath.Glob(filepath.Join(dst, "*", "*", replay.MetaFile))
			require.NoError(b, err)
			for _, m := range metas {
				data, err := os.ReadFile(m)
				require.NoError(b, err)
				data = []byte(strings.Replace(string(data), `"scenario": "`+sc.ID+`"`, `"scenario": "`+cp.ID+`"`, 1))
				require.NoError(b, os.WriteFile(m, data, 0o644))
			}
		}
	}
	return out, &evals.Runner{Root: "..", CassetteDir: dir}
}

// TestBundledSuiteCoverage keeps the suite's promises: at least 24
// scenarios, every one recorded for each of its prompt variants, and every
// failure path the suite is meant to show listed by some scenario.
func TestBundledSuiteCoverage(t *testing.T) {
	scenarios, r := suite(t)
	require.GreaterOrEqual(t, len(scenarios), 24)
	listed := map[scenario.FailurePath]bool{}
	for _, sc := range scenarios {
		for _, p := range sc.Expect.FailurePaths {
			listed[p] = true
		}
		for _, prompt := range sc.Prompts {
			_, err := os.Stat(filepath.Join(r.CassetteDir, sc.ID, prompt, "1", "meta.json"))
			require.NoError(t, err, "scenario %s is not recorded for %s", sc.ID, prompt)
		}
	}
	for _, p := range []scenario.FailurePath{
		scenario.PathParseError, scenario.PathToolNotFound, scenario.PathToolError, scenario.PathLLMRetry,
		scenario.PathLLMError, scenario.PathMaxSteps, scenario.PathDeadline, scenario.PathRecovery,
		scenario.PathOutsideWorkspace, scenario.PathInjectionObservation,
	} {
		require.True(t, listed[p], "no scenario exercises %s", p)
	}
}

// TestReparseChecksDecisionsAgainstCassette refuses a decisions file that
// does not hold the replies of its own recording.
func TestReparseChecksDecisionsAgainstCassette(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(recs []evals.RecordedDecision) []evals.RecordedDecision
		want   string
	}{
		{"emptied", func([]evals.RecordedDecision) []evals.RecordedDecision { return []evals.RecordedDecision{} }, "holds 0 replies, the cassette 2"},
		{"step dropped", func(r []evals.RecordedDecision) []evals.RecordedDecision { return r[1:] }, "holds 1 replies, the cassette 2"},
		{"reply edited", func(r []evals.RecordedDecision) []evals.RecordedDecision {
			r[0].Reply = "Final Answer: something else"
			return r
		}, "step 1: the reply differs from the cassette's reply 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, r := recordInline(t, inlineScenario)
			path := filepath.Join(r.CassetteDir, "inline/react-text/1", evals.DecisionsFile)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var recs []evals.RecordedDecision
			require.NoError(t, json.Unmarshal(data, &recs))
			data, err = json.Marshal(tt.mutate(recs))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data, 0o644))
			_, err = r.Reparse(r.Plan([]*scenario.Scenario{sc}, evals.Filter{}))
			require.ErrorContains(t, err, tt.want)
		})
	}
}
