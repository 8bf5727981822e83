package evals

import (
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
