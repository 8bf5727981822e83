package replay

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// Fake keys, built from parts so that no line of this file is a key.
var (
	fakeZhipu  = "0123456789abcdef" + "0123456789abcdef" + "." + "AbCdEfGh12345678"
	fakeGoogle = "AIza" + "Sy" + strings.Repeat("A1b2C3d4e5", 3) + "f6_"
	fakeGitHub = "ghp" + "_" + strings.Repeat("aB3", 12)
	fakeAWS    = "AKIA" + "IOSFODNN" + "7EXAMPLE"
	fakeSlack  = "xoxb" + "-1234567890-1234567890-" + strings.Repeat("aB", 12)
	fakeJWT    = "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxIn0" + ".c2lnbmF0dXJlMTIzNDU2"
	fakeAnthr  = "sk-" + "ant-api03-" + strings.Repeat("xY9-", 8)
)

// TestScanSecrets: each key shape and a key in use are found, on the
// right line, named by kind and quoted masked; clean cassette text passes.
func TestScanSecrets(t *testing.T) {
	const inUse = "my-key-0123456789"
	tests := []struct {
		name    string
		data    string
		secrets []string
		want    string // the error after "secret in cassette: c.yaml "; "" for none
	}{
		{name: "Zhipu id.secret", data: "a: 1\nkey: " + fakeZhipu + "\n", want: `line 2: key-shaped string (zhipu-api-key) "0123…"`},
		{name: "Google API key", data: "url: https://h/x?k=" + fakeGoogle, want: `line 1: key-shaped string (gcp-api-key) "AIza…"`},
		{name: "GitHub token", data: fakeGitHub, want: `line 1: key-shaped string (github-pat) "ghp_…"`},
		{name: "AWS access key id", data: "\n\n" + fakeAWS, want: `line 3: key-shaped string (aws-access-token) "AKIA…"`},
		{name: "Slack bot token", data: fakeSlack, want: `line 1: key-shaped string (slack-token) "xoxb…"`},
		{name: "JWT", data: "t: " + fakeJWT, want: `line 1: key-shaped string (jwt) "eyJh…"`},
		{name: "Anthropic key", data: fakeAnthr, want: `line 1: key-shaped string (anthropic-api-key) "sk-a…"`},
		{name: "OpenAI key", data: "sk-" + "proj-abcdefghij1234567890klmn", want: `line 1: key-shaped string (openai-api-key) "sk-p…"`},
		{name: "bearer token", data: "Authorization: Bearer abc.def.ghi", want: `line 1: bearer token "abc.…"`},
		{name: "the key in use", data: "x\n" + inUse, secrets: []string{inUse}, want: `line 2: secret in use "my-k…"`},
		{name: "the key in use in a task text, JSON-escaped", data: `{"content":"use my\/key-0123456789"}`, secrets: []string{"my/key-0123456789"}, want: `line 1: secret in use "my\\/…"`},
		{name: "the first finding wins", data: fakeAWS + " " + inUse, secrets: []string{inUse}, want: `line 1: key-shaped string (aws-access-token) "AKIA…"`},
		{name: "clean: prompt hash, placeholder, task ids", data: "prompt_hash: " + strings.Repeat("0123456789abcdef", 4) + "\nAuthorization: Bearer REDACTED\nid: task-1234567890abcdefghijkl\n"},
		{name: "clean: base64 body", data: "body: !!binary |\n    " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xef, 0xbe, 0x12, 0x34}, 400))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := scanSecrets([]byte(tt.data), "c.yaml", tt.secrets)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrSecretLeak)
			if diff := cmp.Diff("secret in cassette: c.yaml "+tt.want, err.Error()); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSecretNamesRedacted: the compound query and form names of issue 10
// (accessToken, authToken, secretKey, appkey, pwd) are redacted; ordinary
// names are kept.
func TestSecretNamesRedacted(t *testing.T) {
	names := []string{"accessToken", "authToken", "secretKey", "appkey", "pwd", "client_secret", "X-Api-Key", "Signature", "credential"}
	q := url.Values{"monkey": {"banana"}, "max_tokens": {"5"}, "keyboard": {"qwerty"}}
	for _, n := range names {
		q.Set(n, "s3cr3t-"+n)
	}
	got := redactValues(q)
	want := url.Values{"monkey": {"banana"}, "max_tokens": {"5"}, "keyboard": {"qwerty"}}
	for _, n := range names {
		want.Set(n, Redacted)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("redactValues mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, "http://h/x?accessToken=REDACTED&pwd=REDACTED&w=256", redactURL("http://h/x?accessToken=abc&pwd=def&w=256"))
	h := redactHeaders(http.Header{"X-Auth-Token": {"abc"}, "Appkey": {"def"}, "Content-Type": {"a/b"}}, false)
	require.Equal(t, http.Header{"X-Auth-Token": {Redacted}, "Appkey": {Redacted}, "Content-Type": {"a/b"}}, h)
}

// TestScanZhipuKeyInRecording: a response that echoes a key of the default
// provider's shape is not saved (the old scan knew only sk- and Bearer).
func TestScanZhipuKeyInRecording(t *testing.T) {
	srv := newRawServer(t, "application/json", []byte(`{"error":"invalid api key `+fakeZhipu+`"}`))
	dir := t.TempDir()
	path := filepath.Join(dir, "llm.yaml")
	c, err := Open(path, ModeRecord, WithTransport(srv.Client().Transport))
	require.NoError(t, err)
	_, _, err = post(t, c.Client(), srv.URL+"/chat/completions", `{}`, nil)
	require.NoError(t, err)
	err = c.Close()
	require.ErrorIs(t, err, ErrSecretLeak)
	require.ErrorContains(t, err, "zhipu-api-key")
	require.NotContains(t, err.Error(), fakeZhipu[4:])
	_, statErr := os.Stat(path)
	require.ErrorIs(t, statErr, os.ErrNotExist, "nothing saved")
}

// BenchmarkScanSecrets scans 1 MB shaped like a recorded cassette (JSON
// bodies, hashes, base64 image bodies) for two secrets in use and every
// key shape: go test -bench ScanSecrets -benchmem ./evals/replay
func BenchmarkScanSecrets(b *testing.B) {
	img := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x13, 0x57, 0x9b, 0xdf}, 250))
	var buf bytes.Buffer
	for buf.Len() < 1<<20 {
		buf.WriteString("    - request:\n        body: '{\"model\":\"glm-4-flash\",\"messages\":[{\"role\":\"user\",\"content\":\"Scale ./picture/window.jpg to width 256\"}]}'\n")
		buf.WriteString("        headers:\n            Authorization:\n                - REDACTED\n        url: http://localhost/v1/chat/completions\n")
		buf.WriteString("      response:\n        body: !!binary |\n            " + img + "\n")
		buf.WriteString("        prompt_hash: " + strings.Repeat("0123456789abcdef", 4) + "\n")
	}
	data := buf.Bytes()
	secrets := []string{"my-key-0123456789", fakeZhipu}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := scanSecrets(data, "c.yaml", secrets); err != nil {
			b.Fatal(err)
		}
	}
}
