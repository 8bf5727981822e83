// Command agenthub runs, records, replays and scores ReAct agents.
//
// Run "agenthub -h" for the list of subcommands and "agenthub CMD -h" for
// the flags of one.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/agenthub/agenthub/agent"
)

// Exit codes of every subcommand.
const (
	exitOK      = 0 // success
	exitFailed  = 1 // a run failed, a check failed, a regression
	exitUsage   = 2 // bad usage, bad input, harness error
	programName = "agenthub"
)

// env is what a subcommand may read from its surroundings; tests replace it.
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

var commands = map[string]command{}

// register adds a subcommand; each subcommand file calls it from init.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("agenthub: duplicate command " + c.name)
	}
	commands[c.name] = c
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

// failedErrorf returns an error that exits 1 with the message (which may be
// empty when the report already said everything).
func failedErrorf(format string, args ...any) error {
	return &exitError{code: exitFailed, msg: fmt.Sprintf(format, args...)}
}

// errSilentFailure exits 1 without printing anything more.
var errSilentFailure = &exitError{code: exitFailed}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, isTerminal: isTerminal(os.Stderr)}
	code := run(ctx, e, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and maps its error to an exit code.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) == 2 && args[0] == "help" {
			if c, ok := commands[args[1]]; ok {
				return exitCode(e, c.run(ctx, e, []string{"-h"}))
			}
		}
		printUsage(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "%s: unknown command %q; the commands are: %s\nRun '%s -h' for help.\n",
			programName, args[0], strings.Join(commandNames(), ", "), programName)
		return exitUsage
	}
	return exitCode(e, c.run(ctx, e, args[1:]))
}

func exitCode(e *env, err error) int {
	if err == nil {
		return exitOK
	}
	var xe *exitError
	if errors.As(err, &xe) {
		if xe.msg != "" {
			// Messages quote model output and provider error codes.
			fmt.Fprintf(e.stderr, "%s: %s\n", programName, agent.Printable(xe.msg))
		}
		return xe.code
	}
	if errors.Is(err, errHelp) {
		return exitOK
	}
	fmt.Fprintf(e.stderr, "%s: %s\n", programName, agent.Printable(err.Error()))
	return exitUsage
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "%s tests ReAct agents: run them live, record their HTTP traffic, replay and score suites offline.\n\n", programName)
	fmt.Fprintf(w, "Usage:\n  %s <command> [flags] [args]\n\nCommands:\n", programName)
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-15s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> -h' for the flags of a command.\n", programName)
	fmt.Fprintf(w, "Exit codes: 0 ok, 1 a run or check failed or regressed, 2 bad usage, bad input or harness error.\n")
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
