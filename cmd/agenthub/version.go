package main

import (
	"context"
	"fmt"

	"github.com/agenthub/agenthub/internal/version"
)

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "version", "version", "agenthub version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, version.Version)
	return nil
}
