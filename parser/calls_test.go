package parser_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/parser"
)

// TestDecideCallsSetsErrAfresh: an Err the caller left on a call is
// neither trusted nor kept, and the caller's calls are not modified.
func TestDecideCallsSetsErrAfresh(t *testing.T) {
	stale := &parser.Error{Code: parser.CodeInvalidJSON, Message: "stale"}
	tests := []struct {
		name    string
		in      parser.Call
		wantErr parser.Code // "" for none
	}{
		{"stale error on a valid call is dropped", parser.Call{ID: "a", Name: "echo", Arguments: `{ "text": "x" }`, Err: stale}, ""},
		{"stale error is replaced by the real one", parser.Call{ID: "b", Name: "echo", Arguments: `[]`, Err: stale}, parser.CodeInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := []parser.Call{tt.in}
			d, err := parser.DecideCalls("", calls)
			require.NoError(t, err)
			require.Len(t, d.Calls, 1)
			if diff := cmp.Diff(tt.in, calls[0]); diff != "" {
				t.Errorf("caller's call mismatch (-want +got):\n%s", diff)
			}
			var got parser.Code
			if d.Calls[0].Err != nil {
				got = d.Calls[0].Err.Code
			}
			if got != tt.wantErr {
				t.Errorf("Err code = %q, want %q", got, tt.wantErr)
			}
		})
	}
}
