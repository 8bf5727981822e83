package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// chatServer is a fake model provider: it answers a JSON chat request with
// a reply derived from the last message, so that a wrong replay is visible.
// It counts its calls; after failOnCall is set, any call fails the test.
type chatServer struct {
	*httptest.Server
	calls      atomic.Int64
	failOnCall atomic.Bool
}

func newChatServer(t testing.TB) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		if s.failOnCall.Load() {
			t.Errorf("network touched in replay: %s %s", r.Method, r.URL)
			http.Error(w, "no network in replay", http.StatusTeapot)
			return
		}
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-1")
		json.NewEncoder(w).Encode(map[string]string{"reply": "answer to " + req.Messages[len(req.Messages)-1].Content})
	}))
	t.Cleanup(s.Close)
	return s
}

// chatBody is a chat request body; extra fields are merged in.
func chatBody(system, user string) string {
	b, _ := json.Marshal(map[string]any{
		"model":    "glm-4",
		"messages": []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}},
	})
	return string(b)
}

// post sends a JSON POST through client and returns the status and body.
func post(t *testing.T, client *http.Client, url, body string, header http.Header) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(got), nil
}

// record records the given JSON bodies, POSTed in order to srv's
// /chat/completions, into path.
func record(t *testing.T, path string, srv *chatServer, bodies ...string) {
	t.Helper()
	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
	require.NoError(t, err)
	for _, b := range bodies {
		_, _, err := post(t, c.Client(), srv.URL+"/chat/completions", b, nil)
		require.NoError(t, err)
	}
	require.NoError(t, c.Close())
}

// reply extracts the reply field of a chat response.
func reply(t *testing.T, body string) string {
	t.Helper()
	var r struct{ Reply string }
	require.NoError(t, json.Unmarshal([]byte(body), &r), "body %q", body)
	return r.Reply
}

// dirFiles lists the names in dir, sorted.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// normalizeDiff undoes cmp.Diff's deliberately unstable spacing.
func normalizeDiff(s string) string {
	s = strings.ReplaceAll(s, "\u00a0", " ")
	return strings.Join(strings.Fields(s), " ")
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
