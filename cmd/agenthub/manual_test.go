package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestManualInSync: the package doc (the manual) has a section for every
// command that names each of its flags, and README's configuration
// reference lists exactly the flags each command has.
func TestManualInSync(t *testing.T) {
	doc := docSections(t)
	readme := readmeFlags(t)
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			flags := commandFlags(t, c)
			section, ok := doc[c.name]
			require.True(t, ok, "doc.go has no section \"# agenthub %s\"", c.name)
			for _, f := range flags {
				if !regexp.MustCompile(`(^|[\s,(])--?` + regexp.QuoteMeta(f) + `\b`).MatchString(section) {
					t.Errorf("doc.go section %q does not name -%s", c.name, f)
				}
			}
			if diff := cmp.Diff(flags, readme[c.name]); diff != "" {
				t.Errorf("README configuration reference flags of %s mismatch (-want +got):\n%s", c.name, diff)
			}
		})
	}
	for name := range readme {
		_, ok := lookup(name)
		require.True(t, ok, "README configuration reference lists %q, which is no command", name)
	}
}

// commandFlags returns the sorted flag names that "agenthub NAME -h" prints.
func commandFlags(t *testing.T, c command) []string {
	t.Helper()
	var stdout bytes.Buffer
	e := &env{stdout: &stdout, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	require.ErrorIs(t, c.run(context.Background(), e, []string{"-h"}), errHelp)
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`).FindAllStringSubmatch(stdout.String(), -1) {
		flags = append(flags, m[1])
	}
	sort.Strings(flags)
	return flags
}

// docSections returns the text of each "# agenthub NAME" section of doc.go.
func docSections(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	sections := map[string]string{}
	name := ""
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimPrefix(strings.TrimPrefix(line, "//"), " ")
		if strings.HasPrefix(line, "# ") {
			name = strings.TrimPrefix(line, "# agenthub ")
			continue
		}
		sections[name] += line + "\n"
	}
	return sections
}

// readmeFlags returns, per command, the sorted flags of the flag table in
// README's "Configuration reference".
func readmeFlags(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, ref, ok := strings.Cut(string(b), "\n## Configuration reference\n")
	require.True(t, ok, "README has a Configuration reference section")
	ref, _, _ = strings.Cut(ref, "\n## ")
	code := regexp.MustCompile("`([^`]+)`")
	flags := map[string][]string{}
	var cmds []string
	for _, line := range strings.Split(ref, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.Contains(cells[1], "command") || strings.Contains(cells[1], "---") {
			continue
		}
		if names := code.FindAllStringSubmatch(cells[1], -1); len(names) > 0 {
			cmds = nil
			for _, n := range names {
				cmds = append(cmds, strings.Fields(n[1])[0])
			}
		}
		for _, f := range code.FindAllStringSubmatch(cells[2], -1) {
			if !strings.HasPrefix(f[1], "-") {
				continue
			}
			for _, c := range cmds {
				flags[c] = append(flags[c], strings.TrimLeft(f[1], "-"))
			}
		}
	}
	for c := range flags {
		sort.Strings(flags[c])
	}
	return flags
}
