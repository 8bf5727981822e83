package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this package's main as the "agenthub"
// command inside the txtar scripts of testdata/.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agenthub": func() {
			os.Exit(exitCode(os.Stderr, run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)))
		},
	})
}

// TestScripts runs every testdata/*.txtar script: each subcommand's happy
// path and main errors, asserting stdout, stderr and exit code.
func TestScripts(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			// Scripts can reach the repository's fixtures through $REPO.
			env.Setenv("REPO", wd+"/../..")
			// Under -race every agenthub process the scripts start would
			// sleep a second at exit waiting for late reports (the race
			// detector's default); the test binary itself keeps it.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}
