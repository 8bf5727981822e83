package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals/scenario"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./evals/report -update to create it")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// runID is the id evals.RunID gives a run: "<scenario>/<prompt>/<trial>".
func runID(scenario, prompt string, trial int) string {
	return scenario + "/" + prompt + "/" + strconv.Itoa(trial)
}

// fixtureRuns is a fixed set of runs: two scenarios × two prompts × two
// trials, with passes, a failure, an error and a flaky case.
func fixtureRuns() []Run {
	run := func(sc, prompt string, trial int, v Verdict, calls int) Run {
		r := Run{
			ID: runID(sc, prompt, trial), Scenario: sc, Prompt: prompt, Trial: trial,
			Tags: []string{"smoke"}, Verdict: v, Outcome: agent.OutcomeFinalAnswer,
			ModelCalls: calls, ToolCalls: max(calls-1, 0), ReferenceSteps: 2,
			FailurePaths: []FailurePathResult{},
			Checks:       []Check{{Name: "outcome", OK: true}},
			Tokens:       Tokens{Prompt: 100 * calls, Completion: 10 * calls},
			RecordedMS:   Latency{Model: int64(300 * calls), Tool: int64(20 * max(calls-1, 0))},
			ReplayMS:     3,
		}
		if sc == "scale-window" {
			r.Tags = append(r.Tags, "image")
			r.FailurePaths = []FailurePathResult{{Path: scenario.PathToolNotFound, Listed: true, Occurred: true, Handled: v == VerdictPass}}
		}
		switch v {
		case VerdictFail:
			r.Checks = append(r.Checks, Check{Name: "answer.contains", Reason: `answer "done" does not contain "256"`})
			r.Checks = append(r.Checks, Check{Name: "failure_path tool_not_found", Reason: "occurred but was not handled: no model call after the tool_not_found observation at step 2"})
		case VerdictError:
			r.Checks = []Check{}
			r.Outcome = ""
			r.Error = "replay: no recorded interaction 2 in cassettes/echo-hello/react-text/2/llm.yaml"
		}
		return r
	}
	return []Run{
		run("scale-window", "react-text", 2, VerdictFail, 4),
		run("scale-window", "react-text", 1, VerdictPass, 2),
		run("scale-window", "react-json", 1, VerdictPass, 2),
		run("scale-window", "react-json", 2, VerdictPass, 3),
		run("echo-hello", "react-text", 1, VerdictPass, 2),
		run("echo-hello", "react-text", 2, VerdictError, 0),
		run("echo-hello", "react-json", 1, VerdictPass, 2),
		run("echo-hello", "react-json", 2, VerdictPass, 2),
	}
}

// TestTableTotalsAgreeWithSummary: the total row summed the failure paths
// of every run, the summary line under it only those of judged runs (seen
// as 1/2 against 1/1). Both now show the group's sums.
func TestTableTotalsAgreeWithSummary(t *testing.T) {
	runs := fixtureRuns()
	for i := range runs {
		if runs[i].Verdict == VerdictError {
			runs[i].FailurePaths = []FailurePathResult{{Path: scenario.PathLLMError, Occurred: true}}
		}
	}
	r := New(runs)
	var buf bytes.Buffer
	require.NoError(t, RenderTable(&buf, r))
	out := buf.String()
	g := r.Summary.Group
	paths := fmt.Sprintf("%d/%d", g.FailurePathsHandled, g.FailurePathsExercised)
	require.Equal(t, "3/4", paths)
	require.Contains(t, out, "failure paths handled "+paths+";")
	total := regexp.MustCompile(`(?m)^\| total .*$`).FindString(out)
	require.NotEmpty(t, total, out)
	cells := strings.Split(total, "|")
	require.Equal(t, paths, strings.TrimSpace(cells[6]), "total row: %s", total)
	for _, p := range promptNames(r) {
		row := regexp.MustCompile(`(?m)^\| prompt ` + p + ` .*$`).FindString(out)
		pg := r.Summary.ByPrompt[p]
		require.Equal(t, fmt.Sprintf("%d/%d", pg.FailurePathsHandled, pg.FailurePathsExercised), strings.TrimSpace(strings.Split(row, "|")[6]), "row: %s", row)
	}
}

func TestRenderGolden(t *testing.T) {
	one := fixtureRuns()[:1]
	one[0].Trial = 1
	one[0].ID = runID(one[0].Scenario, one[0].Prompt, 1)
	tests := []struct {
		name   string
		file   string
		report Report
		format Format
	}{
		{"table with trials", "report.table.golden", New(fixtureRuns()), FormatTable},
		{"table one trial", "report-single.table.golden", New(one), FormatTable},
		{"markdown", "report.md.golden", New(fixtureRuns()), FormatMarkdown},
		{"json", "report.json.golden", New(fixtureRuns()), FormatJSON},
		{"junit", "report.junit.golden", New(fixtureRuns()), FormatJUnit},
		{"empty table", "empty.table.golden", New(nil), FormatTable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, Render(&buf, tt.report, tt.format))
			golden(t, tt.file, buf.Bytes())
		})
	}
}

// TestTTFTColumn: a report with streamed runs gets a ttft ms column (the
// run's recorded time to first token, "-" for a run that did not stream;
// the groups' mean over streamed runs); without one the table is as
// before.
func TestTTFTColumn(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	runs := fixtureRuns()
	var plain bytes.Buffer
	require.NoError(t, RenderTable(&plain, New(runs)))
	require.NotContains(t, plain.String(), ttftHeader)

	runs[0].RecordedMS.FirstToken = ms(0)
	runs[1].RecordedMS.FirstToken = ms(41)
	r := New(runs)
	require.Equal(t, int64(21), *r.Summary.Group.Sums.FirstToken(), "mean of 0 and 41, rounded")
	for _, format := range []Format{FormatTable, FormatMarkdown} {
		var buf bytes.Buffer
		require.NoError(t, Render(&buf, r, format))
		out := buf.String()
		require.Contains(t, out, ttftHeader, format)
		cells := func(id string) []string {
			line := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(id) + ` .*$`).FindString(out)
			require.NotEmpty(t, line, "%s: no row %s in\n%s", format, id, out)
			parts := strings.Split(strings.Trim(line, "|"), "|")
			return parts
		}
		last := func(id string) string { c := cells(id); return strings.TrimSpace(c[len(c)-1]) }
		require.Equal(t, "0", last(runs[0].ID), format)
		require.Equal(t, "41", last(runs[1].ID), format)
		require.Equal(t, "-", last(runs[2].ID), format)
		if format == FormatTable {
			require.Equal(t, "21", last("total"))
		}
	}
}
