package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/agenthub/agenthub/evals/scenario"
	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

// runServeScripted serves a script file as a chat-completions endpoint and
// prints its base URL on stdout; it stops on SIGINT/SIGTERM (ctx).
func runServeScripted(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve-scripted", "serve-scripted [--addr HOST:PORT] [--model NAME] [--prompt VARIANT] --script FILE.yaml",
		"agenthub serve-scripted --script turns.yaml   # then: agenthub run --base-url URL …")
	addr := fs.String("addr", "127.0.0.1:0", "listen address (port 0 picks a free port)")
	script := fs.String("script", "", "YAML `file`: a list of turns, or a scenario file (its script: for --prompt) (required)")
	model := fs.String("model", scriptedmodel.DefaultModel, "model name reported in replies")
	prompt := fs.String("prompt", "", "prompt variant whose turns to serve, when --script is a scenario scripting several")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("serve-scripted: unexpected arguments %q (run 'agenthub serve-scripted -h')", fs.Args())
	}
	if *script == "" {
		return usageErrorf("serve-scripted: --script is required (run 'agenthub serve-scripted -h')")
	}
	data, err := os.ReadFile(*script)
	if err != nil {
		return usageErrorf("serve-scripted: %v", err)
	}
	turns, err := scenario.ParseScript(*script, data, *prompt)
	if err != nil {
		return usageErrorf("serve-scripted: %v", err)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageErrorf("serve-scripted: listen: %v", err)
	}
	sm := scriptedmodel.New(turns, scriptedmodel.WithModel(*model))
	srv := &http.Server{Handler: sm, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "http://%s\n", ln.Addr())
	fmt.Fprintf(e.stderr, "%s serve-scripted: %d turns from %s; POST /chat/completions; Ctrl-C to stop\n", programName, len(turns), *script)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return failedErrorf("serve-scripted: %v", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	fmt.Fprintf(e.stderr, "%s serve-scripted: served %s; %d of %d turns left\n",
		programName, plural(sm.Calls(), "call", "calls"), sm.Remaining(), len(turns))
	return nil
}
