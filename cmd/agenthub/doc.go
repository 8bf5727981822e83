// Agenthub tests ReAct agents: it runs one live, records the HTTP traffic of
// a scenario suite into cassettes, and replays and scores the suite offline.
//
// Usage:
//
//	agenthub <command> [flags] [args]
//	agenthub <command> -h     # the synopsis, every flag with its default, an example
//	agenthub help <command>   # the same
//
// Flags take one dash or two (-root or --root) and come before the
// arguments. Durations are Go durations with a unit: 500ms, 30s, 2m, 1h30m
// (a bare number such as 30 is refused with the value to type instead).
// Folders given to --scenarios and --cassettes are relative to --root
// unless absolute.
//
// Every file a flag names (--out, --junit, --bless, report merge --out) is
// written by one rule: a regular file is replaced atomically (a reader sees
// the old report or the new one, never a partial one), a symlink is
// followed and stays a symlink, and a FIFO, a device or a descriptor such
// as /dev/stdout is written in place. The --trace file of run is written as
// the run goes (it streams JSON Lines).
//
// # agenthub eval
//
//	agenthub eval [flags]
//
// Eval is the main job: it replays every recorded run of the suite offline
// (no network, no key, no sleeping), scores it and prints one table.
// A run the harness cannot judge (stale cassette, replay miss, unused
// interactions) gets the verdict error.
//
//	--root DIR            repository root; scenario workspaces are read from DIR/testdata/… (default .)
//	--scenarios DIR       folder of scenario files (*.yaml) (default fixtures/scenarios)
//	--cassettes DIR       folder of recorded runs (default cassettes)
//	--run REGEXP          only scenarios whose id matches
//	--prompt VARIANT      only this prompt variant (native-tools, react-json, react-text)
//	--tags A,B            only scenarios with one of these tags
//	--shard I/N           only shard I of N (1-based; a stable hash of the run id)
//	--trials N            trials per scenario and prompt (0: every recorded trial)
//	-j N                  runs at once (0: GOMAXPROCS)
//	--format F            stdout format: table, markdown, json or junit (default table)
//	--out FILE            also write the canonical JSON report
//	--junit FILE          also write a JUnit XML report
//	--baseline FILE       compare with this JSON report; a regression exits 1 (with a
//	                      selection — --run, --prompt, --tags, --shard, --rerun-failed —
//	                      only the selected runs are compared)
//	--bless FILE          write this result's JSON report as the new baseline
//	--rerun-failed FILE   only the runs that did not pass in this JSON report
//	--reparse             re-parse every recorded reply with the current parser and list
//	                      the decisions that changed (no agent run; a change exits 1)
//
// Run from a sub-folder of the repository, eval (like record and replay)
// says which --root has the scenarios folder.
//
// # agenthub record
//
//	agenthub record [flags] (--scripted | --base-url URL --model M)
//
// Record runs the selected scenarios live and writes their cassettes
// (cassettes/<scenario>/<prompt>/<trial>/: llm.yaml, image.yaml, meta.json,
// decisions.json). A run is swapped in only when its recording is complete
// and replays to the same end (see go doc ./evals/replay Recording);
// otherwise the old recording stays, the cause is printed under the table
// ("connection refused", "response body cut after 11 of 1000 bytes",
// "response over 8 MiB", a secret that would be saved) and record exits 1.
// It refuses to run when CI is set. It takes the
// selection flags of eval (--root, --scenarios, --cassettes, --run,
// --prompt, --tags, --shard, --trials with 0 meaning 1, -j) and:
//
//	--scripted            answer with each scenario's script (the in-process scripted model)
//	--base-url URL        a real OpenAI-compatible provider instead
//	--model M             the model at that provider (needed with --base-url)
//	--api-key-env NAME    environment variable holding the provider's key (default
//	                      AGENTHUB_API_KEY; not needed for a loopback URL)
//	--image-url URL       a real image service (default: one in-process on loopback,
//	                      with each scenario's image_faults)
//	--mode M              record (fresh cassettes, default) or replay-or-record (keep
//	                      what matches, record what is missing)
//	--keep-failed DIR     save each incomplete recording as DIR/<scenario>/<prompt>/<trial>
//	                      for inspection (never over the committed one; never one
//	                      refused for a secret)
//
// # agenthub replay
//
//	agenthub replay [flags] cassettes/<scenario>/<prompt>/<trial>
//
// Replay re-runs one recorded run offline with the step-by-step console
// trace on stderr and its table row on stdout.
//
//	--root DIR            repository root (default .)
//	--scenarios DIR       folder of scenario files (default fixtures/scenarios)
//
// # agenthub report
//
//	agenthub report merge [flags] A.json B.json…
//
// Report merge joins the JSON reports of the shards of one eval (every shard
// must be there, no run twice) and prints the merged report.
//
//	--format F            stdout format: table, markdown, json or junit (default table)
//	--out FILE            also write the merged JSON report
//
// # agenthub run
//
//	agenthub run [flags] "TASK"
//
// Run runs the agent once, live, against a model API and the image
// service. The final answer goes to stdout, the trace to stderr.
//
//	--base-url URL        OpenAI-compatible base URL (default https://open.bigmodel.cn/api/paas/v4)
//	--model M             model name (default glm-4-flash)
//	--api-key-env NAME    environment variable holding the key (default AGENTHUB_API_KEY);
//	                      the key is never a flag; a URL whose host is localhost or a
//	                      loopback address needs none
//	--image-url URL       image service base URL (default http://127.0.0.1:8080)
//	--workspace DIR       folder the tools may read and write (default .)
//	--prompt VARIANT      prompt variant: native-tools, react-json, react-text (default
//	                      react-text); native-tools uses the provider's native tool calling
//	--tool-choice C       with native-tools: tool_choice auto, none, required or a tool
//	                      name (default: not sent, the provider's auto)
//	--max-steps N         step budget, in model calls (default 5)
//	--timeout D           deadline of the whole run (default 1m0s)
//	--trace FILE          also write the trace as JSON Lines
//	-q                    no console trace on stderr
//	--stream              ask for the reply as a server-sent event stream ("stream":true with
//	                      usage) and assemble it; a stream cut before data: [DONE] is a
//	                      retryable stream_cut error
//	--temperature T       sampling temperature (default 0, greedy)
//	--no-temperature      send no temperature (OpenAI o-series and other reasoning models)
//	--top-p P             nucleus sampling, 0 to 1 (default: not sent)
//	--seed N              sampling seed, where the provider supports one (default: not sent)
//	--max-tokens N        most tokens per reply, sent as max_tokens (default 0: not sent;
//	                      OpenAI o-series refuse max_tokens)
//	--no-stop             send no stop sequence (OpenAI o-series refuse one); replies are
//	                      then not cut at "Observation:" either
//
// Without a sampling flag the request is the one the bundled suite records:
// temperature 0 and, for the text and JSON protocols, the stop sequence
// "\nObservation:" (native-tools sends no stop sequence). A provider that
// streams to a call without --stream is an error that says to use --stream.
//
// # agenthub serve-scripted
//
//	agenthub serve-scripted [--addr HOST:PORT] [--model NAME] [--prompt VARIANT] --script FILE.yaml
//
// Serve-scripted serves an OpenAI-compatible chat-completions endpoint on
// loopback that answers each call with the next turn of a script, prints
// its base URL on stdout and stops on an interrupt. Once the script is used
// up every call gets HTTP 500.
//
//	--script FILE         a YAML list of turns, or a scenario file (required)
//	--prompt VARIANT      the variant to serve when --script is a scenario scripting several
//	--addr HOST:PORT      listen address (default 127.0.0.1:0: any free port)
//	--model NAME          model name in replies (default scripted)
//
// # agenthub parse
//
//	agenthub parse [--protocol auto|text|json] [FILE|-]
//
// Parse parses one model reply (a file, or standard input) and prints the
// decision, or the parse error, as one JSON object.
//
//	--protocol P          auto (JSON when the reply starts with '{'), text or json (default auto)
//
// # agenthub trace
//
//	agenthub trace report RUN.jsonl
//
// Trace report summarises a JSON Lines trace written by run --trace: the
// outcome, model calls and tokens, a table of tool calls and failures, and
// the error codes seen.
//
// # agenthub version
//
//	agenthub version
//
// Version prints the agenthub version (also in meta.json and imaged's
// /healthz).
//
// # Environment
//
// Only cmd/agenthub reads the environment, and only two variables:
// AGENTHUB_API_KEY (or the one --api-key-env names), the provider's key for
// run and record; and CI, which when set (to anything) makes record refuse
// to run: CI replays only.
//
// # Exit codes
//
// Every command exits
//
//	0  success: every run passed, no regression; a decision parsed; run reached a final answer
//	1  something was judged and failed: a run failed, a regression against the baseline,
//	   a parse error, run ended without a final answer, --reparse changed decisions,
//	   record refused a recording that was incomplete or held a secret
//	2  bad usage or bad input (unknown flag or command, invalid scenario file, missing key,
//	   unreadable file, record with CI set) or a harness error (a run with the verdict error: stale cassette,
//	   replay miss, unused interactions)
//
// Messages go to stderr and start with "agenthub: ". (go run turns every
// non-zero code into 1: build the binary when the difference matters.)
package main
