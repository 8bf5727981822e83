// Package scenario owns the scenario file format: the Scenario type and
// its expectations, the strict YAML decoder behind Parse and LoadSuite
// (every problem reported as "file:line: message", unknown keys
// included), the failure-path names a scenario may expect (FailurePaths),
// and ParseScript, the script reader of `agenthub serve-scripted`. What a
// script turn may say is internal/scriptedmodel's rule and what image
// fault can be injected internal/imageservice's; prompt variants, outcomes
// and tool names come from agent and agent/tools. The format is described
// field by field in fixtures/scenarios/README.md.
//
// It judges nothing: evals.Score decides when a failure path occurred and
// was handled, and evals.Runner applies the defaults of unset fields.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/agent/tools"
	"github.com/agenthub/agenthub/internal/imageservice"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// Scenario is one scenario file. The zero values of the optional fields
// mean "not set"; the runner applies its defaults.
type Scenario struct {
	// File is the path the scenario was loaded from, as given to the loader.
	File string `json:"-"`
	// ID names the scenario in run ids and cassette paths; it matches
	// ^[a-z0-9][a-z0-9_-]*$, is at most 255 bytes long (it names a
	// folder) and is unique within a suite.
	ID string `json:"id"`
	// Description says what the scenario exercises.
	Description string `json:"description"`
	// Tags group scenarios in reports (optional).
	Tags []string `json:"tags,omitempty"`
	// Task is the user task handed to the agent.
	Task string `json:"task"`
	// Tools are the names of the tools registered for the run, from
	// tools.Names().
	Tools []string `json:"tools"`
	// Workspace is a folder relative to the repository root (under
	// testdata/) copied into a fresh directory per run; empty: an empty
	// workspace.
	Workspace string `json:"workspace,omitempty"`
	// Prompts are the prompt variants to run; all known variants when the
	// file does not list any.
	Prompts []string `json:"prompts"`
	// MaxSteps is the step budget in model calls (0: the agent default).
	MaxSteps int `json:"max_steps,omitempty"`
	// Timeout is the run deadline (0: none).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Stream makes the model client ask for a server-sent-event stream
	// (stream: true) and assemble it, in every prompt variant.
	Stream bool `json:"stream,omitempty"`
	// Script maps a prompt variant to the scripted model's turns, used only
	// when recording with the scripted model.
	Script map[string][]scriptedmodel.Turn `json:"script,omitempty"`
	// ImageFaults are image-service faults injected when recording.
	ImageFaults []imageservice.Fault `json:"image_faults,omitempty"`
	// Expect is what a run must satisfy to pass.
	Expect Expect `json:"expect"`
}

// Expect is a scenario's expectations. Outcome is required; every other
// part is checked only when present.
type Expect struct {
	// Outcome is the outcome the run must end with.
	Outcome agent.Outcome `json:"outcome"`
	// Answer constrains Result.Answer.
	Answer *AnswerExpect `json:"answer,omitempty"`
	// Trajectory constrains the tool calls.
	Trajectory *TrajectoryExpect `json:"trajectory,omitempty"`
	// Steps bounds the model calls.
	Steps *StepsExpect `json:"steps,omitempty"`
	// Files are outputs that must exist in the workspace after the run.
	Files []FileExpect `json:"files,omitempty"`
	// FailurePaths are the failure paths the run must exercise and handle.
	FailurePaths []FailurePath `json:"failure_paths,omitempty"`
}

// AnswerExpect constrains the final answer (or the give-up reason). All
// set constraints must hold.
type AnswerExpect struct {
	// Contains are substrings the answer must contain (case-sensitive).
	Contains []string `json:"contains,omitempty"`
	// NotContains are substrings the answer must not contain.
	NotContains []string `json:"not_contains,omitempty"`
	// Regex must match somewhere in the answer (Go RE2 syntax).
	Regex *regexp.Regexp `json:"-"`
	// Equals is the whole answer, compared after trimming surrounding
	// white space on both sides.
	Equals *string `json:"equals,omitempty"`
}

// TrajectoryMode says how expected tool calls are matched to actual ones.
type TrajectoryMode string

// The trajectory match modes.
const (
	// ModeExact: the same calls in the same order, nothing more.
	ModeExact TrajectoryMode = "exact"
	// ModeInOrder: the expected calls appear as a subsequence.
	ModeInOrder TrajectoryMode = "in_order"
	// ModeUnordered: the same calls in any order (a perfect matching).
	ModeUnordered TrajectoryMode = "unordered"
	// ModeContainsAll: every expected call matches a distinct actual call;
	// extra actual calls are allowed.
	ModeContainsAll TrajectoryMode = "contains_all"
	// ModeOnlyFrom: every actual call's tool is one of the expected tools
	// (inputs are not checked).
	ModeOnlyFrom TrajectoryMode = "only_from"
)

var trajectoryModes = []TrajectoryMode{ModeExact, ModeInOrder, ModeUnordered, ModeContainsAll, ModeOnlyFrom}

// TrajectoryExpect is the expected tool-call trajectory.
type TrajectoryExpect struct {
	// Mode is the match mode (required).
	Mode TrajectoryMode `json:"mode"`
	// Calls are the expected calls.
	Calls []CallExpect `json:"calls"`
}

// CallExpect is one expected tool call.
type CallExpect struct {
	// Tool is the tool name, compared exactly.
	Tool string `json:"tool"`
	// Input constrains the tool input; nil: any input.
	Input *InputExpect `json:"input,omitempty"`
}

// String is the expected call as a check's reason spells it:
// "tool(*)" for any input, else "tool(equals "x", contains "y", regex /z/,
// json_subset {...})" with the set constraints.
func (c CallExpect) String() string {
	if c.Input == nil {
		return c.Tool + "(*)"
	}
	var parts []string
	if c.Input.Equals != nil {
		parts = append(parts, "equals "+strconv.Quote(*c.Input.Equals))
	}
	if c.Input.Contains != nil {
		parts = append(parts, "contains "+strconv.Quote(*c.Input.Contains))
	}
	if c.Input.Regex != nil {
		parts = append(parts, "regex /"+c.Input.Regex.String()+"/")
	}
	if c.Input.JSONSubset != nil {
		b, _ := json.Marshal(c.Input.JSONSubset)
		parts = append(parts, "json_subset "+string(b))
	}
	return c.Tool + "(" + strings.Join(parts, ", ") + ")"
}

// InputExpect constrains a tool input; every set constraint must hold.
type InputExpect struct {
	// Equals is the whole input, compared after trimming white space.
	Equals *string `json:"equals,omitempty"`
	// Contains is a substring of the input.
	Contains *string `json:"contains,omitempty"`
	// Regex must match somewhere in the input.
	Regex *regexp.Regexp `json:"-"`
	// JSONSubset must be a subset of the input parsed as JSON: objects by
	// key (extra keys allowed), arrays element-wise with equal length,
	// scalars by equality. It is written in the scenario as YAML or as a
	// string of JSON.
	JSONSubset any `json:"json_subset,omitempty"`
}

// StepsExpect bounds the number of model calls of a run.
type StepsExpect struct {
	// Max is the most model calls allowed (0: no bound).
	Max int `json:"max,omitempty"`
	// Min is the fewest model calls allowed (0: no bound).
	Min int `json:"min,omitempty"`
	// Reference is the optimal number of model calls, for step efficiency
	// (report.Group.StepEfficiency: reference / max(actual, reference) for a
	// pass, 0 for a fail); not a check.
	Reference int `json:"reference,omitempty"`
}

// FileExpect is an output file that must exist in the workspace.
type FileExpect struct {
	// Path is relative to the workspace, slash-separated, without "..".
	Path string `json:"path"`
	// Width and Height are the image size in pixels (0: not checked).
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Format is the image format, "jpeg" or "png" ("" : not checked).
	// Setting any of Width, Height, Format makes the file decode as an
	// image.
	Format string `json:"format,omitempty"`
}

// FailurePath names a failure path of the agent contract. evals.Score
// documents when each one counts as occurred and as handled.
type FailurePath string

// The failure paths; evals.Score documents when each occurred and was
// handled.
const (
	// PathParseError: a reply the parser rejected.
	PathParseError FailurePath = "parse_error"
	// PathToolNotFound: a call to a tool that is not registered.
	PathToolNotFound FailurePath = "tool_not_found"
	// PathToolError: a tool call that failed with any other code.
	PathToolError FailurePath = "tool_error"
	// PathToolTimeout: a tool call that ran past its timeout.
	PathToolTimeout FailurePath = "tool_timeout"
	// PathLLMRetry: a model call that failed and was retried.
	PathLLMRetry FailurePath = "llm_retry"
	// PathLLMError: a model error that retries did not cure.
	PathLLMError FailurePath = "llm_error"
	// PathMaxSteps: the step budget ran out.
	PathMaxSteps FailurePath = "max_steps"
	// PathDeadline: the run deadline passed.
	PathDeadline FailurePath = "deadline"
	// PathRecovery: the agent offered recovery data after a tool error.
	PathRecovery FailurePath = "recovery"
	// PathOutsideWorkspace: a tool was asked for a path outside the
	// workspace.
	PathOutsideWorkspace FailurePath = "path_outside_workspace"
	// PathInjectionObservation: a tool output carried protocol labels.
	PathInjectionObservation FailurePath = "injection_in_observation"
)

// allFailurePaths is every failure path, in FailurePaths order.
var allFailurePaths = []FailurePath{
	PathParseError, PathToolNotFound, PathToolError, PathToolTimeout, PathLLMRetry, PathLLMError,
	PathMaxSteps, PathDeadline, PathRecovery, PathOutsideWorkspace, PathInjectionObservation,
}

// FailurePaths returns every failure path in a fixed order, the order in
// which a run report lists the unlisted paths that occurred. Each one has
// a detector in evals.Score.
func FailurePaths() []FailurePath { return slices.Clone(allFailurePaths) }

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// maxIDBytes is the longest scenario id: the id names a cassette folder,
// and 255 bytes is the longest file name of the common file systems.
const maxIDBytes = 255

// Parse validates the scenario in data; file names it in errors.
// prompts are the valid prompt variant names (nil: agent.PromptVariants()).
// Every problem found is reported, each as "file:line: message", joined
// with errors.Join.
func Parse(file string, data []byte, prompts []string) (*Scenario, error) {
	if prompts == nil {
		prompts = agent.PromptVariants()
	}
	d := &decoder{file: file, prompts: prompts}
	sc := d.decodeFile(data)
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	sc.File = file
	return sc, nil
}

// LoadSuite loads every *.yaml file directly in dir (other files, such as
// README.md, are ignored), sorted by scenario id. It reports the errors of
// all files, and duplicate ids across files, joined with errors.Join; on
// any error it returns no scenarios. Of the files that share an id, the
// oldest (by modification time, then by name) keeps it and every other
// one is reported at its id line, naming the oldest: the copy just made
// is the one the error points at. prompts are the valid prompt variant
// names (nil: agent.PromptVariants()).
func LoadSuite(dir string, prompts []string) ([]*Scenario, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("load suite: %s is not a directory", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	}
	sort.Strings(files)
	if prompts == nil {
		prompts = agent.PromptVariants()
	}
	var (
		errs   []error
		loaded []suiteFile
	)
	for _, f := range files {
		data, err := os.ReadFile(f)
		var fi os.FileInfo
		if err == nil {
			fi, err = os.Stat(f)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("load suite: %w", err))
			continue
		}
		d := &decoder{file: f, prompts: prompts}
		sc := d.decodeFile(data)
		if len(d.errs) > 0 {
			errs = append(errs, d.errs...)
			continue
		}
		sc.File = f
		loaded = append(loaded, suiteFile{sc: sc, idLine: d.idLine, mtime: fi.ModTime()})
	}
	out, dups := uniqueIDs(loaded)
	errs = append(errs, dups...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// suiteFile is a scenario LoadSuite read, with what uniqueIDs needs.
type suiteFile struct {
	sc     *Scenario
	idLine int
	mtime  time.Time
}

// uniqueIDs keeps, of the files that share an id, the oldest (modification
// time, then name), and returns one error for each other file, in file
// order.
func uniqueIDs(files []suiteFile) ([]*Scenario, []error) {
	first := map[string]int{} // id → index of the oldest file with it
	for i, f := range files {
		j, ok := first[f.sc.ID]
		if !ok || f.mtime.Before(files[j].mtime) {
			first[f.sc.ID] = i
		}
	}
	var (
		out  []*Scenario
		errs []error
	)
	for i, f := range files {
		j := first[f.sc.ID]
		if i == j {
			out = append(out, f.sc)
			continue
		}
		errs = append(errs, fmt.Errorf("%s:%d: duplicate id %q (first in %s:%d)", f.sc.File, f.idLine, f.sc.ID, files[j].sc.File, files[j].idLine))
	}
	return out, errs
}

// ParseScript reads the scripted model's turns as `agenthub
// serve-scripted --script file` does: data is a YAML list of turns
// (scriptedmodel.ParseScript), or a scenario file, validated as Parse
// does with agent.PromptVariants(), whose script for variant it returns
// (variant may be empty when the scenario scripts one variant only). file
// names the data in errors, which are "file:line: message" lines.
func ParseScript(file string, data []byte, variant string) ([]scriptedmodel.Turn, error) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		turns, err := scriptedmodel.ParseScript(data)
		var se *scriptedmodel.ScriptError
		switch {
		case err == nil:
			return turns, nil
		case errors.As(err, &se) && se.Line > 0:
			return nil, fmt.Errorf("%s:%d: %s", file, se.Line, se.Message)
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s: %s", file, se.Message)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	sc, err := Parse(file, data, nil)
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(sc.Script))
	switch {
	case variant != "":
		if turns, ok := sc.Script[variant]; ok {
			return turns, nil
		}
		return nil, fmt.Errorf("%s: script: no variant %q (have %s)", file, variant, orNone(names))
	case len(names) == 1:
		return sc.Script[names[0]], nil
	case len(names) == 0:
		return nil, fmt.Errorf("%s: the scenario has no script", file)
	}
	return nil, fmt.Errorf("%s: script: %d variants (%s): pick one with --prompt VARIANT", file, len(names), strings.Join(names, ", "))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// decoder walks a yaml.Node tree and collects "file:line: message" errors.
type decoder struct {
	file    string
	prompts []string
	errs    []error
	idLine  int
}

func (d *decoder) errf(line int, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	d.errs = append(d.errs, fmt.Errorf("%s:%d: %s", d.file, line, fmt.Sprintf(format, args...)))
}

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError converts a yaml.v3 syntax error into file:line: message lines.
func (d *decoder) yamlError(err error) {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		for _, m := range te.Errors {
			d.yamlMessage(m)
		}
		return
	}
	d.yamlMessage(err.Error())
}

func (d *decoder) yamlMessage(msg string) {
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		d.errf(n, "%s", m[2])
		return
	}
	d.errf(1, "%s", strings.TrimPrefix(msg, "yaml: "))
}

func (d *decoder) decodeFile(data []byte) *Scenario {
	sc := &Scenario{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errf(1, "empty scenario file")
		} else {
			d.yamlError(err)
		}
		return sc
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errf(extra.Line, "more than one YAML document in a scenario file")
		return sc
	} else if !errors.Is(err, io.EOF) {
		d.yamlError(err)
		return sc
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			d.errf(root.Line, "empty scenario file")
			return sc
		}
		root = root.Content[0]
	}
	d.scenario(root, sc)
	return sc
}

// fields walks a mapping: it calls set for every known key and reports
// unknown keys, duplicate keys and missing required keys.
func (d *decoder) fields(n *yaml.Node, where string, required []string, set map[string]func(v *yaml.Node)) bool {
	if !d.kind(n, yaml.MappingNode, where, "a mapping") {
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errf(k.Line, "%s: keys must be strings", where)
			continue
		}
		f, ok := set[k.Value]
		if !ok {
			d.errf(k.Line, "unknown key %q in %s (want one of %s)", k.Value, where, strings.Join(slices.Sorted(maps.Keys(set)), ", "))
			continue
		}
		if seen[k.Value] {
			d.errf(k.Line, "duplicate key %q in %s", k.Value, where)
			continue
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode {
			d.errf(v.Line, "%s: YAML aliases are not supported", join(where, k.Value))
			continue
		}
		f(v)
	}
	for _, r := range required {
		if !seen[r] {
			d.errf(n.Line, "missing required field %q in %s", r, where)
		}
	}
	return true
}

// join builds a dotted field path; the top level is called "scenario".
func join(where, key string) string {
	if where == "scenario" {
		return key
	}
	return where + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean " + n.Value
		case "!!int":
			return "an integer " + n.Value
		case "!!float":
			return "a number " + n.Value
		}
		return strconv.Quote(n.Value)
	}
	return "a YAML document"
}

func (d *decoder) kind(n *yaml.Node, k yaml.Kind, where, want string) bool {
	if n.Kind != k {
		d.errf(n.Line, "%s: want %s, got %s", where, want, describe(n))
		return false
	}
	return true
}

// str decodes a text scalar; numbers are accepted as their literal text.
func (d *decoder) str(n *yaml.Node, where string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errf(n.Line, "%s: want a string, got %s", where, describe(n))
		return "", false
	}
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float":
		return n.Value, true
	}
	d.errf(n.Line, "%s: want a string, got %s", where, describe(n))
	return "", false
}

// nonEmpty decodes a string that must not be blank.
func (d *decoder) nonEmpty(n *yaml.Node, where string) (string, bool) {
	s, ok := d.str(n, where)
	if ok && strings.TrimSpace(s) == "" {
		d.errf(n.Line, "%s: must not be empty", where)
		return "", false
	}
	return s, ok
}

// integer decodes an integer >= min.
func (d *decoder) integer(n *yaml.Node, where string, min int) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.errf(n.Line, "%s: want an integer, got %s", where, describe(n))
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	if err != nil {
		d.errf(n.Line, "%s: integer %s out of range", where, n.Value)
		return 0, false
	}
	if int(v) < min {
		d.errf(n.Line, "%s: must be at least %d, got %d", where, min, v)
		return 0, false
	}
	return int(v), true
}

// list decodes a sequence, calling each for every element.
func (d *decoder) list(n *yaml.Node, where string, each func(i int, v *yaml.Node)) {
	if !d.kind(n, yaml.SequenceNode, where, "a list") {
		return
	}
	for i, v := range n.Content {
		if v.Kind == yaml.AliasNode {
			d.errf(v.Line, "%s[%d]: YAML aliases are not supported", where, i)
			continue
		}
		each(i, v)
	}
}

// stringOrList decodes a string or a list of strings.
func (d *decoder) stringOrList(n *yaml.Node, where string) []string {
	if n.Kind == yaml.ScalarNode {
		if s, ok := d.str(n, where); ok {
			return []string{s}
		}
		return nil
	}
	var out []string
	d.list(n, where, func(i int, v *yaml.Node) {
		if s, ok := d.str(v, fmt.Sprintf("%s[%d]", where, i)); ok {
			out = append(out, s)
		}
	})
	return out
}

// names decodes a list of unique names from valid.
func (d *decoder) names(n *yaml.Node, where, what string, valid []string) []string {
	var out []string
	d.list(n, where, func(i int, v *yaml.Node) {
		s, ok := d.str(v, fmt.Sprintf("%s[%d]", where, i))
		if !ok {
			return
		}
		if valid != nil && !slices.Contains(valid, s) {
			d.errf(v.Line, "%s[%d]: unknown %s %q (want one of %s)", where, i, what, s, strings.Join(valid, ", "))
			return
		}
		if slices.Contains(out, s) {
			d.errf(v.Line, "%s[%d]: duplicate %s %q", where, i, what, s)
			return
		}
		out = append(out, s)
	})
	return out
}

func (d *decoder) regex(n *yaml.Node, where string) *regexp.Regexp {
	s, ok := d.str(n, where)
	if !ok {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		d.errf(n.Line, "%s: invalid regex: %v", where, err)
		return nil
	}
	return re
}

// relPath validates a relative, slash-separated path without "..".
func (d *decoder) relPath(n *yaml.Node, where string) (string, bool) {
	s, ok := d.nonEmpty(n, where)
	if !ok {
		return "", false
	}
	switch {
	case strings.Contains(s, `\`):
		d.errf(n.Line, "%s: use forward slashes, got %q", where, s)
	case path.IsAbs(s) || filepath.IsAbs(s):
		d.errf(n.Line, "%s: must be a relative path, got %q", where, s)
	case slices.Contains(strings.Split(s, "/"), ".."):
		d.errf(n.Line, "%s: must not contain \"..\", got %q", where, s)
	default:
		return path.Clean(s), true
	}
	return "", false
}

func (d *decoder) scenario(n *yaml.Node, sc *Scenario) {
	const w = "scenario"
	var promptsNode *yaml.Node
	d.fields(n, w, []string{"id", "description", "task", "tools", "expect"}, map[string]func(*yaml.Node){
		"id": func(v *yaml.Node) {
			d.idLine = v.Line
			if s, ok := d.nonEmpty(v, "id"); ok {
				switch {
				case len(s) > maxIDBytes:
					d.errf(v.Line, "id: %d bytes is longer than %d (the id names a cassette folder)", len(s), maxIDBytes)
				case !idPattern.MatchString(s):
					d.errf(v.Line, "id: %q must match %s", s, idPattern)
				}
				sc.ID = s
			}
		},
		"description": func(v *yaml.Node) { sc.Description, _ = d.nonEmpty(v, "description") },
		"tags":        func(v *yaml.Node) { sc.Tags = d.names(v, "tags", "tag", nil) },
		"task":        func(v *yaml.Node) { sc.Task, _ = d.nonEmpty(v, "task") },
		"tools": func(v *yaml.Node) {
			sc.Tools = d.names(v, "tools", "tool", tools.Names())
			if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				d.errf(v.Line, "tools: must list at least one tool")
			}
		},
		"workspace": func(v *yaml.Node) { sc.Workspace, _ = d.relPath(v, "workspace") },
		"prompts": func(v *yaml.Node) {
			promptsNode = v
			sc.Prompts = d.names(v, "prompts", "prompt variant", d.prompts)
			if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				d.errf(v.Line, "prompts: must list at least one variant (omit it for all)")
			}
		},
		"max_steps": func(v *yaml.Node) { sc.MaxSteps, _ = d.integer(v, "max_steps", 1) },
		"timeout": func(v *yaml.Node) {
			s, ok := d.str(v, "timeout")
			if !ok {
				return
			}
			t, err := time.ParseDuration(s)
			switch {
			case err != nil:
				d.errf(v.Line, "timeout: want a duration such as \"5s\", got %q", s)
			case t <= 0:
				d.errf(v.Line, "timeout: must be positive, got %q", s)
			default:
				sc.Timeout = t
			}
		},
		"stream": func(v *yaml.Node) {
			if d.kind(v, yaml.ScalarNode, "stream", "true or false") {
				switch v.Value {
				case "true":
					sc.Stream = true
				case "false":
				default:
					d.errf(v.Line, "stream: want true or false, got %q", v.Value)
				}
			}
		},
		"script":       func(v *yaml.Node) { sc.Script = d.script(v) },
		"image_faults": func(v *yaml.Node) { sc.ImageFaults = d.imageFaults(v) },
		"expect":       func(v *yaml.Node) { d.expect(v, sc) },
	})
	if promptsNode == nil {
		sc.Prompts = slices.Clone(d.prompts)
	}
	for p := range sc.Script {
		if promptsNode != nil && !slices.Contains(sc.Prompts, p) {
			d.errf(promptsNode.Line, "script: variant %q is not in prompts", p)
		}
	}
	if sc.Expect.Steps != nil && sc.MaxSteps > 0 && sc.Expect.Steps.Max > sc.MaxSteps {
		d.errf(n.Line, "expect.steps.max %d exceeds max_steps %d", sc.Expect.Steps.Max, sc.MaxSteps)
	}
}

func (d *decoder) script(n *yaml.Node) map[string][]scriptedmodel.Turn {
	if !d.kind(n, yaml.MappingNode, "script", "a mapping") {
		return nil
	}
	out := map[string][]scriptedmodel.Turn{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, ok := d.str(k, "script")
		if !ok {
			continue
		}
		if !slices.Contains(d.prompts, name) {
			d.errf(k.Line, "script: unknown prompt variant %q (want one of %s)", name, strings.Join(d.prompts, ", "))
			continue
		}
		if _, dup := out[name]; dup {
			d.errf(k.Line, "duplicate key %q in script", name)
			continue
		}
		where := "script." + name
		turns := []scriptedmodel.Turn{}
		d.list(v, where, func(i int, n *yaml.Node) {
			t, err := scriptedmodel.DecodeTurn(n)
			if err != nil {
				d.scriptError(n, fmt.Sprintf("%s[%d]", where, i), err)
				return
			}
			turns = append(turns, t)
		})
		out[name] = turns
	}
	return out
}

// scriptError reports an error of scriptedmodel.DecodeTurn for the turn n.
func (d *decoder) scriptError(n *yaml.Node, where string, err error) {
	var se *scriptedmodel.ScriptError
	if errors.As(err, &se) {
		line := se.Line
		if line == 0 {
			line = n.Line
		}
		d.errf(line, "%s: %s", where, se.Message)
		return
	}
	d.errf(n.Line, "%s: %v", where, err)
}

func joinNames[S ~string](names []S) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// imageFaults decodes image_faults; imageservice.CheckFaults says which
// faults cannot be injected.
func (d *decoder) imageFaults(n *yaml.Node) []imageservice.Fault {
	var (
		out   []imageservice.Fault
		clean []imageservice.Fault // the faults that decoded without error
		at    []int                // their index in out
	)
	d.list(n, "image_faults", func(i int, v *yaml.Node) {
		w := fmt.Sprintf("image_faults[%d]", i)
		var f imageservice.Fault
		before := len(d.errs)
		d.fields(v, w, []string{"call", "status"}, map[string]func(*yaml.Node){
			"call":          func(v *yaml.Node) { f.Call, _ = d.integer(v, join(w, "call"), math.MinInt32) },
			"status":        func(v *yaml.Node) { f.Status, _ = d.integer(v, join(w, "status"), math.MinInt32) },
			"retry_after_s": func(v *yaml.Node) { f.RetryAfterS, _ = d.integer(v, join(w, "retry_after_s"), math.MinInt32) },
		})
		if len(d.errs) == before {
			clean = append(clean, f)
			at = append(at, i)
		}
		out = append(out, f)
	})
	// What can be injected is imageservice's rule: WithFaults refuses the
	// rest.
	for k, err := range imageservice.CheckFaults(clean) {
		if err != nil {
			d.errf(n.Content[at[k]].Line, "image_faults[%d]: %v", at[k], err)
		}
	}
	return out
}

func (d *decoder) expect(n *yaml.Node, sc *Scenario) {
	const w = "expect"
	e := &sc.Expect
	d.fields(n, w, []string{"outcome"}, map[string]func(*yaml.Node){
		"outcome": func(v *yaml.Node) {
			s, ok := d.str(v, "expect.outcome")
			if ok && !slices.Contains(agent.Outcomes(), agent.Outcome(s)) {
				d.errf(v.Line, "expect.outcome: unknown outcome %q (want one of %s)", s, joinNames(agent.Outcomes()))
			}
			e.Outcome = agent.Outcome(s)
		},
		"answer":     func(v *yaml.Node) { e.Answer = d.answer(v) },
		"trajectory": func(v *yaml.Node) { e.Trajectory = d.trajectory(v) },
		"steps":      func(v *yaml.Node) { e.Steps = d.steps(v) },
		"files": func(v *yaml.Node) {
			d.list(v, "expect.files", func(i int, f *yaml.Node) {
				e.Files = append(e.Files, d.fileExpect(f, fmt.Sprintf("expect.files[%d]", i)))
			})
		},
		"failure_paths": func(v *yaml.Node) {
			valid := make([]string, 0, 11)
			for _, p := range FailurePaths() {
				valid = append(valid, string(p))
			}
			for _, s := range d.names(v, "expect.failure_paths", "failure path", valid) {
				e.FailurePaths = append(e.FailurePaths, FailurePath(s))
			}
		},
	})
}

func (d *decoder) answer(n *yaml.Node) *AnswerExpect {
	const w = "expect.answer"
	a := &AnswerExpect{}
	d.fields(n, w, nil, map[string]func(*yaml.Node){
		"contains":     func(v *yaml.Node) { a.Contains = d.stringOrList(v, w+".contains") },
		"not_contains": func(v *yaml.Node) { a.NotContains = d.stringOrList(v, w+".not_contains") },
		"regex":        func(v *yaml.Node) { a.Regex = d.regex(v, w+".regex") },
		"equals": func(v *yaml.Node) {
			if s, ok := d.str(v, w+".equals"); ok {
				a.Equals = &s
			}
		},
	})
	return a
}

func (d *decoder) trajectory(n *yaml.Node) *TrajectoryExpect {
	const w = "expect.trajectory"
	t := &TrajectoryExpect{}
	d.fields(n, w, []string{"mode", "calls"}, map[string]func(*yaml.Node){
		"mode": func(v *yaml.Node) {
			s, ok := d.str(v, w+".mode")
			if ok && !slices.Contains(trajectoryModes, TrajectoryMode(s)) {
				d.errf(v.Line, "%s.mode: unknown mode %q (want one of %s)", w, s, joinNames(trajectoryModes))
			}
			t.Mode = TrajectoryMode(s)
		},
		"calls": func(v *yaml.Node) {
			t.Calls = []CallExpect{}
			d.list(v, w+".calls", func(i int, c *yaml.Node) {
				t.Calls = append(t.Calls, d.call(c, fmt.Sprintf("%s.calls[%d]", w, i)))
			})
		},
	})
	return t
}

func (d *decoder) call(n *yaml.Node, where string) CallExpect {
	var c CallExpect
	d.fields(n, where, []string{"tool"}, map[string]func(*yaml.Node){
		"tool": func(v *yaml.Node) { c.Tool, _ = d.nonEmpty(v, join(where, "tool")) },
		"input": func(v *yaml.Node) {
			iw := join(where, "input")
			in := &InputExpect{}
			set := false
			ok := d.fields(v, iw, nil, map[string]func(*yaml.Node){
				"equals": func(v *yaml.Node) {
					if s, ok := d.str(v, iw+".equals"); ok {
						in.Equals, set = &s, true
					}
				},
				"contains": func(v *yaml.Node) {
					if s, ok := d.str(v, iw+".contains"); ok {
						in.Contains, set = &s, true
					}
				},
				"regex": func(v *yaml.Node) {
					if in.Regex = d.regex(v, iw+".regex"); in.Regex != nil {
						set = true
					}
				},
				"json_subset": func(v *yaml.Node) {
					if j, ok := d.jsonValue(v, iw+".json_subset"); ok {
						in.JSONSubset, set = j, true
					}
				},
			})
			if ok && !set && len(v.Content) == 0 {
				d.errf(v.Line, "%s: want one of equals, contains, regex, json_subset", iw)
			}
			c.Input = in
		},
	})
	return c
}

// jsonValue decodes json_subset: a string holding JSON, or YAML that is
// converted to the JSON data model.
func (d *decoder) jsonValue(n *yaml.Node, where string) (any, bool) {
	var raw []byte
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		raw = []byte(n.Value)
	} else {
		v, ok := d.yamlToJSON(n, where)
		if !ok {
			return nil, false
		}
		b, err := json.Marshal(v)
		if err != nil {
			d.errf(n.Line, "%s: %v", where, err)
			return nil, false
		}
		raw = b
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		d.errf(n.Line, "%s: invalid JSON: %v", where, err)
		return nil, false
	}
	return v, true
}

// yamlToJSON converts a node to plain Go values (map[string]any, []any,
// string, float64, bool, nil) without resolving aliases.
func (d *decoder) yamlToJSON(n *yaml.Node, where string) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, ok := d.str(n.Content[i], where)
			if !ok {
				return nil, false
			}
			v, ok := d.yamlToJSON(n.Content[i+1], where+"."+k)
			if !ok {
				return nil, false
			}
			m[k] = v
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, ok := d.yamlToJSON(c, fmt.Sprintf("%s[%d]", where, i))
			if !ok {
				return nil, false
			}
			s = append(s, v)
		}
		return s, true
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, true
		case "!!bool":
			return n.Value == "true", true
		case "!!int", "!!float":
			f, err := strconv.ParseFloat(n.Value, 64)
			if err != nil {
				d.errf(n.Line, "%s: number %s is not representable in JSON", where, n.Value)
				return nil, false
			}
			return f, true
		case "!!str":
			return n.Value, true
		}
	}
	d.errf(n.Line, "%s: %s is not representable in JSON", where, describe(n))
	return nil, false
}

func (d *decoder) steps(n *yaml.Node) *StepsExpect {
	const w = "expect.steps"
	s := &StepsExpect{}
	if !d.fields(n, w, nil, map[string]func(*yaml.Node){
		"max":       func(v *yaml.Node) { s.Max, _ = d.integer(v, w+".max", 1) },
		"min":       func(v *yaml.Node) { s.Min, _ = d.integer(v, w+".min", 1) },
		"reference": func(v *yaml.Node) { s.Reference, _ = d.integer(v, w+".reference", 1) },
	}) {
		return s
	}
	if s.Max > 0 && s.Min > s.Max {
		d.errf(n.Line, "%s: min %d exceeds max %d", w, s.Min, s.Max)
	}
	if s.Max > 0 && s.Reference > s.Max {
		d.errf(n.Line, "%s: reference %d exceeds max %d", w, s.Reference, s.Max)
	}
	return s
}

func (d *decoder) fileExpect(n *yaml.Node, where string) FileExpect {
	var f FileExpect
	d.fields(n, where, []string{"path"}, map[string]func(*yaml.Node){
		"path":   func(v *yaml.Node) { f.Path, _ = d.relPath(v, join(where, "path")) },
		"width":  func(v *yaml.Node) { f.Width, _ = d.integer(v, join(where, "width"), 1) },
		"height": func(v *yaml.Node) { f.Height, _ = d.integer(v, join(where, "height"), 1) },
		"format": func(v *yaml.Node) {
			s, ok := d.str(v, join(where, "format"))
			if ok && s != "jpeg" && s != "png" {
				d.errf(v.Line, "%s.format: unknown image format %q (want jpeg or png)", where, s)
			}
			f.Format = s
		},
	})
	return f
}
