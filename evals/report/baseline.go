package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// modelCallsTolerance is the relative rise in a variant's mean model calls
// that Compare tolerates before calling it a regression (10%).
const modelCallsTolerance = 0.10

// RunChange is how a run's verdict moved between baseline and current.
type RunChange string

// The run changes Compare reports; unchanged runs are not listed.
const (
	// ChangeRegressed: pass → fail or pass → error.
	ChangeRegressed RunChange = "regressed"
	// ChangeMissing: in the baseline, not in the current result.
	ChangeMissing RunChange = "missing"
	// ChangeFixed: fail or error → pass.
	ChangeFixed RunChange = "fixed"
	// ChangeChanged: any other verdict change (fail ↔ error).
	ChangeChanged RunChange = "changed"
	// ChangeNew: not in the baseline (informational).
	ChangeNew RunChange = "new"
)

// RunDelta is one run whose verdict differs between the reports.
type RunDelta struct {
	// ID is the run id.
	ID string `json:"id"`
	// Before and After are the verdicts; empty when the run is absent.
	Before Verdict `json:"before,omitempty"`
	After  Verdict `json:"after,omitempty"`
	// Change classifies the difference.
	Change RunChange `json:"change"`
	// Regression says the change counts as a regression.
	Regression bool `json:"regression"`
}

// PromptDelta compares one prompt variant's aggregates.
type PromptDelta struct {
	// Prompt is the variant name.
	Prompt string `json:"prompt"`
	// PassRate, PassHatK and MeanModelCalls are [baseline, current]; nil
	// elements are n/a. PassHatK uses the largest k both reports have.
	PassRate [2]*float64 `json:"pass_rate"`
	// K is the k of PassHatK (0: fewer than two trials on a side).
	K              int         `json:"k,omitempty"`
	PassHatK       [2]*float64 `json:"pass_hat_k"`
	MeanModelCalls [2]*float64 `json:"mean_model_calls"`
	// Regressions say what got worse; empty when nothing did.
	Regressions []string `json:"regressions,omitempty"`
}

// Diff is the comparison of a current report against a baseline.
type Diff struct {
	// Runs are the runs whose verdict changed, are missing or are new, in
	// id order.
	Runs []RunDelta `json:"runs"`
	// Prompts compare every variant in either report, sorted by name.
	Prompts []PromptDelta `json:"prompts"`
}

// Regressed reports whether any run or variant regressed.
func (d Diff) Regressed() bool {
	for _, r := range d.Runs {
		if r.Regression {
			return true
		}
	}
	for _, p := range d.Prompts {
		if len(p.Regressions) > 0 {
			return true
		}
	}
	return false
}

// Compare compares current against baseline. A regression is a run that
// went from pass to fail or error, a baseline run missing from current, a
// variant whose pass rate or pass^k fell, or a variant whose mean model
// calls rose by more than modelCallsTolerance. New runs are informational.
// Replay wall time is never compared.
func Compare(baseline, current Report) Diff {
	d := Diff{Runs: []RunDelta{}, Prompts: []PromptDelta{}}
	cur := map[string]Run{}
	for _, r := range current.Runs {
		cur[r.ID] = r
	}
	base := map[string]bool{}
	var all []Run
	for _, b := range baseline.Runs {
		base[b.ID] = true
		c, ok := cur[b.ID]
		switch {
		case !ok:
			d.Runs = append(d.Runs, RunDelta{ID: b.ID, Before: b.Verdict, Change: ChangeMissing, Regression: true})
			all = append(all, b)
		case b.Verdict == c.Verdict:
		case b.Verdict == VerdictPass:
			d.Runs = append(d.Runs, RunDelta{ID: b.ID, Before: b.Verdict, After: c.Verdict, Change: ChangeRegressed, Regression: true})
			all = append(all, b)
		case c.Verdict == VerdictPass:
			d.Runs = append(d.Runs, RunDelta{ID: b.ID, Before: b.Verdict, After: c.Verdict, Change: ChangeFixed})
			all = append(all, b)
		default:
			d.Runs = append(d.Runs, RunDelta{ID: b.ID, Before: b.Verdict, After: c.Verdict, Change: ChangeChanged})
			all = append(all, b)
		}
	}
	for _, c := range current.Runs {
		if !base[c.ID] {
			d.Runs = append(d.Runs, RunDelta{ID: c.ID, After: c.Verdict, Change: ChangeNew})
			all = append(all, c)
		}
	}
	// Order the deltas like the runs of a report.
	order := map[string]int{}
	sortRuns(all)
	for i, r := range all {
		order[r.ID] = i
	}
	sortDeltas(d.Runs, order)

	prompts := map[string]bool{}
	for p := range baseline.Summary.ByPrompt {
		prompts[p] = true
	}
	for p := range current.Summary.ByPrompt {
		prompts[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(prompts)) {
		d.Prompts = append(d.Prompts, comparePrompt(p, baseline.Summary.ByPrompt, current.Summary.ByPrompt))
	}
	return d
}

// comparePrompt compares prompt variant p's groups in the baseline and
// the current report.
func comparePrompt(p string, baseline, current map[string]Group) PromptDelta {
	b, bok := baseline[p]
	c, cok := current[p]
	pd := PromptDelta{Prompt: p}
	if bok {
		pd.PassRate[0], pd.MeanModelCalls[0] = b.PassRate, b.ModelCalls.Mean
	}
	if cok {
		pd.PassRate[1], pd.MeanModelCalls[1] = c.PassRate, c.ModelCalls.Mean
	}
	if k := min(len(b.Reliability), len(c.Reliability)); k > 1 {
		pd.K = k
		pd.PassHatK = [2]*float64{b.Reliability[k-1].PassHat, c.Reliability[k-1].PassHat}
	}
	if bok && !cok {
		pd.Regressions = append(pd.Regressions, "variant missing from the current result")
	}
	if fell(pd.PassRate) {
		pd.Regressions = append(pd.Regressions, fmt.Sprintf("pass rate fell %s → %s", fmtPercent(pd.PassRate[0]), fmtPercent(pd.PassRate[1])))
	}
	if fell(pd.PassHatK) {
		pd.Regressions = append(pd.Regressions, fmt.Sprintf("pass^%d fell %s → %s", pd.K, fmtRatio(pd.PassHatK[0]), fmtRatio(pd.PassHatK[1])))
	}
	if m := pd.MeanModelCalls; m[0] != nil && m[1] != nil && *m[1] > *m[0]*(1+modelCallsTolerance) {
		pd.Regressions = append(pd.Regressions, fmt.Sprintf("mean model calls rose %s → %s (more than %.0f%%)", fmtNum(m[0]), fmtNum(m[1]), modelCallsTolerance*100))
	}
	return pd
}

// fell reports a drop from a measured value (n/a now counts as a drop).
func fell(v [2]*float64) bool {
	if v[0] == nil {
		return false
	}
	return v[1] == nil || *v[1] < *v[0]
}

func sortDeltas(ds []RunDelta, order map[string]int) {
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && order[ds[j].ID] < order[ds[j-1].ID]; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
}

// RenderDiff writes the comparison as text: the changed runs, then one
// line per variant with pass rate, pass^k and mean model calls before →
// after, then a verdict line ("no regressions" or the count).
func RenderDiff(w io.Writer, d Diff) error {
	ew := &errWriter{w: w}
	fmt.Fprintln(ew, "Baseline comparison")
	if len(d.Runs) == 0 {
		fmt.Fprintln(ew, "  runs: no verdict changes")
	}
	for _, r := range d.Runs {
		mark := " "
		if r.Regression {
			mark = "!"
		}
		fmt.Fprintf(ew, "%s %-9s %s: %s → %s\n", mark, r.Change, r.ID, orDash(string(r.Before)), orDash(string(r.After)))
	}
	n := 0
	for _, r := range d.Runs {
		if r.Regression {
			n++
		}
	}
	for _, p := range d.Prompts {
		mark := " "
		if len(p.Regressions) > 0 {
			mark = "!"
			n += len(p.Regressions)
		}
		line := fmt.Sprintf("%s prompt %s: pass rate %s → %s, mean model calls %s → %s", mark, p.Prompt,
			fmtPercent(p.PassRate[0]), fmtPercent(p.PassRate[1]), fmtNum(p.MeanModelCalls[0]), fmtNum(p.MeanModelCalls[1]))
		if p.K > 1 {
			line += fmt.Sprintf(", pass^%d %s → %s", p.K, fmtRatio(p.PassHatK[0]), fmtRatio(p.PassHatK[1]))
		}
		fmt.Fprintln(ew, line)
		if len(p.Regressions) > 0 {
			fmt.Fprintf(ew, "    regression: %s\n", strings.Join(p.Regressions, "; "))
		}
	}
	if n == 0 {
		fmt.Fprintln(ew, "no regressions")
	} else {
		fmt.Fprintf(ew, "%d regression(s)\n", n)
	}
	if ew.err != nil {
		return fmt.Errorf("render diff: %w", ew.err)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
