package agent

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/agenthub/agenthub/parser"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// DefaultPrompt is the prompt variant used when Config.Prompt is empty.
const DefaultPrompt = "react-text"

// protocolRe reads the protocol header comment of a template:
// {{/* protocol: text */}}.
var protocolRe = regexp.MustCompile(`^\{\{/\*\s*protocol:\s*(\w+)\s*\*/`)

// promptVariant is one parsed template.
type promptVariant struct {
	tmpl     *template.Template
	protocol parser.Protocol
}

// variants holds the embedded prompt variants by name; it is built once
// from the embedded files, which cannot change at run time (a template that
// does not parse is a build-time mistake: the package's tests catch it).
var variants = mustLoadVariants(promptFS, "prompts")

// mustLoadVariants reads every *.tmpl in dir of fsys as a prompt variant.
func mustLoadVariants(fsys fs.FS, dir string) map[string]promptVariant {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic(err)
	}
	out := map[string]promptVariant{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmpl") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".tmpl")
		src, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			panic(err)
		}
		// The header names the reply protocol; without one, or with an
		// unknown name, replies are parsed with Auto.
		protocol := parser.Auto
		if m := protocolRe.FindSubmatch(src); m != nil {
			switch p := parser.Protocol(m[1]); p {
			case parser.Text, parser.JSON, parser.Auto, parser.Tools:
				protocol = p
			}
		}
		t := template.Must(template.New(name).Option("missingkey=error").Parse(string(src)))
		out[name] = promptVariant{tmpl: t, protocol: protocol}
	}
	return out
}

// PromptVariants returns the names of the embedded prompt variants
// (agent/prompts/*.tmpl), sorted.
func PromptVariants() []string {
	return slices.Sorted(maps.Keys(variants))
}

// ErrUnknownPrompt is returned (wrapped) for a prompt variant name that is
// not embedded; the message lists the valid names.
var ErrUnknownPrompt = fmt.Errorf("unknown prompt variant")

// PromptProtocol returns the reply protocol the named prompt variant
// declares in its header comment ({{/* protocol: json */}}; parser.Auto
// without a header or with an unknown name), without rendering it. An
// unknown variant is an error wrapping ErrUnknownPrompt.
func PromptProtocol(variant string) (parser.Protocol, error) {
	v, err := lookupVariant(variant)
	if err != nil {
		return "", err
	}
	return v.protocol, nil
}

// lookupVariant returns the named variant, or an error wrapping
// ErrUnknownPrompt that lists the valid names.
func lookupVariant(variant string) (promptVariant, error) {
	v, ok := variants[variant]
	if !ok {
		return promptVariant{}, fmt.Errorf("%w %q; valid variants: %s", ErrUnknownPrompt, variant, strings.Join(PromptVariants(), ", "))
	}
	return v, nil
}

// SystemPrompt renders the system prompt of the named variant for the
// tools, sorted by name so that the bytes are deterministic, and returns
// the reply protocol the variant asks for. An unknown variant is an error
// wrapping ErrUnknownPrompt.
func SystemPrompt(variant string, tools []Tool) (string, parser.Protocol, error) {
	v, err := lookupVariant(variant)
	if err != nil {
		return "", "", err
	}
	type toolDesc struct{ Name, Description string }
	descs := make([]toolDesc, 0, len(tools))
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		descs = append(descs, toolDesc{t.Name(), t.Description()})
	}
	sort.Slice(descs, func(i, j int) bool { return descs[i].Name < descs[j].Name })
	for _, d := range descs {
		names = append(names, d.Name)
	}
	var buf bytes.Buffer
	err = v.tmpl.Execute(&buf, map[string]any{"Tools": descs, "ToolNames": strings.Join(names, ", ")})
	if err != nil {
		return "", "", fmt.Errorf("render prompt %s: %w", variant, err)
	}
	return strings.TrimSpace(buf.String()) + "\n", v.protocol, nil
}
