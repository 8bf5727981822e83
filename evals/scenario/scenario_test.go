package scenario

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/internal/imageservice"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// fullScenario reads testdata/full.yaml, a scenario that uses every field
// of the format (evals' BenchmarkScore scores a run of it).
func fullScenario(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "full.yaml"))
	require.NoError(t, err)
	return data
}

func str(s string) *string { return &s }

func TestParseScenarioFull(t *testing.T) {
	got, err := Parse("full.yaml", fullScenario(t), nil)
	require.NoError(t, err)
	want := &Scenario{
		File:        "full.yaml",
		ID:          "scale-window",
		Description: "Scale the seed's window picture to width 256.",
		Tags:        []string{"image", "happy"},
		Task:        "把 ./picture/window.jpg 缩放到宽度 256",
		Tools:       []string{"echo", "image_scaling"},
		Workspace:   "testdata/images",
		Prompts:     []string{"react-text"},
		MaxSteps:    6,
		Timeout:     5 * time.Second,
		Script: map[string][]scriptedmodel.Turn{"react-text": {
			{Reply: "Thought: I should scale the image.\nAction: image_scaling\nAction Input: {\"path\": \"picture/window.jpg\", \"width\": 256}\n"},
			{Fault: &scriptedmodel.Fault{Kind: scriptedmodel.FaultRateLimit, RetryAfterS: 1}},
			{Reply: "Final Answer: done, 256 wide"},
		}},
		ImageFaults: []imageservice.Fault{{Call: 1, Status: 503, RetryAfterS: 2}},
		Expect: Expect{
			Outcome: agent.OutcomeFinalAnswer,
			Answer: &AnswerExpect{
				Contains: []string{"256"}, NotContains: []string{"error", "失败"},
				Regex: regexp.MustCompile(`\d+`), Equals: str("done, 256 wide"),
			},
			Trajectory: &TrajectoryExpect{Mode: ModeInOrder, Calls: []CallExpect{
				{Tool: "image_scaling", Input: &InputExpect{JSONSubset: map[string]any{"width": 256.0}, Contains: str("window")}},
				{Tool: "echo", Input: &InputExpect{JSONSubset: map[string]any{"a": []any{1.0, true, nil}}, Regex: regexp.MustCompile(`^\{`), Equals: str("x")}},
				{Tool: "echo"},
			}},
			Steps: &StepsExpect{Max: 5, Min: 1, Reference: 2},
			Files: []FileExpect{
				{Path: "picture/window_256.jpg", Width: 256, Height: 192, Format: "jpeg"},
				{Path: "out.txt"},
			},
			FailurePaths: []FailurePath{PathLLMRetry, PathToolError},
		},
	}
	opt := cmp.Comparer(func(a, b *regexp.Regexp) bool {
		return (a == nil) == (b == nil) && (a == nil || a.String() == b.String())
	})
	if diff := cmp.Diff(want, got, opt); diff != "" {
		t.Errorf("scenario mismatch (-want +got):\n%s", diff)
	}
}

func TestParseScenarioDefaults(t *testing.T) {
	src := "id: e\ndescription: d\ntask: t\ntools: [echo]\nexpect: {outcome: give_up}\n"
	got, err := Parse("min.yaml", []byte(src), []string{"a", "b"})
	require.NoError(t, err)
	if diff := cmp.Diff([]string{"a", "b"}, got.Prompts); diff != "" {
		t.Errorf("prompts mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, 0, got.MaxSteps)
	require.Nil(t, got.Expect.Answer)
}

// base is a valid scenario; cases replace or append lines.
const base = "id: s\ndescription: d\ntask: t\ntools: [echo]\n"

func TestParseScenarioErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the joined errors
	}{
		{"empty file", "", "f.yaml:1: empty scenario file"},
		{"not a mapping", "- a\n", "f.yaml:1: scenario: want a mapping, got a list"},
		{"syntax error", "id: [a\n", "f.yaml:1: did not find expected ',' or ']'"},
		{"tab indentation", "id: s\n\tx: 1\n", "f.yaml:2: found a tab character that violates indentation"},
		{"two documents", base + "expect: {outcome: give_up}\n---\nid: x\n", "f.yaml:6: more than one YAML document in a scenario file"},
		{"unknown key", base + "expect: {outcome: give_up}\nmodel: glm\n",
			"f.yaml:6: unknown key \"model\" in scenario (want one of description, expect, id, image_faults, max_steps, prompts, script, stream, tags, task, timeout, tools, workspace)"},
		{"duplicate key", base + "task: again\nexpect: {outcome: give_up}\n", "f.yaml:5: duplicate key \"task\" in scenario"},
		{"missing fields", "id: s\n", "f.yaml:1: missing required field \"description\" in scenario\n" +
			"f.yaml:1: missing required field \"task\" in scenario\n" +
			"f.yaml:1: missing required field \"tools\" in scenario\n" +
			"f.yaml:1: missing required field \"expect\" in scenario"},
		{"missing outcome", base + "expect:\n  answer: {contains: x}\n", "f.yaml:6: missing required field \"outcome\" in expect"},
		{"unknown outcome", base + "expect: {outcome: success}\n",
			"f.yaml:5: expect.outcome: unknown outcome \"success\" (want one of final_answer, give_up, max_steps, deadline, cancelled, llm_error)"},
		{"bad id", "id: Scale Window\ndescription: d\ntask: t\ntools: [echo]\nexpect: {outcome: give_up}\n",
			"f.yaml:1: id: \"Scale Window\" must match ^[a-z0-9][a-z0-9_-]*$"},
		{"id over 255 bytes", "id: " + strings.Repeat("a", 256) + "\ndescription: d\ntask: t\ntools: [echo]\nexpect: {outcome: give_up}\n",
			"f.yaml:1: id: 256 bytes is longer than 255 (the id names a cassette folder)"},
		{"empty task", "id: s\ndescription: d\ntask: \"  \"\ntools: [echo]\nexpect: {outcome: give_up}\n", "f.yaml:3: task: must not be empty"},
		{"task is a map", "id: s\ndescription: d\ntask: {a: 1}\ntools: [echo]\nexpect: {outcome: give_up}\n", "f.yaml:3: task: want a string, got a mapping"},
		{"unknown tool", "id: s\ndescription: d\ntask: t\ntools: [echo, resize]\nexpect: {outcome: give_up}\n",
			"f.yaml:4: tools[1]: unknown tool \"resize\" (want one of echo, image_scaling)"},
		{"no tools", "id: s\ndescription: d\ntask: t\ntools: []\nexpect: {outcome: give_up}\n", "f.yaml:4: tools: must list at least one tool"},
		{"tools not a list", "id: s\ndescription: d\ntask: t\ntools: echo\nexpect: {outcome: give_up}\n", "f.yaml:4: tools: want a list, got \"echo\""},
		{"duplicate tool", "id: s\ndescription: d\ntask: t\ntools: [echo, echo]\nexpect: {outcome: give_up}\n", "f.yaml:4: tools[1]: duplicate tool \"echo\""},
		{"absolute workspace", base + "workspace: /etc\nexpect: {outcome: give_up}\n", "f.yaml:5: workspace: must be a relative path, got \"/etc\""},
		{"dotdot workspace", base + "workspace: testdata/../..\nexpect: {outcome: give_up}\n", "f.yaml:5: workspace: must not contain \"..\", got \"testdata/../..\""},
		{"backslash workspace", base + "workspace: 'testdata\\images'\nexpect: {outcome: give_up}\n", "f.yaml:5: workspace: use forward slashes, got \"testdata\\\\images\""},
		{"unknown prompt", base + "prompts: [react-xml]\nexpect: {outcome: give_up}\n",
			"f.yaml:5: prompts[0]: unknown prompt variant \"react-xml\" (want one of native-tools, react-json, react-text)"},
		{"empty prompts", base + "prompts: []\nexpect: {outcome: give_up}\n", "f.yaml:5: prompts: must list at least one variant (omit it for all)"},
		{"max_steps string", base + "max_steps: five\nexpect: {outcome: give_up}\n", "f.yaml:5: max_steps: want an integer, got \"five\""},
		{"max_steps zero", base + "max_steps: 0\nexpect: {outcome: give_up}\n", "f.yaml:5: max_steps: must be at least 1, got 0"},
		{"max_steps float", base + "max_steps: 2.5\nexpect: {outcome: give_up}\n", "f.yaml:5: max_steps: want an integer, got a number 2.5"},
		{"max_steps huge", base + "max_steps: 99999999999\nexpect: {outcome: give_up}\n", "f.yaml:5: max_steps: integer 99999999999 out of range"},
		{"bad timeout", base + "timeout: 5 seconds\nexpect: {outcome: give_up}\n", "f.yaml:5: timeout: want a duration such as \"5s\", got \"5 seconds\""},
		{"negative timeout", base + "timeout: -1s\nexpect: {outcome: give_up}\n", "f.yaml:5: timeout: must be positive, got \"-1s\""},
		{"script unknown variant", base + "script:\n  react-xml: []\nexpect: {outcome: give_up}\n",
			"f.yaml:6: script: unknown prompt variant \"react-xml\" (want one of native-tools, react-json, react-text)"},
		{"script variant not run", base + "prompts: [react-json]\nscript:\n  react-text: [{reply: x}]\nexpect: {outcome: give_up}\n",
			"f.yaml:5: script: variant \"react-text\" is not in prompts"},
		{"script turn empty", base + "script:\n  react-text:\n    - {}\nexpect: {outcome: give_up}\n", "f.yaml:7: script.react-text[0]: turn has neither reply nor fault"},
		{"script turn unknown key", base + "script:\n  react-text:\n    - {text: hi}\nexpect: {outcome: give_up}\n",
			"f.yaml:7: script.react-text[0]: turn: unknown field \"text\""},
		{"unknown fault kind", base + "script:\n  react-text:\n    - fault: {kind: timeout}\nexpect: {outcome: give_up}\n",
			"f.yaml:7: script.react-text[0]: fault: unknown kind \"timeout\" (want one of rate_limit, server_error, business_error, error_body, malformed, slow, stream_cut)"},
		{"reply with non-slow fault", base + "script:\n  react-text:\n    - {reply: x, fault: {kind: malformed}}\nexpect: {outcome: give_up}\n",
			"f.yaml:7: script.react-text[0]: fault malformed: reply, reasoning, tool_calls and finish_reason are not sent with this fault (only with slow and stream_cut)"},
		// The turns serve-scripted rejects are rejected here too: the
		// loader asks scriptedmodel.DecodeTurn.
		{"retry_after_s on server_error", base + "script:\n  react-text:\n    - fault: {kind: server_error, retry_after_s: 2}\nexpect: {outcome: give_up}\n",
			"f.yaml:7: script.react-text[0]: fault server_error: retry_after_s only applies to rate_limit"},
		{"empty reply alone", base + "script:\n  react-text:\n    - reply: \"\"\nexpect: {outcome: give_up}\n",
			"f.yaml:7: script.react-text[0]: turn has neither reply nor fault"},
		{"second turn's field", base + "script:\n  react-text:\n    - reply: a\n    - fault:\n        kind: slow\n        delay: 5\nexpect: {outcome: give_up}\n",
			"f.yaml:10: script.react-text[1]: fault: unknown field \"delay\""},
		{"image fault status", base + "image_faults:\n  - {call: 1, status: 700}\nexpect: {outcome: give_up}\n",
			"f.yaml:6: image_faults[0]: image fault: status 700 is not an HTTP error status (400-599)"},
		// The faults imageservice.WithFaults would not inject are errors
		// here (they were accepted, then dropped by the service).
		{"image fault success status", base + "image_faults:\n  - {call: 1, status: 200}\nexpect: {outcome: give_up}\n",
			"f.yaml:6: image_faults[0]: image fault: status 200 is not an HTTP error status (400-599)"},
		{"image fault repeated call", base + "image_faults:\n  - {call: 2, status: 503}\n  - {call: 2, status: 500}\nexpect: {outcome: give_up}\n",
			"f.yaml:7: image_faults[1]: image fault: call 2 is failed by an earlier fault (one fault per call)"},
		{"image fault bad field and repeated call", base + "image_faults:\n  - {call: 2, status: x}\n  - {call: 2, status: 500}\n  - {call: 2, status: 503}\nexpect: {outcome: give_up}\n",
			"f.yaml:6: image_faults[0].status: want an integer, got \"x\"\n" +
				"f.yaml:8: image_faults[2]: image fault: call 2 is failed by an earlier fault (one fault per call)"},
		{"image fault missing call", base + "image_faults:\n  - {status: 503}\nexpect: {outcome: give_up}\n",
			"f.yaml:6: missing required field \"call\" in image_faults[0]"},
		{"bad answer regex", base + "expect:\n  outcome: final_answer\n  answer: {regex: '(['}\n",
			"f.yaml:7: expect.answer.regex: invalid regex: error parsing regexp: missing closing ]: `[`"},
		{"answer contains map", base + "expect:\n  outcome: final_answer\n  answer: {contains: {a: b}}\n",
			"f.yaml:7: expect.answer.contains: want a list, got a mapping"},
		{"answer contains bool", base + "expect:\n  outcome: final_answer\n  answer: {contains: [yes, true]}\n",
			"f.yaml:7: expect.answer.contains[1]: want a string, got a boolean true"},
		{"unknown trajectory mode", base + "expect:\n  outcome: final_answer\n  trajectory:\n    mode: greedy\n    calls: []\n",
			"f.yaml:8: expect.trajectory.mode: unknown mode \"greedy\" (want one of exact, in_order, unordered, contains_all, only_from)"},
		{"trajectory missing calls", base + "expect:\n  outcome: final_answer\n  trajectory: {mode: exact}\n",
			"f.yaml:7: missing required field \"calls\" in expect.trajectory"},
		{"call input empty", base + "expect:\n  outcome: final_answer\n  trajectory:\n    mode: exact\n    calls:\n      - {tool: echo, input: {}}\n",
			"f.yaml:10: expect.trajectory.calls[0].input: want one of equals, contains, regex, json_subset"},
		{"call input bad json", base + "expect:\n  outcome: final_answer\n  trajectory:\n    mode: exact\n    calls:\n      - {tool: echo, input: {json_subset: '{a'}}\n",
			"f.yaml:10: expect.trajectory.calls[0].input.json_subset: invalid JSON: invalid character 'a' looking for beginning of object key string"},
		{"call input bad regex", base + "expect:\n  outcome: final_answer\n  trajectory:\n    mode: exact\n    calls:\n      - {tool: echo, input: {regex: 'a{2,1}'}}\n",
			"f.yaml:10: expect.trajectory.calls[0].input.regex: invalid regex: error parsing regexp: invalid repeat count: `{2,1}`"},
		{"steps min over max", base + "expect:\n  outcome: final_answer\n  steps: {min: 4, max: 2}\n", "f.yaml:7: expect.steps: min 4 exceeds max 2"},
		{"steps max over max_steps", base + "max_steps: 3\nexpect:\n  outcome: final_answer\n  steps: {max: 4}\n", "f.yaml:1: expect.steps.max 4 exceeds max_steps 3"},
		{"file format", base + "expect:\n  outcome: final_answer\n  files: [{path: a.gif, format: gif}]\n",
			"f.yaml:7: expect.files[0].format: unknown image format \"gif\" (want jpeg or png)"},
		{"file escapes", base + "expect:\n  outcome: final_answer\n  files: [{path: ../a.jpg}]\n",
			"f.yaml:7: expect.files[0].path: must not contain \"..\", got \"../a.jpg\""},
		{"unknown failure path", base + "expect:\n  outcome: final_answer\n  failure_paths: [tool_error, crash]\n",
			"f.yaml:7: expect.failure_paths[1]: unknown failure path \"crash\" (want one of parse_error, tool_not_found, tool_error, tool_timeout, llm_retry, llm_error, max_steps, deadline, recovery, path_outside_workspace, injection_in_observation)"},
		{"alias", "id: &x s\ndescription: *x\ntask: t\ntools: [echo]\nexpect: {outcome: give_up}\n", "f.yaml:2: description: YAML aliases are not supported"},
		{"several errors", "id: s\ndescription: d\ntask: t\ntools: [nope]\nmax_steps: x\nexpect: {outcome: done}\n",
			"f.yaml:4: tools[0]: unknown tool \"nope\" (want one of echo, image_scaling)\n" +
				"f.yaml:5: max_steps: want an integer, got \"x\"\n" +
				"f.yaml:6: expect.outcome: unknown outcome \"done\" (want one of final_answer, give_up, max_steps, deadline, cancelled, llm_error)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := Parse("f.yaml", []byte(tt.src), nil)
			require.Error(t, err)
			require.Nil(t, sc)
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// fileTime is the modification time writeFiles gives every file, so that
// LoadSuite's oldest-file rule does not depend on the order of writes.
var fileTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		require.NoError(t, os.Chtimes(p, fileTime, fileTime))
	}
	return dir
}

func TestLoadSuite(t *testing.T) {
	ok := func(id string) string {
		return "id: " + id + "\ndescription: d\ntask: t\ntools: [echo]\nexpect: {outcome: final_answer}\n"
	}
	tests := []struct {
		name    string
		files   map[string]string
		older   string // a file made an hour older than the others
		wantIDs []string
		wantErr string // "DIR" stands for the suite directory
	}{
		{"sorted by id, README ignored", map[string]string{
			"a.yaml": ok("zeta"), "b.yaml": ok("alpha"), "README.md": "# not a scenario\n", "c.yml": "junk",
		}, "", []string{"alpha", "zeta"}, ""},
		{"empty dir", map[string]string{}, "", nil, ""},
		{"every file's errors", map[string]string{
			"a.yaml": "id: a\n", "b.yaml": ok("b"), "c.yaml": "id: [\n",
		}, "", nil, "DIR/a.yaml:1: missing required field \"description\" in scenario\n" +
			"DIR/a.yaml:1: missing required field \"task\" in scenario\n" +
			"DIR/a.yaml:1: missing required field \"tools\" in scenario\n" +
			"DIR/a.yaml:1: missing required field \"expect\" in scenario\n" +
			"DIR/c.yaml:1: did not find expected node content"},
		{"duplicate ids", map[string]string{
			"a.yaml": ok("same"), "b.yaml": "# second\n" + ok("same"), "c.yaml": ok("same"),
		}, "", nil, "DIR/b.yaml:2: duplicate id \"same\" (first in DIR/a.yaml:1)\n" +
			"DIR/c.yaml:1: duplicate id \"same\" (first in DIR/a.yaml:1)"},
		// echo-hello-copy.yaml sorts before echo-hello.yaml: the error
		// was reported on the old file, naming the copy.
		{"duplicate id reported on the newer file", map[string]string{
			"echo-hello.yaml": ok("echo-hello"), "echo-hello-copy.yaml": ok("echo-hello"),
		}, "echo-hello.yaml", nil, "DIR/echo-hello-copy.yaml:1: duplicate id \"echo-hello\" (first in DIR/echo-hello.yaml:1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			if tt.older != "" {
				old := fileTime.Add(-time.Hour)
				require.NoError(t, os.Chtimes(filepath.Join(dir, tt.older), old, old))
			}
			got, err := LoadSuite(dir, nil)
			if tt.wantErr != "" {
				require.Error(t, err)
				require.Nil(t, got)
				want := strings.ReplaceAll(tt.wantErr, "DIR", dir)
				if diff := cmp.Diff(want, err.Error()); diff != "" {
					t.Errorf("error mismatch (-want +got):\n%s", diff)
				}
				return
			}
			require.NoError(t, err)
			var ids []string
			for _, sc := range got {
				ids = append(ids, sc.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("ids mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseScenarioLongestID(t *testing.T) {
	id := strings.Repeat("a", 255)
	sc, err := Parse("f.yaml", []byte("id: "+id+"\ndescription: d\ntask: t\ntools: [echo]\nexpect: {outcome: give_up}\n"), nil)
	require.NoError(t, err)
	require.Equal(t, id, sc.ID)
}

func TestLoadSuiteBadDir(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadSuite(filepath.Join(dir, "nope"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
	file := filepath.Join(dir, "f.yaml")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = LoadSuite(file, nil)
	require.EqualError(t, err, "load suite: "+file+" is not a directory")
}

func FuzzParseScenario(f *testing.F) {
	f.Add(fullScenario(f))
	f.Add([]byte(base + "expect: {outcome: give_up}\n"))
	f.Add([]byte("id: &a [*a]\n"))
	f.Add([]byte("expect:\n  trajectory:\n    calls:\n      - input: {json_subset: [1, {a: ~}]}\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("fuzz.yaml", data, nil)
		if err != nil {
			if sc != nil {
				t.Fatal("scenario returned with an error")
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "fuzz.yaml:") {
					t.Fatalf("error line without file:line: %q", line)
				}
			}
			return
		}
		if sc.ID == "" || sc.Task == "" || len(sc.Tools) == 0 || sc.Expect.Outcome == "" {
			t.Fatalf("valid scenario lacks a required field: %+v", sc)
		}
	})
}

func TestParseScript(t *testing.T) {
	scenario := func(script string) string {
		return "id: demo\ndescription: d\ntask: say hi\ntools: [echo]\nexpect: {outcome: final_answer}\nscript:\n" + script
	}
	two := scenario("  react-text:\n    - reply: \"Final Answer: hi\"\n  react-json:\n    - reply: '{\"final_answer\":\"hi\"}'\n")
	tests := []struct {
		name, data, variant string
		want                []scriptedmodel.Turn
		wantErr             string
	}{
		{"list of turns", "- reply: a\n- fault: {kind: rate_limit}\n", "",
			[]scriptedmodel.Turn{{Reply: "a"}, {Fault: &scriptedmodel.Fault{Kind: scriptedmodel.FaultRateLimit}}}, ""},
		{"bad turn in a list", "- reply: ok\n- fault: {kind: teapot}\n", "", nil,
			`f.yaml:2: turn 2: fault: unknown kind "teapot" (want one of rate_limit, server_error, business_error, error_body, malformed, slow, stream_cut)`},
		{"empty file", "", "", nil, "f.yaml: empty script: want a list of turns"},
		{"scenario, one variant", scenario("  react-text:\n    - reply: done\n"), "", []scriptedmodel.Turn{{Reply: "done"}}, ""},
		{"scenario, variant picked", two, "react-json", []scriptedmodel.Turn{{Reply: `{"final_answer":"hi"}`}}, ""},
		{"scenario, two variants, none picked", two, "", nil,
			"f.yaml: script: 2 variants (react-json, react-text): pick one with --prompt VARIANT"},
		{"scenario, unknown variant", two, "react-yaml", nil, `f.yaml: script: no variant "react-yaml" (have react-json, react-text)`},
		{"scenario without script", "id: demo\ndescription: d\ntask: t\ntools: [echo]\nexpect: {outcome: give_up}\n", "", nil,
			"f.yaml: the scenario has no script"},
		{"invalid scenario", "id: demo\nscript:\n  react-text:\n    - reply: done\n", "", nil,
			"f.yaml:1: missing required field \"description\" in scenario\n" +
				"f.yaml:1: missing required field \"task\" in scenario\n" +
				"f.yaml:1: missing required field \"tools\" in scenario\n" +
				"f.yaml:1: missing required field \"expect\" in scenario"},
		{"scenario turn serve-scripted rejects", scenario("  react-text:\n    - fault: {kind: server_error, retry_after_s: 2}\n"), "", nil,
			"f.yaml:8: script.react-text[0]: fault server_error: retry_after_s only applies to rate_limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScript("f.yaml", []byte(tt.data), tt.variant)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// inScenario embeds a list of turns as the react-text script of a valid
// scenario, indenting every line; ok is false for text that indenting
// would change (document markers, directives, a BOM, carriage returns).
func inScenario(turns []byte) (scenario []byte, ok bool) {
	s := string(turns)
	if strings.ContainsAny(s, "\r\ufeff") {
		return nil, false
	}
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "...") || strings.HasPrefix(l, "%") {
			return nil, false
		}
	}
	// The list is the last thing in the file, so that a block scalar at
	// its end keeps or lacks its final line break as in the script file.
	const head = "id: fuzz\ndescription: d\ntask: t\ntools: [echo]\nexpect: {outcome: final_answer}\nscript:\n  react-text:\n"
	return []byte(head + "    " + strings.Join(lines, "\n    ")), true
}

// FuzzScriptReaders feeds the same turns to the scenario loader (as a
// scenario's script) and to serve-scripted's reader (as a script file):
// one must accept what the other accepts, with the same turns.
func FuzzScriptReaders(f *testing.F) {
	for _, s := range []string{
		"- reply: a\n- fault: {kind: rate_limit, retry_after_s: 2}\n",
		"- fault: {kind: server_error, retry_after_s: 2}\n",
		"- fault:\n    kind: slow\n    delay_ms: 5\n  reply: x\n",
		"- fault: {kind: business_error, code: \"1301\"}\n",
		"- reply: \"\"\n", "- reply: a\n  reply: b\n", "- reply: 42\n", "- reply: true\n", "- reply: ~\n",
		"- &a {reply: x}\n- *a\n", "- reply: &r x\n- reply: *r\n", "[]", "{}", "- [1, 2]\n", "", "# nothing\n",
		"- {finish_reason: length}\n", "- fault: {kind: slow, delay_ms: -1}\n  reply: x\n", "- reply: |\n    a\n    b\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wrapped, ok := inScenario(data)
		if !ok {
			t.Skip("not embeddable by indenting")
		}
		fromFile, errFile := ParseScript("turns.yaml", data, "")
		sc, errScenario := Parse("scenario.yaml", wrapped, nil)
		if (errFile == nil) != (errScenario == nil) {
			t.Fatalf("verdicts differ:\nserve-scripted: %v\nscenario loader: %v\nscenario:\n%s", errFile, errScenario, wrapped)
		}
		if errFile != nil {
			return
		}
		if diff := cmp.Diff(fromFile, sc.Script["react-text"], cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("turns mismatch (-serve-scripted +scenario loader):\n%s", diff)
		}
	})
}
