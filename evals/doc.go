// Package evals runs the scenarios and judges the runs. Runner plans
// scenario × prompt variant × trial jobs (Plan, Filter), runs each one
// on its recording — replayed from its cassettes, or recorded live when
// Record is set — and hands it to Score, which judges it against its
// scenario (Score's doc lists every scoring rule) and returns its
// report.Run. Reparse re-parses the recorded replies with the current
// parser, without running the agent.
//
// It works between two formats it imports: evals/scenario, the scenario
// files it reads, and evals/report, the reports it produces and
// everything that renders, compares or merges them. A run's folder of
// recordings belongs to evals/replay.
package evals
