package secret

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestWriterSplitWrites writes a trace in two pieces cut at every byte:
// the keys are masked whatever the cut.
func TestWriterSplitWrites(t *testing.T) {
	const key = "test-key-ABCDEFGH12345678"
	in := "[step 1] model call failed: 401 for key " + key + "\n" +
		"[step 2] tool echo(" + zhipu + ")\n" +
		"■ llm_error after 2 model calls: Bearer " + bearerTok
	want := "[step 1] model call failed: 401 for key test…\n" +
		"[step 2] tool echo(0123…)\n" +
		"■ llm_error after 2 model calls: Bearer abc1…"
	d := New(key)
	for cut := range len(in) + 1 {
		var out bytes.Buffer
		w := NewWriter(&out, d)
		for _, p := range []string{in[:cut], in[cut:]} {
			n, err := w.Write([]byte(p))
			require.NoError(t, err)
			require.Equal(t, len(p), n)
		}
		require.NoError(t, w.Close())
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Fatalf("cut at %d: output mismatch (-want +got):\n%s", cut, diff)
		}
	}
}

// TestWriterJSONL: a masked JSON Lines trace still parses, line by line.
func TestWriterJSONL(t *testing.T) {
	const key = `k3y/with"quote\and-slash`
	d := New(key)
	var out bytes.Buffer
	w := NewWriter(&out, d)
	enc := json.NewEncoder(w)
	events := []map[string]string{
		{"type": "model_error", "error": "401: invalid key " + key},
		{"type": "tool_call", "input": "Bearer " + jwt},
		{"type": "final", "answer": "done"},
	}
	for _, e := range events {
		require.NoError(t, enc.Encode(e))
		// Each complete line is passed on at once.
		require.True(t, strings.HasSuffix(out.String(), "\n"))
	}
	require.NoError(t, w.Flush())
	s := bufio.NewScanner(&out)
	n := 0
	for s.Scan() {
		var e map[string]string
		require.NoError(t, json.Unmarshal(s.Bytes(), &e), "line %q", s.Text())
		_, found := d.Find(s.Bytes())
		require.False(t, found, "line %q", s.Text())
		n++
	}
	require.Equal(t, len(events), n)
	require.NotContains(t, out.String(), "with")
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

// TestWriterError: the underlying writer's error is returned and sticky.
func TestWriterError(t *testing.T) {
	f := &failWriter{}
	w := NewWriter(f, New())
	n, err := w.Write([]byte("partial"))
	require.NoError(t, err, "nothing written yet")
	require.Equal(t, 7, n)
	_, err = w.Write([]byte(" line\n"))
	require.EqualError(t, err, "disk full")
	_, err = w.Write([]byte("more\n"))
	require.EqualError(t, err, "disk full")
	require.EqualError(t, w.Flush(), "disk full")
	require.Equal(t, 1, f.n, "no write after the failure")
}
