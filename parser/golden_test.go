package parser_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/parser"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureDir holds the golden fixtures: NAME.txt and NAME.golden.json.
const fixtureDir = "../fixtures/parser"

// fixtureProtocol returns the protocol a fixture is parsed with: its name's
// prefix "json-" or "text-" forces one, anything else is Auto.
func fixtureProtocol(name string) parser.Protocol {
	switch {
	case strings.HasPrefix(name, "json-"):
		return parser.JSON
	case strings.HasPrefix(name, "text-"):
		return parser.Text
	}
	return parser.Auto
}

// fixture is one golden case.
type fixture struct {
	name  string
	reply string
}

// loadFixtures reads every fixtures/parser/*.txt.
func loadFixtures(tb testing.TB) []fixture {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.txt"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths, "no fixtures in %s", fixtureDir)
	var fs []fixture
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(tb, err)
		fs = append(fs, fixture{name: strings.TrimSuffix(filepath.Base(p), ".txt"), reply: string(b)})
	}
	return fs
}

// TestGolden parses every fixture and compares the rendered result with
// NAME.golden.json; -update rewrites the golden files.
func TestGolden(t *testing.T) {
	fixtures := loadFixtures(t)
	require.GreaterOrEqual(t, len(fixtures), 60, "the issue asks for at least 60 fixtures")
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			d, perr := parser.Parse(fx.reply, parser.WithProtocol(fixtureProtocol(fx.name)))
			checkGolden(t, filepath.Join(fixtureDir, fx.name+".golden.json"), "TestGolden", "Parse", d, perr)
		})
	}
}

// checkGolden renders the result of fn (Parse or DecideCalls) and compares
// it with the golden file, or rewrites the file with -update; test names
// the test that regenerates it.
func checkGolden(t *testing.T, golden, test, fn string, d parser.Decision, derr error) {
	t.Helper()
	got, err := parser.Render(d, derr)
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
		return
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "missing golden file; run go test ./parser -run %s -update", test)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Render(%s(%s)) mismatch (-want +got):\n%s", fn, strings.TrimSuffix(filepath.Base(golden), ".golden.json"), diff)
	}
}

// TestGoldenFilesHaveFixtures catches a golden file left behind when its
// fixture was renamed or removed.
func TestGoldenFilesHaveFixtures(t *testing.T) {
	checkGoldensHaveInputs(t, fixtureDir, ".txt")
}

// checkGoldensHaveInputs fails t for each NAME.golden.json in dir without
// its NAME+ext input.
func checkGoldensHaveInputs(t *testing.T, dir, ext string) {
	t.Helper()
	goldens, err := filepath.Glob(filepath.Join(dir, "*.golden.json"))
	require.NoError(t, err)
	for _, g := range goldens {
		in := strings.TrimSuffix(g, ".golden.json") + ext
		if _, err := os.Stat(in); err != nil {
			t.Errorf("golden file %s has no fixture %s", g, in)
		}
	}
}
