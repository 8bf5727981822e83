// Package replay records and replays the HTTP traffic of an agent run as
// cassettes: one YAML file per service per scenario run, laid out as
// cassettes/<scenario>/<prompt>/<trial>/{llm,image}.yaml with a meta.json
// sidecar beside them.
//
// A Cassette hands out an *http.Client (or http.RoundTripper) that the model
// client and the tools use unchanged; live runs, recording and replay differ
// only in that transport. The backend is go-vcr v2; nothing outside this
// package sees it.
//
// Requests are matched on a canonical form: method, URL path and sorted
// query (host and port ignored), the Content-Type media type, and the body
// compared as parsed JSON, as multipart parts (field name, file name, part
// content type, SHA-256 of the content; never the boundary), as a sorted
// form, or byte for byte. Interactions are consumed in order: a request
// takes the first unplayed interaction that matches it.
//
// A Recording owns one run's folder — both cassettes, meta.json (with the
// provider's base path, the prompt hash and the model) and decisions.json —
// and everything about writing it: the hidden stage folder a recording is
// written to, the rule that says when a recording is complete and
// replayable (see Recording), and the journaled swap that puts it in place
// so that a crash at any step leaves the old or the new recording whole
// (see Recording.Commit). Every file is reached through an *os.Root on the
// cassette folder; go-vcr itself never touches the disk.
//
// While recording, response bodies are read on the wire under a size cap
// before go-vcr buffers them (WithMaxResponseBytes; compressed bodies are
// counted after inflating), and cassette files are refused above
// DefaultMaxCassetteBytes when loaded.
//
// A server-sent-event stream (Content-Type text/event-stream) is recorded
// deliberately: go-vcr keeps a response body whole, so the stream is kept
// byte for byte as the body and the arrival time of each event is kept in
// the EventTimesHeader response header. Replay serves the whole body at
// once — the client reads the events in order and nothing sleeps — and
// reports take the time to first token from the first recorded offset
// (InteractionInfo.EventMS). A stream the provider breaks off after its
// headers (the connection closes before "data: [DONE]") is recorded too:
// the events that came are the body and the read error is kept in the
// StreamErrorHeader header, so the caller reads the same events and then
// the same error, while recording and in replay.
//
// Replay never touches the network and never sleeps; a request without a
// match fails with an error wrapping ErrNoMatch that names the cassette, the
// nearest unplayed interaction, a diff of what changed and the command that
// re-records it. Recording redacts secrets on copies, re-reads the saved file
// and scans it for the keys in use, and replaces the old cassette atomically
// only when Close is called.
package replay
