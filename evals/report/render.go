package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"

	"github.com/agenthub/agenthub/agent"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Format is a report output format.
type Format string

// The report formats.
const (
	// FormatTable is the terminal table (RenderTable), the default.
	FormatTable Format = "table"
	// FormatMarkdown is GitHub markdown (renderMarkdown).
	FormatMarkdown Format = "markdown"
	// FormatJSON is the canonical JSON (RenderJSON).
	FormatJSON Format = "json"
	// FormatJUnit is JUnit XML (RenderJUnit).
	FormatJUnit Format = "junit"
)

// ParseFormat validates a --format value: table, markdown, json or junit.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatTable, FormatMarkdown, FormatJSON, FormatJUnit:
		return f, nil
	}
	return "", fmt.Errorf("parse format: unknown format %q (want table, markdown, json or junit)", s)
}

// Render writes the report in the given format.
func Render(w io.Writer, r Report, f Format) error {
	switch f {
	case FormatTable:
		return RenderTable(w, r)
	case FormatMarkdown:
		return renderMarkdown(w, r)
	case FormatJSON:
		return RenderJSON(w, r)
	case FormatJUnit:
		return RenderJUnit(w, r)
	}
	return fmt.Errorf("render report: unknown format %q", f)
}

// estimatorNote names the pass@k / pass^k estimator in report headers.
const estimatorNote = "τ-bench estimator over scenario×prompt cases: pass^k = mean C(c,k)/C(n,k), pass@k = mean 1-C(n-c,k)/C(n,k); n/a when k > n"

var tableHeader = []string{"run", "verdict", "outcome", "model calls", "tool calls", "failure paths", "tokens", "model ms", "tool ms"}

// ttftHeader is the column added to the run table when some run streamed:
// the recorded time to first token (Latency.FirstToken).
const ttftHeader = "ttft ms"

// streamed reports whether some run of r streamed (the run table then has
// a ttft ms column).
func streamed(r Report) bool { return r.Summary.Group.Sums.Streamed > 0 }

// header is the run table's header for r.
func header(r Report) []string {
	if streamed(r) {
		return append(slices.Clone(tableHeader), ttftHeader)
	}
	return tableHeader
}

// ttftCell formats a time to first token ("-" for a run that did not stream).
func ttftCell(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return strconv.FormatInt(*ms, 10)
}

// newTable returns a tablewriter with ASCII borders, a header line, and
// text columns left-aligned and numeric columns right-aligned (numeric
// from column numFrom on).
func newTable(w io.Writer, cols, numFrom int) *tablewriter.Table {
	align := make([]tw.Align, cols)
	for i := range align {
		align[i] = tw.AlignLeft
		if i >= numFrom {
			align[i] = tw.AlignRight
		}
	}
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Borders: tw.Border{Left: tw.On, Right: tw.On, Top: tw.On, Bottom: tw.On},
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.On},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			},
			Row: tw.CellConfig{
				Alignment:  tw.CellAlignment{PerColumn: align},
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
			},
		}),
	)
}

// summaryRow is a per-prompt or total row of the run table: the group's
// sums, formatted (with the mean ttft when ttft is set).
func summaryRow(label string, g Group, ttft bool) []string {
	row := []string{
		label,
		fmt.Sprintf("%d/%d pass", g.Pass, g.Total),
		fmt.Sprintf("%d fail, %d error", g.Fail, g.Error),
		strconv.Itoa(g.Sums.ModelCalls), strconv.Itoa(g.Sums.ToolCalls),
		fmt.Sprintf("%d/%d", g.FailurePathsHandled, g.FailurePathsExercised),
		strconv.Itoa(g.Sums.Tokens),
		strconv.FormatInt(g.Sums.ModelMS, 10), strconv.FormatInt(g.Sums.ToolMS, 10),
	}
	if ttft {
		row = append(row, ttftCell(g.Sums.FirstToken()))
	}
	return row
}

// runRow is a run's row of the run table (with its ttft when ttft is
// set). The failure paths of a run the harness could not judge are "-":
// they count in no group (see Group).
func runRow(r Run, ttft bool) []string {
	paths := "-"
	if r.Verdict != VerdictError {
		h, e := r.failurePathCounts()
		paths = fmt.Sprintf("%d/%d", h, e)
	}
	row := []string{
		r.ID, string(r.Verdict), string(r.Outcome),
		strconv.Itoa(r.ModelCalls), strconv.Itoa(r.ToolCalls),
		paths,
		strconv.Itoa(r.Tokens.Prompt + r.Tokens.Completion),
		strconv.FormatInt(r.RecordedMS.Model, 10), strconv.FormatInt(r.RecordedMS.Tool, 10),
	}
	if ttft {
		row = append(row, ttftCell(r.RecordedMS.FirstToken))
	}
	return row
}

func promptNames(r Report) []string { return slices.Sorted(maps.Keys(r.Summary.ByPrompt)) }

func runsOfPrompt(r Report, p string) []Run {
	var out []Run
	for _, run := range r.Runs {
		if run.Prompt == p {
			out = append(out, run)
		}
	}
	return out
}

// RenderTable writes the terminal table: one row per run (run id, verdict,
// outcome, model calls, tool calls, failure paths handled/exercised,
// tokens, recorded model ms, recorded tool ms), a summary row per prompt
// variant and a total row; with more than one trial a pass@k / pass^k
// block that names its estimator; then every failed check and every
// harness error with its reason.
func RenderTable(w io.Writer, r Report) error {
	hdr, ttft := header(r), streamed(r)
	t := newTable(w, len(hdr), 3)
	t.Header(toAny(hdr)...)
	for _, run := range r.Runs {
		if err := t.Append(runRow(run, ttft)); err != nil {
			return fmt.Errorf("render table: %w", err)
		}
	}
	for _, p := range promptNames(r) {
		if err := t.Append(summaryRow("prompt "+p, r.Summary.ByPrompt[p], ttft)); err != nil {
			return fmt.Errorf("render table: %w", err)
		}
	}
	if err := t.Append(summaryRow("total", r.Summary.Group, ttft)); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	ew := &errWriter{w: w}
	if r.Summary.Trials > 1 {
		fmt.Fprintf(ew, "\nReliability (%s)\n", estimatorNote)
		k := newTable(w, 5, 1)
		k.Header("prompt", "k", "pass@k", "pass^k", "flaky")
		rows := reliabilityRows(r)
		for _, row := range rows {
			if err := k.Append(row); err != nil {
				return fmt.Errorf("render table: %w", err)
			}
		}
		if ew.err == nil {
			if err := k.Render(); err != nil {
				return fmt.Errorf("render table: %w", err)
			}
		}
	}
	g := r.Summary.Group
	fmt.Fprintf(ew, "\n%s: %d pass, %d fail, %d error; pass rate %s of judged runs; model calls mean %s p50 %s p95 %s; step efficiency %s; failure paths handled %d/%d; tokens/run %s\n",
		runsCount(g.Total), g.Pass, g.Fail, g.Error, fmtPercent(g.PassRate), fmtNum(g.ModelCalls.Mean), fmtNum(g.ModelCalls.P50),
		fmtNum(g.ModelCalls.P95), fmtRatio(g.StepEfficiency), g.FailurePathsHandled, g.FailurePathsExercised, fmtNum(g.TokensPerRun))
	writeProblems(ew, r)
	if ew.err != nil {
		return fmt.Errorf("render table: %w", ew.err)
	}
	return nil
}

// reliabilityRows are the pass@k rows: per prompt variant then the total.
func reliabilityRows(r Report) [][]string {
	var rows [][]string
	add := func(label string, g Group) {
		for _, ks := range g.Reliability {
			rows = append(rows, []string{label, strconv.Itoa(ks.K), fmtRatio(ks.PassAtK), fmtRatio(ks.PassHat), strconv.Itoa(len(g.Flaky))})
		}
	}
	for _, p := range promptNames(r) {
		add(p, r.Summary.ByPrompt[p])
	}
	add("total", r.Summary.Group)
	return rows
}

// writeProblems lists failed checks and harness errors, one per line.
func writeProblems(w io.Writer, r Report) {
	first := true
	for _, run := range r.Runs {
		var lines []string
		switch run.Verdict {
		case VerdictError:
			lines = append(lines, fmt.Sprintf("ERROR %s: %s", run.ID, run.Error))
		case VerdictFail:
			for _, c := range run.Checks {
				if !c.OK {
					lines = append(lines, fmt.Sprintf("FAIL %s: %s: %s", run.ID, c.Name, c.Reason))
				}
			}
		}
		for _, l := range lines {
			if first {
				fmt.Fprintln(w)
				first = false
			}
			fmt.Fprintln(w, agent.Printable(l))
		}
	}
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// mdEscape makes text safe inside a markdown table cell.
func mdEscape(s string) string {
	s = strings.ReplaceAll(agent.Printable(s), "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// renderMarkdown writes the report as GitHub-flavoured markdown (for CI
// job summaries and PR comments): totals, the run table, per-prompt and
// per-tag tables, reliability with trials > 1, then failures and errors.
func renderMarkdown(w io.Writer, r Report) error {
	ew := &errWriter{w: w}
	g := r.Summary.Group
	fmt.Fprintf(ew, "## Eval results\n\n**%s: %d pass, %d fail, %d error** (pass rate %s of judged runs)\n\n", runsCount(g.Total), g.Pass, g.Fail, g.Error, fmtPercent(g.PassRate))
	hdr, ttft := header(r), streamed(r)
	align := []string{"---", "---", "---"}
	for range hdr[3:] {
		align = append(align, "---:")
	}
	fmt.Fprintf(ew, "| %s |\n| %s |\n", strings.Join(hdr, " | "), strings.Join(align, " | "))
	for _, run := range r.Runs {
		row := runRow(run, ttft)
		for i := range row {
			row[i] = mdEscape(row[i])
		}
		fmt.Fprintf(ew, "| %s |\n", strings.Join(row, " | "))
	}
	groupTable := func(title, key string, groups map[string]Group) {
		if len(groups) == 0 {
			return
		}
		fmt.Fprintf(ew, "\n### %s\n\n| %s | total | pass | fail | error | pass rate | mean model calls | p50 | p95 | step efficiency | failure paths handled | tokens/run |\n", title, key)
		fmt.Fprintln(ew, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, name := range slices.Sorted(maps.Keys(groups)) {
			x := groups[name]
			fmt.Fprintf(ew, "| %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %d/%d | %s |\n", mdEscape(name), x.Total, x.Pass, x.Fail, x.Error,
				fmtPercent(x.PassRate), fmtNum(x.ModelCalls.Mean), fmtNum(x.ModelCalls.P50), fmtNum(x.ModelCalls.P95),
				fmtRatio(x.StepEfficiency), x.FailurePathsHandled, x.FailurePathsExercised, fmtNum(x.TokensPerRun))
		}
	}
	groupTable("By prompt variant", "prompt", r.Summary.ByPrompt)
	groupTable("By tag", "tag", r.Summary.ByTag)
	if g.Trials > 1 {
		fmt.Fprintf(ew, "\n### Reliability\n\n%s\n\n| prompt | k | pass@k | pass^k | flaky |\n| --- | ---: | ---: | ---: | ---: |\n", estimatorNote)
		for _, row := range reliabilityRows(r) {
			fmt.Fprintf(ew, "| %s |\n", strings.Join(row, " | "))
		}
		if len(g.Flaky) > 0 {
			fmt.Fprintf(ew, "\nFlaky: %s\n", strings.Join(g.Flaky, ", "))
		}
	}
	var problems strings.Builder
	writeProblems(&problems, r)
	if problems.Len() > 0 {
		// Reasons quote model output and multi-line diffs: a code block
		// keeps them from being read as markdown (or closing the block).
		text := strings.ReplaceAll(problems.String(), "```", "'''")
		fmt.Fprintf(ew, "\n### Failures and errors\n\n```text\n%s```\n", strings.TrimLeft(text, "\n"))
	}
	if ew.err != nil {
		return fmt.Errorf("render markdown: %w", ew.err)
	}
	return nil
}

// RenderJSON writes the canonical JSON of the report (see Report.JSON).
func RenderJSON(w io.Writer, r Report) error {
	b, err := r.JSON()
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("render json: %w", err)
	}
	return nil
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// msSeconds renders milliseconds as seconds with 3 decimals.
func msSeconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }

// RenderJUnit writes JUnit XML: one testsuite per prompt variant, one
// testcase per run (classname the scenario, name the run id, time the
// recorded model + tool latency), <failure> listing the failed checks of a
// failed run, <error> carrying the harness error of an errored run.
func RenderJUnit(w io.Writer, r Report) error {
	doc := junitSuites{Name: "agenthub eval", Tests: r.Summary.Total, Failures: r.Summary.Fail, Errors: r.Summary.Error}
	prompts := promptNames(r)
	sort.Strings(prompts)
	for _, p := range prompts {
		g := r.Summary.ByPrompt[p]
		s := junitSuite{Name: p, Tests: g.Total, Failures: g.Fail, Errors: g.Error, Time: msSeconds(g.Sums.ModelMS + g.Sums.ToolMS)}
		for _, run := range runsOfPrompt(r, p) {
			ms := run.RecordedMS.Model + run.RecordedMS.Tool
			c := junitCase{Name: run.ID, Classname: run.Scenario, Time: msSeconds(ms)}
			switch run.Verdict {
			case VerdictFail:
				var msgs, lines []string
				for _, ch := range run.Checks {
					if !ch.OK {
						msgs = append(msgs, ch.Name)
						lines = append(lines, ch.Name+": "+ch.Reason)
					}
				}
				c.Failure = &junitProblem{Message: "failed: " + strings.Join(msgs, ", "), Type: "fail", Text: strings.Join(lines, "\n")}
			case VerdictError:
				c.Error = &junitProblem{Message: run.Error, Type: "error", Text: run.Error}
			}
			s.Cases = append(s.Cases, c)
		}
		doc.Suites = append(doc.Suites, s)
	}
	ew := &errWriter{w: w}
	io.WriteString(ew, xml.Header)
	enc := xml.NewEncoder(ew)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("render junit: %w", err)
	}
	io.WriteString(ew, "\n")
	if ew.err != nil {
		return fmt.Errorf("render junit: %w", ew.err)
	}
	return nil
}

// runsCount renders a number of runs: "1 run", "88 runs".
func runsCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}
