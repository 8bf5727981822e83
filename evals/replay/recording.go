package replay

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// DecisionsFile is the sidecar, beside a run's cassettes, that holds each
// model reply of the recording and the decision the parser made of it then
// (written by the harness, checked by `agenthub eval --reparse`).
const DecisionsFile = "decisions.json"

// RunID names one recorded run: the folder
// <cassettes>/<Scenario>/<Prompt>/<Trial>.
type RunID struct {
	Scenario, Prompt string
	// Trial is 1-based.
	Trial int
}

// String returns "<scenario>/<prompt>/<trial>".
func (id RunID) String() string { return id.Scenario + "/" + id.Prompt + "/" + strconv.Itoa(id.Trial) }

// rel is the run's folder relative to the cassette folder (slash form, as
// os.Root takes it).
func (id RunID) rel() string { return path.Join(id.Scenario, id.Prompt, strconv.Itoa(id.Trial)) }

func (id RunID) check() error {
	for _, part := range []string{id.Scenario, id.Prompt} {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, `/\`) || strings.HasPrefix(part, ".") {
			return fmt.Errorf("recording %s: %q is not a folder name", id, part)
		}
	}
	if id.Trial < 1 {
		return fmt.Errorf("recording %s: trial %d is not 1-based", id, id.Trial)
	}
	return nil
}

// Recording owns the folder of one recorded run:
// <cassettes>/<scenario>/<prompt>/<trial>/ with LLMCassette, ImageCassette,
// MetaFile and DecisionsFile. Every file is reached through an *os.Root on
// the cassette folder, so no symlink or ".." anywhere below it can make a
// recording read or write outside it.
//
// In ModeReplay the folder must hold a recording of exactly this run (its
// meta.json names the same scenario, prompt and trial, and decisions.json
// exists). In the record modes a Recording is written into a hidden stage
// folder beside the run's folder (".<trial>.tmp-…"), and only Commit puts
// it in place.
//
// A recording is complete and replayable — and only then does Close let it
// be committed — when:
//  1. every request the run sent through its cassettes has its interaction
//     recorded (none lost);
//  2. every recorded response was read to its end within the size cap
//     (WithMaxResponseBytes), or is a transport failure caused by the
//     request's own deadline (the run deadline or a tool timeout cut it off;
//     it replays as the replaying request's deadline, see
//     WithDeadlineClock), or a
//     server-sent-event stream the provider broke off after its headers
//     (kept with its events and the break, see StreamErrorHeader, which
//     replays the same way); any other transport failure (no such host,
//     connection refused or reset, a plain body cut short, a response over
//     the cap) is not replayable as what the provider would answer;
//  3. at least one model call got an HTTP response (a run whose model calls
//     all failed at the transport level recorded nothing of the model).
//
// The harness adds two conditions before it commits: a replay of the
// staged recording (Verify) consumes every interaction and ends as the live
// run did; and, with a real provider, at least one model call got a reply
// (a run where every call ended in an API error records an outage).
// Anything else leaves the committed recording untouched.
type Recording struct {
	id   RunID
	base *os.Root // the cassette folder
	fs   swapFS   // base, or a fault-injecting double in tests
	mode Mode

	work    string   // the folder the cassettes are in, relative to base
	workDir *os.Root // root on work
	meta    Meta     // replay: as read
	llm     *Cassette
	image   *Cassette
	closed  bool
}

// OpenRecording opens the recording of run id inside the cassette folder
// base, in mode. It first completes a swap a crash interrupted (see
// Commit). In ModeReplay it reads meta.json and fails with an error
// wrapping fs.ErrNotExist when there is no recording, and with a plain
// error when the folder records another run or lacks decisions.json. In
// the record modes it creates the stage folder (ModeReplayOrRecord copies
// the old cassettes into it first). opts configure both cassettes.
func OpenRecording(base *os.Root, id RunID, mode Mode, opts ...Option) (*Recording, error) {
	if err := id.check(); err != nil {
		return nil, err
	}
	if mode == "" {
		mode = ModeReplay
	}
	r := &Recording{id: id, base: base, fs: base, mode: mode}
	if err := r.recover(); err != nil {
		return nil, err
	}
	if mode == ModeReplay {
		r.work = id.rel()
		if err := r.readSidecars(); err != nil {
			return nil, err
		}
	} else {
		r.sweep()
		if err := r.stage(); err != nil {
			return nil, err
		}
	}
	if err := r.openCassettes(opts); err != nil {
		r.Discard()
		return nil, err
	}
	return r, nil
}

// Dir returns the path of the run's folder (the cassette folder's path
// joined with <scenario>/<prompt>/<trial>), for messages.
func (r *Recording) Dir() string { return r.display(r.id.rel()) }

func (r *Recording) display(rel string) string {
	return path.Join(strings.ReplaceAll(r.base.Name(), `\`, "/"), rel)
}

// ID returns the run the recording is of.
func (r *Recording) ID() RunID { return r.id }

// LLM returns the model provider's cassette.
func (r *Recording) LLM() *Cassette { return r.llm }

// Image returns the image service's cassette.
func (r *Recording) Image() *Cassette { return r.image }

// Meta returns meta.json as read in ModeReplay (the zero Meta in the record
// modes).
func (r *Recording) Meta() Meta { return r.meta }

// BasePath returns the URL path of the provider's base URL the run was
// recorded with (for example "/v1" or "/api/paas/v4"): the model client
// must send the same path in replay. It is meta.json's provider_base_path,
// or, for recordings made before that field, the path of the first model
// request without "/chat/completions"; "" when neither is known.
func (r *Recording) BasePath() string {
	if r.meta.ProviderBasePath != "" {
		return r.meta.ProviderBasePath
	}
	for _, it := range r.llm.Interactions() {
		return strings.TrimSuffix(it.Path, "/chat/completions")
	}
	return ""
}

// Decisions returns the bytes of the recording's decisions.json.
func (r *Recording) Decisions() ([]byte, error) {
	data, err := readRegular(r.base, path.Join(r.work, DecisionsFile), path.Join(r.Dir(), DecisionsFile), maxDecisionsBytes, "decisions.json")
	if err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	return data, nil
}

func (r *Recording) readSidecars() error {
	data, err := readRegular(r.base, path.Join(r.work, MetaFile), r.display(path.Join(r.work, MetaFile)), maxMetaBytes, "meta.json")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no recording in %s: %w", r.Dir(), fs.ErrNotExist)
		}
		return fmt.Errorf("read meta: %w", err)
	}
	if r.meta, err = decodeMeta(data, r.display(path.Join(r.work, MetaFile))); err != nil {
		return err
	}
	m := r.meta
	// A recording copied into another folder is not another trial.
	if (m.Scenario != "" && m.Scenario != r.id.Scenario) || (m.Prompt != "" && m.Prompt != r.id.Prompt) || (m.Trial != 0 && m.Trial != r.id.Trial) {
		return fmt.Errorf("%s/%s says it records %s/%s/%d: a copied or moved recording", r.Dir(), MetaFile, m.Scenario, m.Prompt, m.Trial)
	}
	if fi, err := r.base.Lstat(path.Join(r.work, DecisionsFile)); err != nil {
		return fmt.Errorf("%w (written with the cassettes)", err)
	} else if err := regularWithin(fi, path.Join(r.Dir(), DecisionsFile), maxDecisionsBytes, "decisions.json"); err != nil {
		return err
	}
	return nil
}

// stage creates the hidden stage folder beside the run's folder.
func (r *Recording) stage() error {
	parent := path.Dir(r.id.rel())
	if err := r.base.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("stage recording %s: %w", r.Dir(), err)
	}
	r.work = path.Join(parent, "."+strconv.Itoa(r.id.Trial)+".tmp-"+hex.EncodeToString(randomBytes()))
	if err := r.base.Mkdir(r.work, 0o755); err != nil {
		return fmt.Errorf("stage recording %s: %w", r.Dir(), err)
	}
	if r.mode != ModeReplayOrRecord {
		return nil
	}
	for _, name := range []string{LLMCassette, ImageCassette} {
		data, err := readRegular(r.base, path.Join(r.id.rel(), name), path.Join(r.Dir(), name), DefaultMaxCassetteBytes, "cassette")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = r.base.WriteFile(path.Join(r.work, name), data, 0o644)
		}
		if err != nil {
			r.base.RemoveAll(r.work)
			return fmt.Errorf("stage recording %s: %w", r.Dir(), err)
		}
	}
	return nil
}

func (r *Recording) openCassettes(opts []Option) error {
	var err error
	r.workDir, err = r.base.OpenRoot(r.work)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no recording in %s: %w", r.Dir(), err)
		}
		return fmt.Errorf("open recording %s: %w", r.Dir(), err)
	}
	// Messages name the run's folder, not the hidden stage.
	dir := r.display(r.id.rel())
	model := append(opts[:len(opts):len(opts)], func(c *config) {
		if c.modelMax > 0 {
			c.maxBody = c.modelMax
		}
	})
	if r.llm, err = open(r.workDir, "", LLMCassette, path.Join(dir, LLMCassette), r.mode, model); err != nil {
		return err
	}
	r.image, err = open(r.workDir, "", ImageCassette, path.Join(dir, ImageCassette), r.mode, opts)
	return err
}

// Close ends a recording. In ModeReplay it closes both cassettes and
// returns the first error (unused interactions: an *UnusedError). In the
// record modes it saves both cassettes into the stage, checks that the
// recording is complete and replayable (see Recording), and writes
// decisions (the bytes of decisions.json) and meta.json beside them;
// a recording that is not complete gives an error wrapping ErrIncomplete
// that names the cause. The stage then stays until Commit, Keep or Discard.
func (r *Recording) Close(meta Meta, decisions []byte) error {
	if r.closed {
		return nil
	}
	if r.mode == ModeReplay {
		r.closed = true
		defer r.workDir.Close()
		return errors.Join(r.llm.Close(), r.image.Close())
	}
	if err := errors.Join(r.llm.Close(), r.image.Close()); err != nil {
		if errors.Is(err, ErrSecretLeak) {
			return fmt.Errorf("%w (nothing was saved, not even with --keep-failed: a cassette must never hold a key; if the text is not a real key, change the scenario's task or script that carries it)", err)
		}
		return err
	}
	if err := r.complete(); err != nil {
		return fmt.Errorf("%w: %w", ErrIncomplete, err)
	}
	if err := scanBody(decisions, path.Join(r.Dir(), DecisionsFile), r.llm.cfg.secrets); err != nil {
		return fmt.Errorf("%w (nothing was saved, not even with --keep-failed: a recording must never hold a key)", err)
	}
	if err := r.base.WriteFile(path.Join(r.work, DecisionsFile), decisions, 0o644); err != nil {
		return fmt.Errorf("record %s: %w", r.id, err)
	}
	data, err := encodeMeta(meta)
	if err == nil {
		err = r.base.WriteFile(path.Join(r.work, MetaFile), data, 0o644)
	}
	if err != nil {
		return fmt.Errorf("record %s: %w", r.id, err)
	}
	return nil
}

// complete checks conditions 2 and 3 of a complete recording (condition 1
// is the cassettes' own Close).
func (r *Recording) complete() error {
	answered := 0
	for _, c := range []*Cassette{r.llm, r.image} {
		for _, it := range c.Interactions() {
			if it.Status != TransportErrorStatus {
				if c == r.llm {
					answered++
				}
				continue
			}
			if !isDeadline(it.TransportError) {
				return fmt.Errorf("%s #%d (%s %s): %s", c.name, it.Index, it.Method, it.Path, it.TransportError)
			}
		}
	}
	if answered == 0 {
		why := "the run made no model call"
		if its := r.llm.Interactions(); len(its) > 0 {
			why = "every model call failed before a response: " + its[0].TransportError
			if isDeadline(its[0].TransportError) {
				why = "every model call was cut off by its deadline before a response came"
			}
		}
		return errors.New(why)
	}
	return nil
}

// isDeadline reports whether a recorded transport failure is a request cut
// off by its own deadline (which replays the same way).
func isDeadline(msg string) bool {
	return msg == "context: "+contextDeadline
}

// contextDeadline is context.DeadlineExceeded's text.
const contextDeadline = "context deadline exceeded"

// Verify opens the staged recording (after a successful Close) in
// ModeReplay, for the harness to replay before Commit.
func (r *Recording) Verify(opts ...Option) (*Recording, error) {
	if r.mode == ModeReplay {
		return nil, fmt.Errorf("verify %s: not a recording being made", r.id)
	}
	v := &Recording{id: r.id, base: r.base, fs: r.fs, mode: ModeReplay, work: r.work}
	if err := v.readSidecars(); err != nil {
		return nil, fmt.Errorf("verify %s: %w", r.id, err)
	}
	if err := v.openCassettes(opts); err != nil {
		return nil, fmt.Errorf("verify %s: %w", r.id, err)
	}
	return v, nil
}

// Discard ends a recording without keeping it: the stage folder is
// removed and the committed recording, if any, is left as it was. It is
// safe to call after Commit or Keep (then it does nothing) and more than
// once, so `defer rec.Discard()` after OpenRecording is right.
func (r *Recording) Discard() {
	if r.llm != nil {
		r.llm.Discard()
	}
	if r.image != nil {
		r.image.Discard()
	}
	if r.workDir != nil {
		r.workDir.Close()
	}
	if r.mode != ModeReplay && !r.closed && r.work != "" {
		r.base.RemoveAll(r.work)
		// Folders created for a first recording that was not kept go too
		// (Remove refuses a folder that is not empty).
		parent := path.Dir(r.id.rel())
		r.base.Remove(parent)
		r.base.Remove(path.Dir(parent))
	}
	r.closed = true
}

// Keep moves the stage of a recording that was not committed (for example
// one Close refused) to dir/<scenario>/<prompt>/<trial>, replacing what was
// there, for inspection: never over the committed recording. dir must not
// be inside the cassette folder's run folders.
func (r *Recording) Keep(dir string) (string, error) {
	if r.mode == ModeReplay || r.closed {
		return "", fmt.Errorf("keep %s: nothing staged", r.id)
	}
	if inside, err := within(dir, r.base.Name()); err != nil || inside {
		if err == nil {
			err = fmt.Errorf("%s is inside the cassette folder %s: a refused recording is never kept over or among committed ones", dir, r.base.Name())
		}
		return "", fmt.Errorf("keep %s: %w", r.id, err)
	}
	if r.workDir != nil {
		r.workDir.Close()
	}
	dst := path.Join(dir, r.id.rel())
	if err := os.MkdirAll(path.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("keep %s: %w", r.id, err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return "", fmt.Errorf("keep %s: %w", r.id, err)
	}
	if err := os.Rename(r.display(r.work), dst); err != nil {
		return "", fmt.Errorf("keep %s: %w", r.id, err)
	}
	r.closed = true
	return dst, nil
}

// within reports whether dir, once symlinks in its existing part are
// resolved, is base or inside it.
func within(dir, base string) (bool, error) {
	d, err := realPath(dir)
	if err != nil {
		return false, err
	}
	b, err := realPath(base)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(b, d)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)), nil
}

// realPath is the absolute form of p with the symlinks of its longest
// existing prefix resolved (the rest may not exist yet).
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		}
		if filepath.Dir(cur) == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}
