package report

import (
	"bytes"
	"testing"
)

// BenchmarkReport aggregates and renders 24 scenarios × 2 prompts × 4
// trials (the bundled suite's size with --trials 4).
func BenchmarkReport(b *testing.B) {
	var runs []Run
	base := fixtureRuns()
	for s := range 24 {
		for _, r := range base {
			for t := 0; t < 2; t++ {
				r.Scenario = string(rune('a'+s)) + r.Scenario
				r.Trial += 2 * t
				r.ID = runID(r.Scenario, r.Prompt, r.Trial)
				runs = append(runs, r)
			}
		}
	}
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		r := New(runs)
		if err := RenderTable(&buf, r); err != nil {
			b.Fatal(err)
		}
		if _, err := r.JSON(); err != nil {
			b.Fatal(err)
		}
	}
}
