package replay_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenthub/agenthub/evals/replay"
)

// ExampleOpen records one request against a live server, then replays it
// offline; a request that was not recorded fails with ErrNoMatch.
func ExampleOpen() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"reply":"hello"}`)
	}))
	defer srv.Close()
	root, _ := os.MkdirTemp("", "cassettes")
	defer os.RemoveAll(root)
	path := filepath.Join(root, "greet", "react-text", "1", replay.LLMCassette)

	// Record: live, through the real transport; saved atomically on Close.
	rec, err := replay.Open(path, replay.ModeRecord, replay.WithTransport(http.DefaultTransport), replay.WithSecrets("test-key-123456"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rec.Discard() // no-op after Close; keeps the old cassette on failure
	resp, err := rec.Client().Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	if err := rec.Close(); err != nil {
		fmt.Println(err)
		return
	}

	// Replay: offline. Key order and whitespace in JSON bodies do not matter.
	srv.Close()
	c, err := replay.Open(path, replay.ModeReplay, replay.WithRerecordHint("agenthub record --run '^greet$'"))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err = c.Client().Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{ "messages": [ {"content": "hi", "role": "user"} ] }`))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))

	_, err = c.Client().Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"bye"}]}`))
	fmt.Println(errors.Is(err, replay.ErrNoMatch), len(c.Misses()))
	fmt.Println(c.Close())
	// Output:
	// {"reply":"hello"}
	// true 1
	// <nil>
}
