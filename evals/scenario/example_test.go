package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/evals/scenario"
)

// TestScenarioReadmeExample parses the annotated example of
// fixtures/scenarios/README.md so that the documentation cannot drift from
// the loader.
func TestScenarioReadmeExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "scenarios", "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	require.True(t, ok, "README has a yaml block")
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok, "yaml block is closed")
	sc, err := scenario.Parse("README.md", []byte(block), nil)
	require.NoError(t, err)
	require.Equal(t, "scale-window-256", sc.ID)
	require.Equal(t, []scenario.FailurePath{scenario.PathToolError}, sc.Expect.FailurePaths)
}
