// Package evals runs and judges the scenarios and reports the results:
// the runner (Runner, Plan, Filter) replays each run from its recording,
// or records it live, and hands it to Score as a RunInput; Score judges it
// against its scenario (its doc lists every scoring rule); NewReport turns
// the RunReports into the canonical Report, with renderers (Render),
// baselines (Compare), shard merging (Merge) and shard selection
// (InShard). Reparse re-parses recorded replies with the current parser.
//
// The scenario file format is evals/scenario's; recordings belong to
// evals/replay.
package evals
