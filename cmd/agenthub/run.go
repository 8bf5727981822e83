package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/agenthub/agent"
	"github.com/agenthub/agenthub/agent/llm"
	"github.com/agenthub/agenthub/agent/tools"
	"github.com/agenthub/agenthub/internal/durationflag"
	"github.com/agenthub/agenthub/internal/secret"
)

func runRun(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "run", "run [flags] \"TASK\"",
		`AGENTHUB_API_KEY=... agenthub run --workspace /tmp/ws "Scale ./picture/window.jpg to width 256"`)
	baseURL := fs.String("base-url", llm.DefaultBaseURL, "OpenAI-compatible chat-completions base URL (GLM by default; DeepSeek, OpenAI, Ollama, vLLM, llama.cpp work by URL)")
	model := fs.String("model", llm.DefaultModel, "model name")
	keyEnv := fs.String("api-key-env", "AGENTHUB_API_KEY", "environment variable that holds the API key (the key is never a flag)")
	imageURL := fs.String("image-url", "http://127.0.0.1:8080", "base URL of the image service (start it with: go run ./cmd/imaged)")
	workspace := fs.String("workspace", ".", "folder the tools may read and write; paths outside it are refused")
	prompt := fs.String("prompt", agent.DefaultPrompt, "prompt variant: "+strings.Join(agent.PromptVariants(), ", "))
	maxSteps := fs.Int("max-steps", agent.DefaultMaxSteps, "most model calls in the run")
	timeout := new(time.Duration)
	durationflag.Var(fs, timeout, "timeout", agent.DefaultTimeout, "deadline of the whole run, a `duration` with a unit (e.g. 60s, 2m)")
	tracePath := fs.String("trace", "", "also write the trace as JSON Lines to this file")
	quiet := fs.Bool("q", false, "no console trace on stderr")
	toolChoice := fs.String("tool-choice", "", "with a tools-protocol prompt (native-tools): tool_choice to send: auto, none, required or a tool name (default: not sent)")
	var sampling samplingFlags
	sampling.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkRunArgs(fs, *maxSteps, *timeout); err != nil {
		return err
	}
	task := fs.Arg(0)
	key := e.getenv(*keyEnv)
	if key == "" && !isLocalURL(*baseURL) {
		return usageErrorf("run: no API key: set the environment variable %s (or name another with --api-key-env); a local --base-url (Ollama, vLLM, llama.cpp) needs none; to try without a provider, serve a script with 'agenthub serve-scripted'", *keyEnv)
	}
	cfg, err := sampling.config(fs)
	if err != nil {
		return err
	}
	cfg.BaseURL, cfg.APIKey, cfg.Model = *baseURL, key, *model
	cfg.HTTPClient = &http.Client{} // the run's deadline bounds each call
	client, err := llm.NewClient(cfg)
	if err != nil {
		return usageErrorf("run: %v", err)
	}
	ws, err := tools.NewWorkspace(*workspace)
	if err != nil {
		return usageErrorf("run: workspace: %v", err)
	}
	ts := []agent.Tool{&tools.Echo{}, tools.NewImageScaling(ws, *imageURL, &http.Client{Timeout: 30 * time.Second})}

	// The key (and a password in the base URL) never reaches the console,
	// the trace or the answer; nor does anything key-shaped.
	mask := secret.New(key, secret.URLPassword(*baseURL))
	observers, jsonl, closeTrace, err := runObservers(e, *quiet, *tracePath, mask)
	if err != nil {
		return err
	}
	defer closeTrace()
	a, err := agent.New(client, ts, agent.Config{MaxSteps: *maxSteps, Timeout: *timeout, Prompt: *prompt, ToolChoice: *toolChoice}, agent.WithObserver(agent.MultiObserver(observers...)))
	if err != nil {
		return usageErrorf("run: %v", err) // an unknown prompt variant lists the valid ones
	}
	if err := checkImageService(ctx, *imageURL); err != nil {
		fmt.Fprintf(e.stderr, "%s: warning: image service not reachable at %s (%v); start it with: go run ./cmd/imaged\n", programName, *imageURL, err)
	}
	res, runErr := a.Run(ctx, task)
	if jsonl != nil && jsonl.Err() != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", programName, jsonl.Err())
	}
	if res.Outcome == agent.OutcomeFinalAnswer {
		// The answer is model output: control characters (terminal
		// escapes) are shown, never sent to the terminal.
		fmt.Fprintln(e.stdout, mask.MaskString(agent.Printable(res.Answer)))
		return nil
	}
	if res.Outcome == agent.OutcomeGiveUp {
		return failedErrorf("run: the model gave up: %s", mask.MaskString(res.Answer))
	}
	return failedErrorf("run: %s: %s", res.Outcome, mask.MaskString(fmt.Sprint(runErr)))
}

// samplingFlags are run's sampling and streaming flags.
type samplingFlags struct {
	stream, noTemperature, noStop *bool
	temperature                   *float64
	topP                          optionalFloat
	seed                          optionalInt
	maxTokens                     *int
}

func (f *samplingFlags) register(fs *flag.FlagSet) {
	f.stream = fs.Bool("stream", false, "ask for the reply as a server-sent event stream (with usage) and assemble it")
	f.temperature = fs.Float64("temperature", 0, "sampling temperature (0 is greedy)")
	f.noTemperature = fs.Bool("no-temperature", false, "send no temperature (OpenAI o-series and other reasoning models refuse one)")
	fs.Var(&f.topP, "top-p", "nucleus sampling `p`, 0 to 1 (default: not sent)")
	fs.Var(&f.seed, "seed", "sampling `seed` for providers that support one (default: not sent)")
	f.maxTokens = fs.Int("max-tokens", 0, "most tokens per reply, sent as max_tokens (0: not sent)")
	f.noStop = fs.Bool("no-stop", false, "send no stop sequence (OpenAI o-series refuse one); the reply is not cut at \"Observation:\" either")
}

// config is the client configuration the flags ask for.
func (f *samplingFlags) config(fs *flag.FlagSet) (llm.Config, error) {
	if *f.noTemperature && flagSet(fs, "temperature") {
		return llm.Config{}, usageErrorf("run: --temperature and --no-temperature: give one")
	}
	return llm.Config{Temperature: *f.temperature, NoTemperature: *f.noTemperature, TopP: f.topP.v, Seed: f.seed.v,
		MaxTokens: *f.maxTokens, NoStop: *f.noStop, Stream: *f.stream}, nil
}

// runObservers builds run's observers: the console trace on stderr
// (unless quiet) and the JSONL trace file (when tracePath is set), both
// through the masking writer; closeTrace flushes and closes them.
func runObservers(e *env, quiet bool, tracePath string, mask *secret.Detector) (obs []agent.Observer, jsonl *agent.JSONLObserver, closeTrace func(), err error) {
	var closers []func()
	closeTrace = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if !quiet {
		console := secret.NewWriter(e.stderr, mask)
		closers = append(closers, func() { console.Flush() })
		obs = append(obs, agent.NewConsoleObserver(console))
	}
	if tracePath != "" {
		f, err := os.Create(tracePath)
		if err != nil {
			closeTrace()
			return nil, nil, nil, usageErrorf("run: trace: %v", err)
		}
		tw := secret.NewWriter(f, mask)
		// Flush before Close; every event ends its line, so nothing waits.
		closers = append(closers, func() { f.Close() }, func() { tw.Flush() })
		jsonl = agent.NewJSONLObserver(tw)
		obs = append(obs, jsonl)
	}
	return obs, jsonl, closeTrace, nil
}

// checkRunArgs checks the TASK argument and the budgets of run.
func checkRunArgs(fs *flag.FlagSet, maxSteps int, timeout time.Duration) error {
	if fs.NArg() != 1 {
		return usageErrorf("run: want exactly one TASK argument (quote it), got %d (run 'agenthub run -h')", fs.NArg())
	}
	if strings.TrimSpace(fs.Arg(0)) == "" {
		return usageErrorf("run: the TASK is empty")
	}
	if maxSteps < 1 {
		return usageErrorf("run: --max-steps must be at least 1, got %d", maxSteps)
	}
	if timeout <= 0 {
		return usageErrorf("run: --timeout must be positive, got %s", timeout)
	}
	return nil
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// optionalFloat is a float64 flag that is nil until set.
type optionalFloat struct{ v *float64 }

func (o *optionalFloat) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'g', -1, 64)
}

func (o *optionalFloat) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number")
	}
	o.v = &f
	return nil
}

// optionalInt is an int64 flag that is nil until set.
type optionalInt struct{ v *int64 }

func (o *optionalInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatInt(*o.v, 10)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer")
	}
	o.v = &n
	return nil
}

// isLocalURL reports whether a base URL points at this machine, where
// servers such as Ollama or llama.cpp need no key: an http or https URL
// whose host is "localhost", a loopback address (127.0.0.0/8, ::1) or the
// unspecified address (0.0.0.0, ::). Anything else, including a name that
// merely starts like one (127.0.0.1.example.com, localhost.example.com),
// is remote.
func isLocalURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// checkImageService asks GET /healthz with a short timeout.
func checkImageService(ctx context.Context, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: %s", resp.Status)
	}
	return nil
}
