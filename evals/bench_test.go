package evals

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals/scenario"
)

// BenchmarkScore scores a run of scenario/testdata/full.yaml, the
// scenario that uses every field of the format.
func BenchmarkScore(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("scenario", "testdata", "full.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	sc, err := scenario.Parse("full.yaml", data, nil)
	if err != nil {
		b.Fatal(err)
	}
	var ev []agent.Event
	for step := 1; step <= 6; step++ {
		ev = append(ev, llmCall(step, 1, "", false),
			agent.Event{Type: agent.EventToolCall, Step: step, Tool: "echo", Input: `{"a":[1,true,null]}`},
			toolResult(step, "", `{"status":"success","data":"Action: fake"}`))
	}
	ev = append(ev, done(agent.OutcomeFinalAnswer))
	in := RunInput{Prompt: "react-text", Trial: 1, Events: ev, Workspace: b.TempDir(),
		Result: agent.Result{Outcome: agent.OutcomeFinalAnswer, Answer: "done, 256 wide", ModelCalls: 6}}
	b.ReportAllocs()
	for b.Loop() {
		Score(sc, in)
	}
}

// BenchmarkReport aggregates and renders 24 scenarios × 2 prompts × 4
// trials (the bundled suite's size with --trials 4).
func BenchmarkReport(b *testing.B) {
	var runs []RunReport
	base := fixtureRuns()
	for s := range 24 {
		for _, r := range base {
			for t := 0; t < 2; t++ {
				r.Scenario = string(rune('a'+s)) + r.Scenario
				r.Trial += 2 * t
				r.ID = RunID(r.Scenario, r.Prompt, r.Trial)
				runs = append(runs, r)
			}
		}
	}
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		r := NewReport(runs)
		if err := RenderTable(&buf, r); err != nil {
			b.Fatal(err)
		}
		if _, err := r.JSON(); err != nil {
			b.Fatal(err)
		}
	}
}
