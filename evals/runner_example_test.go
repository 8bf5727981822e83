package evals_test

import (
	"context"
	"fmt"
	"regexp"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/evals/report"
	"github.com/agenthub/agenthub/evals/scenario"
)

// ExampleRunner replays one recorded scenario of the bundled suite from Go
// code and prints its verdict: what `agenthub eval --run '^scale-window$'
// --prompt react-text` does.
func ExampleRunner() {
	scenarios, err := scenario.LoadSuite("../fixtures/scenarios", agent.PromptVariants())
	if err != nil {
		fmt.Println(err)
		return
	}
	r := &evals.Runner{Root: "..", CassetteDir: "../cassettes"}
	jobs := r.Plan(scenarios, evals.Filter{Run: regexp.MustCompile(`^scale-window$`), Prompt: "react-text"})
	rep := report.New(r.Run(context.Background(), jobs))
	for _, run := range rep.Runs {
		fmt.Println(run.ID, run.Verdict, run.Outcome, run.ModelCalls, "model calls")
	}
	fmt.Printf("%d/%d passed\n", rep.Summary.Pass, rep.Summary.Total)
	// Output:
	// scale-window/react-text/1 pass final_answer 2 model calls
	// 1/1 passed
}
