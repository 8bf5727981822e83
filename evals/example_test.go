package evals_test

import (
	"fmt"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals"
	"github.com/agenthub/agenthub/evals/report"
	"github.com/agenthub/agenthub/evals/scenario"
)

func ExampleScore() {
	sc, err := scenario.Parse("echo.yaml", []byte(`
id: echo-hello
description: Echo a greeting back.
task: Say hello through the echo tool.
tools: [echo]
expect:
  outcome: final_answer
  answer: {contains: hello}
  trajectory: {mode: exact, calls: [{tool: echo}]}
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	run := evals.Score(sc, evals.RunInput{
		Prompt: "react-text",
		Trial:  1,
		Result: agent.Result{Outcome: agent.OutcomeFinalAnswer, Answer: "hello", ModelCalls: 2},
		Events: []agent.Event{
			{Type: agent.EventLLMCall, Step: 1, Attempt: 1},
			{Type: agent.EventToolCall, Step: 1, Tool: "echo", Input: "hello"},
			{Type: agent.EventToolResult, Step: 1, Tool: "echo", Status: "success", Observation: `{"status":"success","data":"hello"}`},
			{Type: agent.EventLLMCall, Step: 2, Attempt: 1},
			{Type: agent.EventDone, Step: 2, Outcome: agent.OutcomeFinalAnswer},
		},
	})
	rep := report.New([]report.Run{run})
	fmt.Println(run.ID, run.Verdict, len(run.Checks), "checks")
	fmt.Println(rep.Summary.Pass, "of", rep.Summary.Total, "passed")
	// Output:
	// echo-hello/react-text/1 pass 3 checks
	// 1 of 1 passed
}
