package tools

import "context"

// Echo is the echo tool: it returns its input unchanged. It is the
// smallest tool that proves dispatch and observation plumbing work. The
// zero value is ready to use.
type Echo struct{}

// Name returns "echo".
func (Echo) Name() string { return "echo" }

// Description tells the model what echo does and what it takes.
func (Echo) Description() string {
	return "Returns its input unchanged. Input: any text, e.g. `hello world`. Output: the same text."
}

// Execute returns input unchanged; it never fails.
func (Echo) Execute(_ context.Context, input string) (string, error) { return input, nil }
