package tools_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/agent/tools"
)

func TestNames(t *testing.T) {
	if diff := cmp.Diff([]string{"echo", "image_scaling"}, tools.Names()); diff != "" {
		t.Errorf("Names mismatch (-want +got):\n%s", diff)
	}
}

func TestBuild(t *testing.T) {
	ws, err := tools.NewWorkspace(t.TempDir())
	require.NoError(t, err)
	tests := []struct {
		name    string
		names   []string
		deps    tools.Deps
		want    []string
		wantErr string
	}{
		{"none", nil, tools.Deps{}, []string{}, ""},
		{"every tool, in order", []string{"image_scaling", "echo"}, tools.Deps{Workspace: ws, ImageBaseURL: "http://127.0.0.1:1"}, []string{"image_scaling", "echo"}, ""},
		{"echo needs nothing", []string{"echo"}, tools.Deps{}, []string{"echo"}, ""},
		{"unknown", []string{"echo", "resize"}, tools.Deps{}, nil, `build tools: unknown tool "resize"; valid tools: echo, image_scaling`},
		{"no workspace", []string{"image_scaling"}, tools.Deps{}, nil, "build tools: image_scaling needs a workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tools.Build(tt.names, tt.deps)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			names := []string{}
			for _, tool := range got {
				names = append(names, tool.Name())
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("Build mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
