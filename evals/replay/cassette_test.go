package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v2/cassette"
	"gopkg.in/dnaeon/go-vcr.v2/recorder"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		name, in string
		want     Mode
		wantErr  bool
	}{
		{name: "empty is the default, replay", in: "", want: ModeReplay},
		{name: "replay", in: "replay", want: ModeReplay},
		{name: "record", in: "record", want: ModeRecord},
		{name: "replay-or-record", in: "replay-or-record", want: ModeReplayOrRecord},
		{name: "case matters", in: "Record", wantErr: true},
		{name: "unknown", in: "live", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMode(tt.in)
			if tt.wantErr {
				require.ErrorContains(t, err, "parse mode: unknown mode")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestReplayMatchesBodies records two POSTs to one URL that differ only in
// body and replays them in swapped order: each must get its own reply. The
// control case shows go-vcr's default matcher (method and URL) giving the
// wrong replies on the same cassette.
func TestReplayMatchesBodies(t *testing.T) {
	srv := newChatServer(t)
	path := filepath.Join(t.TempDir(), "llm.yaml")
	first, second := chatBody("sys", "first question"), chatBody("sys", "second question")
	record(t, path, srv, first, second)
	srv.failOnCall.Store(true)

	t.Run("swapped order gets the right replies", func(t *testing.T) {
		c, err := Open(path, ModeReplay)
		require.NoError(t, err)
		// Reformatted JSON with other key order must still match.
		swapped := strings.Replace(second, `"model":"glm-4",`, "", 1)
		swapped = strings.Replace(swapped, "{", `{ "model" : "glm-4", `, 1)
		for _, tc := range []struct{ body, want string }{
			{swapped, "answer to second question"},
			{first, "answer to first question"},
		} {
			_, got, err := post(t, c.Client(), srv.URL+"/chat/completions", tc.body, nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, reply(t, got))
		}
		require.NoError(t, c.Close())
	})

	t.Run("control: go-vcr's default matcher replays the wrong reply", func(t *testing.T) {
		r, err := recorder.NewAsMode(strings.TrimSuffix(path, ".yaml"), recorder.ModeReplaying, nil)
		require.NoError(t, err)
		r.SkipRequestLatency = true
		// Saved cassettes name loopback hosts "localhost" (stableLoopback).
		_, got, err := post(t, &http.Client{Transport: r}, "http://localhost/chat/completions", second, nil)
		require.NoError(t, err)
		require.Equal(t, "answer to first question", reply(t, got), "the default matcher should ignore bodies")
	})
}

// TestReplayMultipartAcrossBoundaries records an upload and replays it with
// a different random boundary; a different image must miss.
func TestReplayMultipartAcrossBoundaries(t *testing.T) {
	var calls int
	srv := newImageServer(t, &calls)
	path := filepath.Join(t.TempDir(), "image.yaml")
	img := makePNG(t, 7)

	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
	require.NoError(t, err)
	ct, body := multipartBody(t, "recordingboundary111", "cat.png", img)
	resp, recorded := upload(t, c.Client(), srv.URL+"/resize", ct, body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, c.Close())
	calls = 0

	tests := []struct {
		name     string
		boundary string
		image    []byte
		wantMiss bool
	}{
		{name: "same parts, another boundary", boundary: "replayboundary222", image: img},
		{name: "another image misses", boundary: "recordingboundary111", image: makePNG(t, 8), wantMiss: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, ModeReplay)
			require.NoError(t, err)
			defer c.Discard()
			ct, body := multipartBody(t, tt.boundary, "cat.png", tt.image)
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/resize", bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", ct)
			resp, err := c.Client().Do(req)
			if tt.wantMiss {
				require.ErrorIs(t, err, ErrNoMatch)
				require.Contains(t, err.Error(), "SHA256")
				return
			}
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.True(t, bytes.Equal(recorded, got), "replayed image differs from the recorded one")
		})
	}
	require.Zero(t, calls, "replay reached the image service")
}

// TestMissError checks what a miss says: the cassette, the nearest
// unplayed interaction, the diff of the changed prompt and the hint.
func TestMissError(t *testing.T) {
	srv := newChatServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "llm.yaml")
	record(t, path, srv, chatBody("You are helpful.", "resize cat.png"), chatBody("You are helpful.", "done?"))
	srv.failOnCall.Store(true)
	const hint = "agenthub record --run '^resize$' --prompt react-text"

	t.Run("changed system prompt", func(t *testing.T) {
		c, err := Open(path, ModeReplay, WithRerecordHint(hint))
		require.NoError(t, err)
		_, _, err = post(t, c.Client(), srv.URL+"/chat/completions", chatBody("You are very helpful.", "resize cat.png"), nil)
		require.ErrorIs(t, err, ErrNoMatch)
		var miss *MissError
		require.ErrorAs(t, err, &miss)
		require.Equal(t, 0, miss.Nearest)
		msg := normalizeDiff(err.Error())
		for _, want := range []string{
			"replay POST /chat/completions: no recorded interaction matches in " + path,
			"nearest unplayed interaction: #0 (POST /chat/completions)",
			"(-recorded +live)",
			`- "content": string("You are helpful."),`,
			`+ "content": string("You are very helpful."),`,
			"re-record with: " + hint,
		} {
			require.Contains(t, msg, normalizeDiff(want))
		}
		misses := c.Misses()
		require.Len(t, misses, 1)
		require.ErrorIs(t, misses[0], ErrNoMatch)
		require.ErrorIs(t, c.Close(), ErrUnusedInteractions)
	})

	t.Run("more calls than recorded", func(t *testing.T) {
		c, err := Open(path, ModeReplay)
		require.NoError(t, err)
		for _, b := range []string{chatBody("You are helpful.", "resize cat.png"), chatBody("You are helpful.", "done?")} {
			_, _, err := post(t, c.Client(), srv.URL+"/chat/completions", b, nil)
			require.NoError(t, err)
		}
		_, _, err = post(t, c.Client(), srv.URL+"/chat/completions", chatBody("You are helpful.", "again"), nil)
		var miss *MissError
		require.ErrorAs(t, err, &miss)
		require.Equal(t, -1, miss.Nearest)
		require.Contains(t, err.Error(), "all 2 recorded POST /chat/completions interactions were already played")
		require.Contains(t, err.Error(), "re-record the cassette in record mode")
		require.NoError(t, c.Close())
	})

	t.Run("unknown path", func(t *testing.T) {
		c, err := Open(path, ModeReplay)
		require.NoError(t, err)
		defer c.Discard()
		_, _, err = post(t, c.Client(), srv.URL+"/embeddings", chatBody("x", "y"), nil)
		require.ErrorIs(t, err, ErrNoMatch)
		require.Contains(t, err.Error(), "the cassette has no POST /embeddings interaction")
	})
}

func TestUnusedInteractions(t *testing.T) {
	srv := newChatServer(t)
	path := filepath.Join(t.TempDir(), "llm.yaml")
	bodies := []string{chatBody("s", "one"), chatBody("s", "two"), chatBody("s", "three")}
	record(t, path, srv, bodies...)
	srv.failOnCall.Store(true)

	tests := []struct {
		name        string
		play        []string
		wantIndices []int
	}{
		{name: "all played", play: bodies},
		{name: "stopped after the first", play: bodies[:1], wantIndices: []int{1, 2}},
		{name: "skipped the middle", play: []string{bodies[0], bodies[2]}, wantIndices: []int{1}},
		{name: "nothing played", wantIndices: []int{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, ModeReplay)
			require.NoError(t, err)
			for _, b := range tt.play {
				_, _, err := post(t, c.Client(), srv.URL+"/chat/completions", b, nil)
				require.NoError(t, err)
			}
			err = c.Close()
			if tt.wantIndices == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnusedInteractions)
			var unused *UnusedError
			require.ErrorAs(t, err, &unused)
			if diff := cmp.Diff(tt.wantIndices, unused.Indices()); diff != "" {
				t.Errorf("unused indices mismatch (-want +got):\n%s", diff)
			}
			require.Contains(t, err.Error(), "close cassette "+path)
			require.NoError(t, c.Close(), "a second Close does nothing")
		})
	}
}

// TestRedaction records with a fake key in every place a key goes and
// proves the cassette holds no trace of it, while the live request and
// response the client holds are untouched.
func TestRedaction(t *testing.T) {
	const key = "sk-fake0123456789abcdefghijklmnop"
	srv := newChatServer(t)
	inner := srv.Server.Config.Handler
	srv.Server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "session="+key)
		w.Header().Set("Openai-Organization", "org-secret-1234")
		inner.ServeHTTP(w, r)
	})
	path := filepath.Join(t.TempDir(), "llm.yaml")
	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport), WithSecrets(key, "org-secret-1234", "proj-secret-5678"))
	require.NoError(t, err)
	header := http.Header{
		"Authorization":       {"Bearer " + key},
		"X-Api-Key":           {key},
		"Api-Key":             {key},
		"Cookie":              {"token=" + key},
		"Openai-Organization": {"org-secret-1234"},
		"Openai-Project":      {"proj-secret-5678"},
		"User-Agent":          {"agenthub/test " + key},
		"X-Stainless-Os":      {"Linux"},
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions?key="+key+"&api_key="+key+"&access_token="+key+"&stream=false", strings.NewReader(chatBody("s", "hi")))
	require.NoError(t, err)
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, c.Close())

	// The live objects were not redacted.
	require.Equal(t, "Bearer "+key, req.Header.Get("Authorization"))
	require.Equal(t, "session="+key, resp.Header.Get("Set-Cookie"))

	saved := string(readFile(t, path))
	for _, secret := range []string{key, "org-secret-1234", "proj-secret-5678", "fake0123456789"} {
		require.NotContains(t, saved, secret)
	}
	for _, gone := range []string{"User-Agent", "X-Stainless-Os"} {
		require.NotContains(t, saved, gone)
	}
	for _, want := range []string{"Authorization:", "X-Api-Key:", "Cookie:", "Set-Cookie:", "Openai-Project:", "key=REDACTED", "stream=false"} {
		require.Contains(t, saved, want)
	}

	// The redacted cassette replays a request carrying the live key.
	srv.failOnCall.Store(true)
	r, err := Open(path, ModeReplay)
	require.NoError(t, err)
	req2, err := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions?stream=false&access_token=other&api_key=x&key="+key, strings.NewReader(chatBody("s", "hi")))
	require.NoError(t, err)
	req2.Header.Set("Content-Type", "application/json")
	resp2, err := r.Client().Do(req2)
	require.NoError(t, err)
	resp2.Body.Close()
	require.NoError(t, r.Close())
}

// TestSecretScan makes recordings that leak a secret where redaction cannot
// see it (bodies): Close must fail, keep the old cassette and leave no file.
func TestSecretScan(t *testing.T) {
	const key = "test-key-ABCDEFGH12345678"
	tests := []struct {
		name    string
		respond string
		secrets []string
		want    string
	}{
		{name: "the key in use echoed in a body", respond: "your key is " + key, secrets: []string{key}, want: "secret in use"},
		{name: "the key URL-escaped", respond: "k=" + strings.ReplaceAll(key, "-", "%2D"), secrets: []string{strings.ReplaceAll(key, "-", "%2D")}, want: "secret in use"},
		{name: "an OpenAI-shaped key", respond: `{"debug":"sk-proj-abcdefghij1234567890klmn"}`, want: "key-shaped string"},
		{name: "a bearer token", respond: "Authorization: Bearer abc.def.ghi", want: "bearer token"},
		{name: "the key inside a binary body", respond: "\xff\xfe\x00" + key + "\xff", secrets: []string{key}, want: "response body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, "application/octet-stream", []byte(tt.respond))
			dir := t.TempDir()
			path := filepath.Join(dir, "llm.yaml")
			old := []byte("---\nversion: 1\ninteractions: []\n")
			require.NoError(t, os.WriteFile(path, old, 0o644))

			c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport), WithSecrets(tt.secrets...))
			require.NoError(t, err)
			_, _, err = post(t, c.Client(), srv.URL+"/x", `{}`, nil)
			require.NoError(t, err)
			err = c.Close()
			require.ErrorIs(t, err, ErrSecretLeak)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), key[5:], "the error must not print the secret")
			require.Equal(t, old, readFile(t, path), "old cassette changed")
			require.Equal(t, []string{"llm.yaml"}, dirFiles(t, dir))
		})
	}

	t.Run("control: a clean body passes the scan", func(t *testing.T) {
		srv := newRawServer(t, "text/plain", []byte("a task-1234567890abcdefghijkl id is not a key; Bearer REDACTED is the placeholder"))
		path := filepath.Join(t.TempDir(), "llm.yaml")
		c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport), WithSecrets(key, "short"))
		require.NoError(t, err)
		_, _, err = post(t, c.Client(), srv.URL+"/x", `{}`, http.Header{"Authorization": {"Bearer " + key}})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	})
}

// TestAtomicSave: a failed run (Discard) leaves the old cassette byte for
// byte and no temporary file; a good run replaces it, never appends.
func TestAtomicSave(t *testing.T) {
	srv := newChatServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "llm.yaml")
	record(t, path, srv, chatBody("s", "old one"), chatBody("s", "old two"))
	old := readFile(t, path)

	for _, mode := range []Mode{ModeRecord, ModeReplayOrRecord} {
		t.Run(string(mode)+" discarded", func(t *testing.T) {
			c, err := Open(path, mode, WithTransport(srv.Client().Transport))
			require.NoError(t, err)
			_, _, err = post(t, c.Client(), srv.URL+"/chat/completions", chatBody("s", "new"), nil)
			require.NoError(t, err)
			require.NoError(t, c.Discard())
			require.NoError(t, c.Close(), "Close after Discard does nothing")
			require.Equal(t, old, readFile(t, path))
			require.Equal(t, []string{"llm.yaml"}, dirFiles(t, dir))
		})
	}

	t.Run("record replaces, never appends", func(t *testing.T) {
		record(t, path, srv, chatBody("s", "new"))
		c, err := Open(path, ModeReplay)
		require.NoError(t, err)
		infos := c.Interactions()
		require.Len(t, infos, 1)
		require.NoError(t, c.Discard())
		require.NotContains(t, string(readFile(t, path)), "old one")
		require.Equal(t, []string{"llm.yaml"}, dirFiles(t, dir))
	})
}

// TestReplayNeverTouchesNetwork: the server fails the test if called, and
// the real transport given is ignored in replay.
func TestReplayNeverTouchesNetwork(t *testing.T) {
	srv := newChatServer(t)
	path := filepath.Join(t.TempDir(), "llm.yaml")
	record(t, path, srv, chatBody("s", "q"))
	srv.failOnCall.Store(true)
	before := srv.calls.Load()

	c, err := Open(path, ModeReplay, WithTransport(srv.Client().Transport))
	require.NoError(t, err)
	_, got, err := post(t, c.Client(), srv.URL+"/chat/completions", chatBody("s", "q"), nil)
	require.NoError(t, err)
	require.Equal(t, "answer to q", reply(t, got))
	_, _, err = post(t, c.Client(), srv.URL+"/chat/completions", chatBody("s", "not recorded"), nil)
	require.ErrorIs(t, err, ErrNoMatch)
	require.NoError(t, c.Close())
	require.Equal(t, before, srv.calls.Load())
}

// TestReplayNeverSleeps replays a cassette whose interactions took 10 s
// each when recorded.
func TestReplayNeverSleeps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.yaml")
	var ins []*cassette.Interaction
	for i := range 3 {
		ins = append(ins, &cassette.Interaction{
			Request:  cassette.Request{Method: "GET", URL: "http://h/slow?i=" + string(rune('0'+i))},
			Response: cassette.Response{Code: 200, Status: "200 OK", Body: "ok", Duration: 10 * time.Second},
		})
	}
	data, err := encodeCassette(ins)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))

	c, err := Open(path, ModeReplay)
	require.NoError(t, err)
	start := time.Now()
	for i := range 3 {
		resp, err := c.Client().Get("http://h/slow?i=" + string(rune('0'+i)))
		require.NoError(t, err)
		resp.Body.Close()
	}
	elapsed := time.Since(start)
	require.Less(t, elapsed, time.Second, "replay waited for recorded latency")
	require.NoError(t, c.Close())
	for _, in := range c.Interactions() {
		require.Equal(t, 10000.0, in.DurationMS)
		require.True(t, in.Played)
	}
}

// TestReplayedHeadersAreCopies edits the headers of replayed and recorded
// responses; the saved cassette must not change.
func TestReplayedHeadersAreCopies(t *testing.T) {
	srv := newChatServer(t)
	path := filepath.Join(t.TempDir(), "llm.yaml")

	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
	require.NoError(t, err)
	resp, _, err := post(t, c.Client(), srv.URL+"/chat/completions", chatBody("s", "q"), nil)
	require.NoError(t, err)
	resp.Header.Set("X-Request-Id", "edited-by-client")
	require.NoError(t, c.Close())
	require.NotContains(t, string(readFile(t, path)), "edited-by-client")

	srv.failOnCall.Store(true)
	c, err = Open(path, ModeReplayOrRecord, WithTransport(srv.Client().Transport))
	require.NoError(t, err)
	resp, _, err = post(t, c.Client(), srv.URL+"/chat/completions", chatBody("s", "q"), nil)
	require.NoError(t, err)
	require.Equal(t, "req-1", resp.Header.Get("X-Request-Id"))
	resp.Header.Set("X-Request-Id", "edited-in-replay")
	require.NoError(t, c.Close())
	require.NotContains(t, string(readFile(t, path)), "edited-in-replay")
}

func TestEmptyCassette(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "image.yaml")
	c, err := Open(path, ModeRecord)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Equal(t, "---\nversion: 1\ninteractions: []\n", string(readFile(t, path)))

	c, err = Open(path, ModeReplay)
	require.NoError(t, err)
	require.Empty(t, c.Interactions())
	require.NoError(t, c.Close())
}

// TestReplayOrRecord keeps what matches, records what is missing, drops
// what this run did not use, and saves in the order of use.
func TestReplayOrRecord(t *testing.T) {
	srv := newChatServer(t)
	path := filepath.Join(t.TempDir(), "llm.yaml")
	record(t, path, srv, chatBody("s", "a"), chatBody("s", "stale"), chatBody("s", "c"))
	before := srv.calls.Load()

	c, err := Open(path, ModeReplayOrRecord, WithTransport(srv.Client().Transport))
	require.NoError(t, err)
	for _, q := range []string{"c", "new", "a"} {
		_, got, err := post(t, c.Client(), srv.URL+"/chat/completions", chatBody("s", q), nil)
		require.NoError(t, err)
		require.Equal(t, "answer to "+q, reply(t, got))
	}
	require.Equal(t, before+1, srv.calls.Load(), "only the missing interaction goes live")
	require.NoError(t, c.Close())

	var live []bool
	for _, in := range c.Interactions() {
		live = append(live, in.Live)
	}
	if diff := cmp.Diff([]bool{false, true, false}, live); diff != "" {
		t.Errorf("live flags mismatch (-want +got):\n%s", diff)
	}
	srv.failOnCall.Store(true)
	r, err := Open(path, ModeReplay)
	require.NoError(t, err)
	for _, q := range []string{"c", "new", "a"} {
		_, got, err := post(t, r.Client(), srv.URL+"/chat/completions", chatBody("s", q), nil)
		require.NoError(t, err)
		require.Equal(t, "answer to "+q, reply(t, got))
	}
	require.NoError(t, r.Close(), "the stale interaction was dropped and the order is the order of use")
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.yaml")
	require.NoError(t, os.WriteFile(corrupt, []byte("version: 1\ninteractions: [\n"), 0o644))
	badVersion := filepath.Join(dir, "v9.yaml")
	require.NoError(t, os.WriteFile(badVersion, []byte("version: 9\ninteractions: []\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755))

	tests := []struct {
		name   string
		path   string
		mode   Mode
		opts   []Option
		is     error
		substr string
	}{
		{name: "missing cassette in replay", path: filepath.Join(dir, "none.yaml"), mode: ModeReplay, opts: []Option{WithRerecordHint("agenthub record --run x")}, is: fs.ErrNotExist, substr: "re-record with: agenthub record --run x"},
		{name: "zero mode is replay", path: filepath.Join(dir, "none.yaml"), is: fs.ErrNotExist},
		{name: "corrupt cassette", path: corrupt, mode: ModeReplay, substr: "open cassette " + corrupt},
		{name: "corrupt cassette in replay-or-record", path: corrupt, mode: ModeReplayOrRecord, substr: "open cassette " + corrupt},
		{name: "unknown version", path: badVersion, mode: ModeReplay, substr: "unsupported cassette version 9"},
		{name: "unknown mode", path: corrupt, mode: "live", substr: "unknown mode"},
		{name: "path without .yaml", path: filepath.Join(dir, "llm.yml"), mode: ModeRecord, substr: "must end in .yaml"},
		{name: "cassette over the size limit", path: corrupt, mode: ModeReplay, opts: []Option{WithMaxCassetteBytes(4)}, substr: "over the 4-byte cassette limit"},
		{name: "cassette is a folder", path: filepath.Join(dir, "sub.yaml"), mode: ModeReplay, substr: "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(tt.path, tt.mode, tt.opts...)
			require.Error(t, err)
			require.Nil(t, c)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			require.Contains(t, err.Error(), tt.substr)
		})
	}
	require.Equal(t, []string{"corrupt.yaml", "sub.yaml", "v9.yaml"}, dirFiles(t, dir), "a failed Open leaves no file")
}

func TestClosedCassetteRefusesRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.yaml")
	c, err := Open(path, ModeRecord)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = c.Client().Get("http://h/x")
	require.ErrorIs(t, err, ErrClosed)
}

func TestRealTransportErrorIsReturned(t *testing.T) {
	boom := errors.New("connection refused")
	path := filepath.Join(t.TempDir(), "llm.yaml")
	c, err := Open(path, ModeRecord, WithTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, boom })))
	require.NoError(t, err)
	_, err = c.Client().Get("http://h/x")
	require.ErrorIs(t, err, boom)
	require.NoError(t, c.Discard())
	_, err = os.Stat(path)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestRequestBodyReadError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.yaml")
	c, err := Open(path, ModeRecord)
	require.NoError(t, err)
	defer c.Discard()
	req, err := http.NewRequest(http.MethodPost, "http://h/x", io.NopCloser(iotest.ErrReader(errors.New("read failed"))))
	require.NoError(t, err)
	_, err = c.Transport().RoundTrip(req)
	require.ErrorContains(t, err, "read request body")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestConcurrentReplay replays distinct requests from many goroutines: each
// gets its own reply and every interaction is played once.
func TestConcurrentReplay(t *testing.T) {
	srv := newChatServer(t)
	path := filepath.Join(t.TempDir(), "llm.yaml")
	var bodies []string
	for i := range 20 {
		bodies = append(bodies, chatBody("s", fmt.Sprintf("q%d", i)))
	}
	record(t, path, srv, bodies...)
	srv.failOnCall.Store(true)

	c, err := Open(path, ModeReplay)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := len(bodies) - 1; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// No require here: FailNow must not run off the test goroutine.
			resp, err := c.Client().Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(bodies[i]))
			if err != nil {
				t.Errorf("q%d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			var r struct{ Reply string }
			if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Reply != fmt.Sprintf("answer to q%d", i) {
				t.Errorf("q%d got %q, %v", i, r.Reply, err)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, c.Close())
}

// FuzzOpenReplay: any cassette file either fails to open with an error or
// opens and answers requests without panicking.
func FuzzOpenReplay(f *testing.F) {
	seed, err := encodeCassette([]*cassette.Interaction{{
		Request:  cassette.Request{Method: "POST", URL: "http://h/chat/completions", Body: `{"a":1}`, Headers: http.Header{"Content-Type": {"application/json"}}},
		Response: cassette.Response{Code: 200, Body: "\x89PNG", Duration: time.Second},
	}})
	require.NoError(f, err)
	f.Add(seed)
	f.Add([]byte("---\nversion: 1\ninteractions: []\n"))
	f.Add([]byte("version: 1\ninteractions: [null]\n"))
	f.Add([]byte("version: 1\ninteractions:\n - request: {url: \"%zz\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "llm.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Open(path, ModeReplay)
		if err != nil {
			return
		}
		resp, err := c.Client().Post("http://h/chat/completions", "application/json", strings.NewReader(`{"a":1}`))
		if err == nil {
			resp.Body.Close()
		}
		c.Close()
	})
}
