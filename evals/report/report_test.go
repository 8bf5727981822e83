package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestPassKEstimators(t *testing.T) {
	tests := []struct {
		name       string
		ns, cs     []int
		k          int
		hat, at    float64 // hand-computed
		applicable bool
	}{
		{"k=1 is the mean pass rate", []int{4, 4, 4}, []int{2, 4, 0}, 1, 0.5, 0.5, true},
		// pass^2: (C(2,2)/C(4,2) + 1 + 0)/3 = (1/6+1)/3 = 7/18; pass@2: (1-1/6 + 1 + 0)/3 = 11/18.
		{"k=2", []int{4, 4, 4}, []int{2, 4, 0}, 2, 7.0 / 18, 11.0 / 18, true},
		// pass^4: (0 + 1 + 0)/3; pass@4: (1 + 1 + 0)/3.
		{"k=n", []int{4, 4, 4}, []int{2, 4, 0}, 4, 1.0 / 3, 2.0 / 3, true},
		// C(3,3)/C(5,3) = 1/10; pass@3 = 1 - C(2,3)/C(5,3) = 1.
		{"k=3 of 5", []int{5}, []int{3}, 3, 0.1, 1, true},
		// C(30,30)/C(60,30) = 1/118264581564861424, beyond float64 binomials' exact range.
		{"large n exact", []int{60}, []int{30}, 30, 1.0 / 118264581564861424, 1 - 1.0/118264581564861424, true},
		{"k>n is n/a", []int{4, 4}, []int{2, 4}, 5, 0, 0, false},
		{"one short case makes it n/a", []int{4, 1}, []int{2, 1}, 2, 0, 0, false},
		{"no cases", nil, nil, 1, 0, 0, false},
		{"k=0", []int{3}, []int{1}, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hat, ok := passHatK(tt.ns, tt.cs, tt.k)
			require.Equal(t, tt.applicable, ok)
			at, ok2 := passAtK(tt.ns, tt.cs, tt.k)
			require.Equal(t, tt.applicable, ok2)
			if !ok {
				return
			}
			require.InEpsilon(t, tt.hat+1, hat+1, 1e-15, "pass^k")
			require.InEpsilon(t, tt.at+1, at+1, 1e-15, "pass@k")
			if tt.hat > 0 && tt.hat < 1e-10 {
				require.InEpsilon(t, tt.hat, hat, 1e-12, "pass^k relative")
			}
		})
	}
}

func TestDistribution(t *testing.T) {
	d := distribution([]float64{10, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	got := []string{fmtNum(d.Mean), fmtNum(d.P50), fmtNum(d.P95)}
	if diff := cmp.Diff([]string{"5.50", "5.00", "10.00"}, got); diff != "" {
		t.Errorf("distribution mismatch (-want +got):\n%s", diff)
	}
	require.Nil(t, distribution(nil).Mean)
}

func f64(v float64) *float64 { return &v }

func TestNewReportSummary(t *testing.T) {
	r := New(fixtureRuns())
	require.Equal(t, "echo-hello/react-json/1", r.Runs[0].ID)
	require.Equal(t, "scale-window/react-text/2", r.Runs[len(r.Runs)-1].ID)
	text := r.Summary.ByPrompt["react-text"]
	want := Group{
		Total: 4, Pass: 2, Fail: 1, Error: 1, PassRate: f64(0.6667), Trials: 2,
		Reliability: []KScore{{K: 1, PassAtK: f64(0.75), PassHat: f64(0.75)}, {K: 2}},
		Flaky:       []string{"scale-window/react-text"},
		ModelCalls:  Dist{Mean: f64(2.6667), P50: f64(2), P95: f64(4)},
		// SPL: (2/2 + 2/2 + 0 for the fail) / 3
		StepEfficiency:        f64(0.6667),
		FailurePathsExercised: 2, FailurePathsHandled: 1, HandlingRate: f64(0.5),
		TokensPerRun: f64(293.3333),
		// Every run, the errored one included.
		Sums: Sums{ModelCalls: 8, ToolCalls: 5, Tokens: 880, ModelMS: 2400, ToolMS: 100},
	}
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("react-text group mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, 8, r.Summary.Total)
	require.Equal(t, 4, r.Summary.ByTag["image"].Total)
}

// TestStepEfficiency: reference / model calls went above 1 for a run that
// failed after fewer calls than the reference; SPL counts a fail as 0 and
// caps a pass at 1.
func TestStepEfficiency(t *testing.T) {
	run := func(trial int, v Verdict, calls, ref int) Run {
		return Run{ID: runID("s", "p", trial), Scenario: "s", Prompt: "p", Trial: trial, Verdict: v, ModelCalls: calls, ReferenceSteps: ref}
	}
	tests := []struct {
		name string
		runs []Run
		want *float64
	}{
		{"fail after one call", []Run{run(1, VerdictFail, 1, 3)}, f64(0)},
		{"fail without a model call", []Run{run(1, VerdictFail, 0, 2)}, f64(0)},
		{"pass beating the reference", []Run{run(1, VerdictPass, 2, 3)}, f64(1)},
		{"pass over the reference", []Run{run(1, VerdictPass, 4, 3)}, f64(0.75)},
		{"errored runs and runs without a reference do not count", []Run{
			run(1, VerdictPass, 4, 2), run(2, VerdictError, 1, 2), run(3, VerdictFail, 1, 0)}, f64(0.5)},
		{"nothing measured", []Run{run(1, VerdictPass, 1, 0)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New(tt.runs).Summary.StepEfficiency
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("step efficiency mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReportWriterAgreesWithReader: --bless wrote a report with negative
// token counts that --baseline then refused; now the writer refuses it too.
func TestReportWriterAgreesWithReader(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Run)
		want string
	}{
		{"negative tokens", func(r *Run) { r.Tokens.Prompt = -5 }, "run echo-hello/react-json/1: negative count or duration"},
		{"negative latency", func(r *Run) { r.RecordedMS.Tool = -1 }, "run echo-hello/react-json/1: negative count or duration"},
		{"missing id", func(r *Run) { r.ID = "" }, "runs[0]: missing id"},
		{"unknown verdict", func(r *Run) { r.Verdict = "ok" }, `run echo-hello/react-json/1: unknown verdict "ok"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(fixtureRuns())
			tt.edit(&r.Runs[0])
			_, err := r.JSON()
			require.EqualError(t, err, "encode report: "+tt.want)
			// What the writer would have written, the reader refuses alike.
			raw, merr := json.Marshal(r)
			require.NoError(t, merr)
			_, err = parse(raw)
			require.EqualError(t, err, tt.want)
		})
	}
}

func TestNewReportTrialsSortNumerically(t *testing.T) {
	var runs []Run
	for _, trial := range []int{10, 2, 1} {
		runs = append(runs, Run{ID: runID("a", "p", trial), Scenario: "a", Prompt: "p", Trial: trial, Verdict: VerdictPass})
	}
	r := New(runs)
	var ids []string
	for _, run := range r.Runs {
		ids = append(ids, run.ID)
	}
	if diff := cmp.Diff([]string{"a/p/1", "a/p/2", "a/p/10"}, ids); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, "a/p/10", runs[0].ID, "New must not reorder its input")
}

func TestReportJSONRoundTrip(t *testing.T) {
	r := New(fixtureRuns())
	b, err := r.JSON()
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("{\n  \"runs\": [")), "keys sorted: %s", b[:40])
	got, err := parse(b)
	require.NoError(t, err)
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	b2, err := got.JSON()
	require.NoError(t, err)
	require.Equal(t, string(b), string(b2))
}

func TestLoadReportErrors(t *testing.T) {
	good, err := New(fixtureRuns()).JSON()
	require.NoError(t, err)
	dup := strings.Replace(string(good), `"id": "echo-hello/react-json/2"`, `"id": "echo-hello/react-json/1"`, 1)
	tests := []struct {
		name, body, want string
	}{
		{"not json", "nope", "load report FILE: not a JSON report: invalid character 'o' in literal null (expecting 'u')"},
		{"no schema", `{"runs":[]}`, `load report FILE: not a report: no "schema" field`},
		{"other schema", `{"schema":2}`, "load report FILE: schema 2 is not supported (want 1)"},
		{"unknown field", `{"schema":1,"runs":[],"when":"now"}`, `load report FILE: decode: json: unknown field "when"`},
		{"trailing data", `{"schema":1,"runs":[]} {}`, "load report FILE: not a JSON report: invalid character '{' after top-level value"},
		{"duplicate id", dup, `load report FILE: duplicate run id "echo-hello/react-json/1"`},
		{"bad verdict", `{"schema":1,"runs":[{"id":"a/b/1","verdict":"ok"}]}`, `load report FILE: run a/b/1: unknown verdict "ok"`},
		{"missing id", `{"schema":1,"runs":[{"verdict":"pass"}]}`, "load report FILE: runs[0]: missing id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "r.json")
			require.NoError(t, os.WriteFile(file, []byte(tt.body), 0o644))
			_, err := Load(file)
			require.Error(t, err)
			if diff := cmp.Diff(strings.ReplaceAll(tt.want, "FILE", file), err.Error()); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
	_, err = Load(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func FuzzParseReport(f *testing.F) {
	good, _ := New(fixtureRuns()).JSON()
	f.Add(good)
	f.Add([]byte(`{"schema":1,"runs":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parse(data)
		if err != nil {
			return
		}
		if r.Summary.Total != len(r.Runs) || r.Summary.Pass+r.Summary.Fail+r.Summary.Error != r.Summary.Total {
			t.Fatalf("inconsistent summary %+v", r.Summary.Group)
		}
	})
}

func TestMerge(t *testing.T) {
	runs := fixtureRuns()
	a, b := New(runs[:3]), New(runs[3:])
	got, err := Merge(b, a)
	require.NoError(t, err)
	if diff := cmp.Diff(New(runs), got); diff != "" {
		t.Errorf("merged report mismatch (-want +got):\n%s", diff)
	}
	_, err = Merge(a, New(runs[2:4]))
	require.EqualError(t, err, `merge reports: duplicate run id "scale-window/react-json/1"`)
	empty, err := Merge()
	require.NoError(t, err)
	require.Equal(t, 0, empty.Summary.Total)
}

func TestMergeChecksShards(t *testing.T) {
	shard := func(i, n int) Report { return Report{Schema: SchemaVersion, Shard: &ShardInfo{Index: i, Count: n}} }
	tests := []struct {
		name    string
		reports []Report
		want    string
	}{
		{"all shards", []Report{shard(2, 3), shard(1, 3), shard(3, 3)}, ""},
		{"one of one", []Report{shard(1, 1)}, ""},
		{"missing", []Report{shard(1, 3), shard(2, 3)}, "merge reports: missing shards 3/3"},
		{"twice", []Report{shard(1, 2), shard(1, 2)}, "merge reports: shard 1/2 given twice"},
		{"mixed counts", []Report{shard(1, 2), shard(2, 3)}, "merge reports: report 2 is shard 2/3, the others are of 2"},
		{"mixed kinds", []Report{shard(1, 2), {Schema: SchemaVersion}}, "merge reports: report 2 is not a shard but others are"},
		{"no shards", []Report{{Schema: SchemaVersion}, {Schema: SchemaVersion}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.reports...)
			if tt.want == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tt.want)
			}
		})
	}
}

func TestFailedIDs(t *testing.T) {
	got := New(fixtureRuns()).FailedIDs()
	if diff := cmp.Diff([]string{"echo-hello/react-text/2", "scale-window/react-text/2"}, got); diff != "" {
		t.Errorf("ids mismatch (-want +got):\n%s", diff)
	}
}

// baselinePair returns a baseline and a current report with one run of
// each kind of change.
func baselinePair() (Report, Report) {
	base := fixtureRuns()
	var cur []Run
	for _, r := range base {
		switch r.ID {
		case "scale-window/react-json/2": // pass → fail
			r.Verdict = VerdictFail
			r.ModelCalls = 6
		case "scale-window/react-text/2": // fail → pass
			r.Verdict = VerdictPass
		case "echo-hello/react-json/1": // missing
			continue
		}
		cur = append(cur, r)
	}
	cur = append(cur, Run{ID: "new-one/react-json/1", Scenario: "new-one", Prompt: "react-json", Trial: 1, Verdict: VerdictPass, ModelCalls: 2})
	return New(base), New(cur)
}

func TestCompare(t *testing.T) {
	base, cur := baselinePair()
	d := Compare(base, cur)
	wantRuns := []RunDelta{
		{ID: "echo-hello/react-json/1", Before: VerdictPass, Change: ChangeMissing, Regression: true},
		{ID: "new-one/react-json/1", After: VerdictPass, Change: ChangeNew},
		{ID: "scale-window/react-json/2", Before: VerdictPass, After: VerdictFail, Change: ChangeRegressed, Regression: true},
		{ID: "scale-window/react-text/2", Before: VerdictFail, After: VerdictPass, Change: ChangeFixed},
	}
	if diff := cmp.Diff(wantRuns, d.Runs); diff != "" {
		t.Errorf("run deltas mismatch (-want +got):\n%s", diff)
	}
	require.True(t, d.Regressed())
	require.Equal(t, []string{"pass rate fell 100.0% → 75.0%", "pass^2 fell 1.0000 → n/a", "mean model calls rose 2.25 → 3.00 (more than 10%)"}, d.Prompts[0].Regressions)
	require.Empty(t, d.Prompts[1].Regressions)

	same := Compare(base, base)
	require.False(t, same.Regressed())
	require.Empty(t, same.Runs)
}

func TestCompareErrorIsRegression(t *testing.T) {
	base := New([]Run{{ID: "a/p/1", Scenario: "a", Prompt: "p", Trial: 1, Verdict: VerdictPass}})
	cur := New([]Run{{ID: "a/p/1", Scenario: "a", Prompt: "p", Trial: 1, Verdict: VerdictError}})
	d := Compare(base, cur)
	require.True(t, d.Regressed())
	require.Equal(t, ChangeRegressed, d.Runs[0].Change)
	require.Equal(t, []string{"pass rate fell 100.0% → n/a"}, d.Prompts[0].Regressions)
}

func TestRenderDiffGolden(t *testing.T) {
	base, cur := baselinePair()
	var buf bytes.Buffer
	require.NoError(t, RenderDiff(&buf, Compare(base, cur)))
	golden(t, "diff.golden", buf.Bytes())
	buf.Reset()
	require.NoError(t, RenderDiff(&buf, Compare(base, base)))
	golden(t, "diff-none.golden", buf.Bytes())
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestRenderWriteErrors(t *testing.T) {
	r := New(fixtureRuns())
	for _, f := range []Format{FormatTable, FormatMarkdown, FormatJSON, FormatJUnit} {
		t.Run(string(f), func(t *testing.T) {
			for _, n := range []int{0, 100, 1000} {
				err := Render(&failWriter{n: n}, r, f)
				require.Error(t, err, "writer failing after %d bytes", n)
				require.Contains(t, err.Error(), "disk full")
			}
		})
	}
	require.ErrorContains(t, RenderDiff(&failWriter{}, Diff{}), "render diff: disk full")
	require.EqualError(t, Render(io.Discard, r, "html"), `render report: unknown format "html"`)
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"table", "markdown", "json", "junit"} {
		f, err := ParseFormat(s)
		require.NoError(t, err)
		require.Equal(t, Format(s), f)
	}
	_, err := ParseFormat("md")
	require.EqualError(t, err, `parse format: unknown format "md" (want table, markdown, json or junit)`)
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		i, n int
		err  string
	}{
		{"1/1", 1, 1, ""},
		{"2/4", 2, 4, ""},
		{"0/4", 0, 0, `parse shard "0/4": want 1 <= i <= n`},
		{"5/4", 0, 0, `parse shard "5/4": want 1 <= i <= n`},
		{"1/0", 0, 0, `parse shard "1/0": want 1 <= i <= n`},
		{"a/4", 0, 0, `parse shard "a/4": want i/n with integers, for example 1/4`},
		{"2", 0, 0, `parse shard "2": want i/n, for example 1/4`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			i, n, err := ParseShard(tt.in)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, [2]int{tt.i, tt.n}, [2]int{i, n})
		})
	}
}

func TestInShard(t *testing.T) {
	const n = 4
	counts := make([]int, n)
	for s := range 50 {
		for _, p := range []string{"react-text", "react-json"} {
			id := runID(fmt.Sprintf("scenario-%02d", s), p, 1)
			owners := 0
			for i := 1; i <= n; i++ {
				if InShard(id, i, n) {
					owners++
					counts[i-1]++
				}
			}
			require.Equal(t, 1, owners, "run %s must be in exactly one shard", id)
		}
	}
	for i, c := range counts {
		require.Greater(t, c, 10, "shard %d of %d got %d of 100 runs", i+1, n, c)
	}
	// FNV-1a 32 of "a" is 0xe40c292c; 0xe40c292c % 3 == 1, so shard 2 of 3.
	require.True(t, InShard("a", 2, 3))
	require.False(t, InShard("a", 1, 3))
	require.False(t, InShard("a", 0, 3))
	require.False(t, InShard("a", 1, 0))
	require.True(t, InShard("anything", 1, 1))
}

func TestRoundHelpers(t *testing.T) {
	require.Equal(t, "n/a", fmtRatio(nil))
	require.Equal(t, "0.3333", fmtRatio(ratio(1, 3)))
	require.Nil(t, ratio(1, 0))
	require.False(t, math.IsNaN(*mean([]float64{1, 2})))
}
