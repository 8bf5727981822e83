package replay

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// MetaFile is the name of the sidecar beside a run's cassettes.
const MetaFile = "meta.json"

// ErrStaleCassette is wrapped by CheckPrompt (and Open with
// WithPromptHash) when the prompt a cassette was recorded with differs from
// the current one: every model request would miss, so the run stops before
// the first.
var ErrStaleCassette = errors.New("stale cassette: prompt changed")

// Meta is the meta.json sidecar of one recorded run.
type Meta struct {
	// RecordedAt is when the recording finished, RFC 3339 in UTC.
	RecordedAt string `json:"recorded_at"`
	// ProviderHost is the model provider's host (and port), never the full
	// base URL (which may carry credentials).
	ProviderHost string `json:"provider_host"`
	// ProviderBasePath is the URL path of the provider's base URL (for
	// example "/v1"); replay sends requests under the same path. Empty in
	// recordings made before it was written.
	ProviderBasePath string `json:"provider_base_path,omitempty"`
	// Model is the model name sent to the provider.
	Model string `json:"model"`
	// Prompt is the prompt variant's name.
	Prompt string `json:"prompt"`
	// PromptHash is PromptHash of the rendered system prompt and tool list.
	PromptHash string `json:"prompt_hash"`
	// AgentHubVersion is the version of agenthub that recorded the run.
	AgentHubVersion string `json:"agenthub_version"`
	// Scenario is the scenario's name; optional.
	Scenario string `json:"scenario,omitempty"`
	// Trial is the trial number; optional.
	Trial int `json:"trial,omitempty"`
}

// PromptHash returns the hex SHA-256 of a rendered system prompt and the
// names of the tools offered, in the order given. Each field is length
// prefixed, so no two different inputs share an encoding.
func PromptHash(systemPrompt string, toolNames ...string) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(systemPrompt)
	for _, t := range toolNames {
		field(t)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// encodeMeta renders meta.json.
func encodeMeta(m Meta) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write meta: %w", err)
	}
	return append(data, '\n'), nil
}

// decodeMeta parses meta.json; where names it in errors. Unknown fields
// are kept out (a newer agenthub's meta reads as far as this one knows).
func decodeMeta(data []byte, where string) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return Meta{}, fmt.Errorf("read meta %s: %w", where, err)
	}
	if m.Trial < 0 {
		return Meta{}, fmt.Errorf("read meta %s: trial %d is negative", where, m.Trial)
	}
	return m, nil
}

// CheckPrompt compares the prompt hash recorded in the recording's
// meta.json with wantHash (PromptHash of the prompt the run renders now).
// A difference is an error wrapping ErrStaleCassette that names the file
// and both hashes: every model request would miss, so the run stops before
// the first.
func (r *Recording) CheckPrompt(wantHash string) error {
	if r.meta.PromptHash != wantHash {
		return fmt.Errorf("%w (%s/%s: prompt %q recorded with hash %s, current hash %s)",
			ErrStaleCassette, r.Dir(), MetaFile, r.meta.Prompt, short(r.meta.PromptHash), short(wantHash))
	}
	return nil
}

// short abbreviates a hex hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return `""`
	}
	return h
}

// RecordedResponse is one recorded interaction's request line and
// response, as Responses returns it.
type RecordedResponse struct {
	// Method and Path are the request's method and escaped URL path.
	Method, Path string
	// Status is the recorded status code.
	Status int
	// Body is the response body, byte-exact.
	Body string
}
