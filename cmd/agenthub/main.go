package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/evals/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(os.Stderr, err))
}

// run executes one command line (without the program name) with the
// process's standard input and environment; its error carries the exit
// code (see exitCode).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &env{stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	if f, ok := stderr.(*os.File); ok {
		e.isTerminal = isTerminal(f)
	}
	return e.run(ctx, args)
}

// programName prefixes every message.
const programName = "agenthub"

// Exit codes of every command (the package doc lists what each means).
const (
	exitOK     = 0 // success
	exitFailed = 1 // a run failed, a check failed, a regression
	exitUsage  = 2 // bad usage, bad input, harness error
)

// env is what a command may read from its surroundings; tests replace it.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// isTerminal reports whether stderr is a terminal (for progress).
	isTerminal bool
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	// run executes the subcommand with the arguments after its name.
	run func(ctx context.Context, e *env, args []string) error
}

// commands is the command table, in the order "agenthub -h" lists it.
var commands = []command{
	{"eval", "replay the scenario suite offline, score it, print the report (the main job)", runEval},
	{"parse", "parse one model reply and print the decision as JSON", runParse},
	{"record", "run scenarios live and write their cassettes", runRecord},
	{"replay", "re-run one recorded run offline with the console trace", runReplay},
	{"report", "merge shard reports: agenthub report merge A.json B.json…", runReport},
	{"run", "run the agent live on one task (model API + image service)", runRun},
	{"serve-scripted", "serve a scripted OpenAI-compatible model until interrupted", runServeScripted},
	{"trace", "summarise a JSONL trace: agenthub trace report RUN.jsonl", runTrace},
	{"version", "print the agenthub version", runVersion},
}

// lookup returns the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run dispatches args to a command; no arguments print the usage and exit 2.
func (e *env) run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		printUsage(e.stdout)
		return &exitError{code: exitUsage}
	}
	if args[0] == "help" && len(args) == 2 {
		args = []string{args[1], "-h"}
	} else if args[0] == "help" || isHelpArg(args[0]) {
		printUsage(e.stdout)
		return nil
	}
	c, ok := lookup(args[0])
	if !ok {
		names := make([]string, len(commands))
		for i, c := range commands {
			names[i] = c.name
		}
		return usageErrorf("unknown command %q; the commands are: %s\nRun '%s -h' for help.", args[0], strings.Join(names, ", "), programName)
	}
	return c.run(ctx, e, args[1:])
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "%s tests ReAct agents: run them live, record their HTTP traffic, replay and score suites offline.\n\n", programName)
	fmt.Fprintf(w, "Usage:\n  %s <command> [flags] [args]\n\nCommands:\n", programName)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-15s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> -h' for the flags of a command.\n", programName)
	fmt.Fprintf(w, "Exit codes: 0 ok, 1 a run or check failed or regressed, 2 bad usage, bad input or harness error.\n")
}

// exitError carries an exit code and a message for the user.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErrorf returns an error that exits 2 with the message.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// failedErrorf returns an error that exits 1 with the message.
func failedErrorf(format string, args ...any) error {
	return &exitError{code: exitFailed, msg: fmt.Sprintf(format, args...)}
}

// errSilentFailure exits 1 without printing anything more.
var errSilentFailure = &exitError{code: exitFailed}

// verdictError is the one place where judged runs become an exit code: nil
// when every run in g passed, exit 2 with errMsg when some run could not be
// judged (verdict error: a harness fault, never a pass or a fail), else
// exit 1 with failMsg when some run failed.
func verdictError(g report.Group, failMsg, errMsg string) error {
	switch {
	case g.Error > 0:
		return &exitError{code: exitUsage, msg: errMsg}
	case g.Fail > 0:
		return &exitError{code: exitFailed, msg: failMsg}
	}
	return nil
}

// exitCode prints err's message to w, prefixed with the program name, and
// returns the exit code it carries: 0 for nil or help, the code of an
// exitError, 2 for any other error.
func exitCode(w io.Writer, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	code := exitUsage
	var xe *exitError
	if errors.As(err, &xe) {
		code = xe.code
	}
	if msg := err.Error(); msg != "" {
		// Messages quote model output and provider error codes.
		fmt.Fprintf(w, "%s: %s\n", programName, agent.Printable(msg))
	}
	return code
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
