package replay

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchInteractions is the size of the cassette BenchmarkReplay replays.
const benchInteractions = 50

// benchBodies returns n chat request bodies with a 2 KiB system prompt.
func benchBodies(n int) []string {
	system := strings.Repeat("You are an agent. Use the tools. ", 64)
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = chatBody(system, fmt.Sprintf("step %d: resize image %d to 64x64", i, i))
	}
	return bodies
}

// BenchmarkReplay measures the per-interaction cost of replay (matching a
// JSON body against a 50-interaction cassette and building the response)
// and the time to open (load and canonicalize) that cassette.
func BenchmarkReplay(b *testing.B) {
	srv := newChatServer(b)
	path := filepath.Join(b.TempDir(), LLMCassette)
	bodies := benchBodies(benchInteractions)
	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
	require.NoError(b, err)
	for _, body := range bodies {
		benchPost(b, c.Client(), srv.URL, body)
	}
	require.NoError(b, c.Close())

	b.Run("interaction", func(b *testing.B) {
		b.ReportAllocs()
		var c *Cassette
		var client *http.Client
		for i := 0; i < b.N; i++ {
			k := i % benchInteractions
			if k == 0 {
				b.StopTimer()
				if c != nil {
					require.NoError(b, c.Close())
				}
				var err error
				c, err = Open(path, ModeReplay)
				require.NoError(b, err)
				client = c.Client()
				b.StartTimer()
			}
			benchPost(b, client, srv.URL, bodies[k])
		}
		b.StopTimer()
		c.Discard()
	})

	b.Run("load50", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			c, err := Open(path, ModeReplay)
			if err != nil {
				b.Fatal(err)
			}
			c.Discard()
		}
	})

	b.Run("baseline-loopback-http", func(b *testing.B) {
		b.ReportAllocs()
		client := srv.Client()
		for i := 0; i < b.N; i++ {
			benchPost(b, client, srv.URL, bodies[i%benchInteractions])
		}
	})
}

func benchPost(b *testing.B, client *http.Client, url, body string) {
	req, err := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
