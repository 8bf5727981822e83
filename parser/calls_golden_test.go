package parser_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/parser"
)

// nativeDir holds the native golden fixtures: NAME.message.json and
// NAME.golden.json.
const nativeDir = "../fixtures/parser-native"

// message is an OpenAI chat-completions assistant message, the input of a
// native fixture.
type message struct {
	Role      string  `json:"role"`
	Content   *string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// nativeFixture is one native golden case.
type nativeFixture struct {
	name    string
	content string
	calls   []parser.Call
}

// loadNativeFixtures reads every fixtures/parser-native/*.message.json,
// refusing unknown fields, a role other than assistant and a call type
// other than function (a typo in a fixture must not pass silently).
func loadNativeFixtures(tb testing.TB) []nativeFixture {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(nativeDir, "*.message.json"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths, "no fixtures in %s", nativeDir)
	var fs []nativeFixture
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(tb, err)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var m message
		require.NoError(tb, dec.Decode(&m), "decode %s", p)
		require.Equal(tb, "assistant", m.Role, "role of %s", p)
		fx := nativeFixture{name: strings.TrimSuffix(filepath.Base(p), ".message.json")}
		if m.Content != nil {
			fx.content = *m.Content
		}
		for _, tc := range m.ToolCalls {
			require.Equal(tb, "function", tc.Type, "tool call type in %s", p)
			fx.calls = append(fx.calls, parser.Call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		fs = append(fs, fx)
	}
	return fs
}

// TestGoldenNative decides every native fixture and compares the rendered
// result with NAME.golden.json; -update rewrites the golden files.
func TestGoldenNative(t *testing.T) {
	fixtures := loadNativeFixtures(t)
	require.GreaterOrEqual(t, len(fixtures), 8, "the issue asks for at least 8 native fixtures")
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			d, derr := parser.DecideCalls(fx.content, fx.calls)
			checkGolden(t, filepath.Join(nativeDir, fx.name+".golden.json"), "TestGoldenNative", "DecideCalls", d, derr)
		})
	}
}

// TestGoldenNativeFilesHaveFixtures catches a golden file left behind when
// its fixture was renamed or removed.
func TestGoldenNativeFilesHaveFixtures(t *testing.T) {
	checkGoldensHaveInputs(t, nativeDir, ".message.json")
}
