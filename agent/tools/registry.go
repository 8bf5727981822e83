package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// Tool is something the model can call by name. Execute receives the raw
// Action Input text (with native tool calls, the call's arguments: a JSON
// object compacted by parser.DecideCalls) and returns the text of the
// observation. A failure is
// returned as an *Error (stable code, retryable flag) or any other error,
// which the agent reports as tool_error. agent.Tool is this interface.
type Tool interface {
	// Name is the name the model uses in its Action line; non-empty and
	// unique within an agent.
	Name() string
	// Description tells the model what the tool does and what input it
	// takes; it is copied into the system prompt.
	Description() string
	// Execute runs one tool call. It must return promptly once ctx is done.
	Execute(ctx context.Context, input string) (string, error)
}

// Parameterized is implemented by a Tool that describes its input as a
// JSON Schema, an optional capability beside Tool. With native tool calling
// Parameters is sent as the function's "parameters" and the model's
// arguments, a JSON object meant to match it, reach Execute as its input;
// the tool still checks them (a schema is a hint to the model, not a
// guarantee). Echo and ImageScaling implement it.
type Parameterized interface {
	// Parameters returns a JSON Schema (draft 2020-12) object of type
	// "object" whose "required" names only keys of its "properties"; each
	// call returns a new copy, which the caller may keep or modify.
	Parameters() json.RawMessage
}

// Deps is what Build needs to construct the tools that touch the world.
type Deps struct {
	// Workspace is the folder file-touching tools work in; required by
	// image_scaling.
	Workspace *Workspace
	// ImageBaseURL is the image service's base URL (image_scaling), for
	// example "http://127.0.0.1:8080".
	ImageBaseURL string
	// ImageClient is the HTTP client for the image service
	// (http.DefaultClient when nil).
	ImageClient *http.Client
}

// builders maps every tool name a scenario may list to its constructor;
// it is the one list of the bundled tools.
var builders = map[string]func(Deps) (Tool, error){
	"echo": func(Deps) (Tool, error) { return Echo{}, nil },
	"image_scaling": func(d Deps) (Tool, error) {
		if d.Workspace == nil {
			return nil, fmt.Errorf("image_scaling needs a workspace")
		}
		return NewImageScaling(d.Workspace, d.ImageBaseURL, d.ImageClient), nil
	},
}

// Names returns the names of the bundled tools ("echo", "image_scaling"),
// sorted: the names a scenario's tools field and Build accept.
func Names() []string {
	return slices.Sorted(maps.Keys(builders))
}

// Build returns the named tools, in the order given, built with deps. An
// unknown name is an error naming it and listing the valid names; so is
// image_scaling without deps.Workspace.
func Build(names []string, deps Deps) ([]Tool, error) {
	out := make([]Tool, 0, len(names))
	for _, name := range names {
		build, ok := builders[name]
		if !ok {
			return nil, fmt.Errorf("build tools: unknown tool %q; valid tools: %s", name, strings.Join(Names(), ", "))
		}
		t, err := build(deps)
		if err != nil {
			return nil, fmt.Errorf("build tools: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}
