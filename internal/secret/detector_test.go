package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// Fake keys of each shape, built from parts so that no line of this file
// is itself a key.
var (
	hex32      = "0123456789abcdef" + "0123456789abcdef"
	alnum16    = "AbCdEfGh" + "12345678"
	openAIKey  = "sk-" + "proj-" + strings.Repeat("Ab1_", 12)
	deepSeek   = "sk-" + hex32
	anthropic  = "sk-" + "ant-api03-" + strings.Repeat("xY9-", 20) + "AA"
	zhipu      = hex32 + "." + alnum16
	google     = "AIza" + "Sy" + strings.Repeat("A1b2C3d4e5", 3) + "f6_"
	githubPAT  = "ghp" + "_" + strings.Repeat("aB3", 12)
	githubOA   = "gho" + "_" + strings.Repeat("aB3", 12)
	githubFine = "github" + "_pat_" + strings.Repeat("11AB", 6) + "_" + strings.Repeat("xY7", 20)
	awsKey     = "AKIA" + "IOSFODNN" + "7EXAMPLE"
	awsTemp    = "ASIA" + "IOSFODNN" + "7EXAMPLE"
	slackBot   = "xoxb" + "-1234567890-1234567890-" + strings.Repeat("aB", 12)
	slackUser  = "xoxp" + "-1234567890-1234567890-1234567890-" + strings.Repeat("c0", 16)
	slackApp   = "xapp" + "-1-A0123456789-1234567890-" + strings.Repeat("ab12", 16)
	jwt        = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	bearerTok  = "abc" + "123def456ghi"
)

func TestFindShapes(t *testing.T) {
	tests := []struct {
		name string
		text string
		// want is the finding's kind and text; Kind "" means no finding.
		kind  Kind
		match string
	}{
		{name: "OpenAI project key in JSON", text: `{"k":"` + openAIKey + `"}`, kind: OpenAIKey, match: openAIKey},
		{name: "DeepSeek key (sk- and 32 hex)", text: "key " + deepSeek + " ok", kind: OpenAIKey, match: deepSeek},
		{name: "sk- after a dash still starts at a boundary", text: "x-" + deepSeek, kind: OpenAIKey, match: deepSeek},
		{name: "near miss: sk- inside a word (task-…)", text: "a task-1234567890abcdefghijkl id"},
		{name: "near miss: sk- with 15 bytes", text: "sk-" + "123456789012345"},
		{name: "key right after a JSON escape (attack round 2)", text: `{"m":"invalid\n` + openAIKey + `"} end`, kind: OpenAIKey, match: openAIKey},
		{name: "key right after a tab escape", text: `a\t` + githubPAT, kind: GitHubToken, match: githubPAT},
		{name: "near miss: sk- and words with dashes, no digit (a branch name)", text: "git checkout sk-fix-login-redirect-bug"},
		{name: "near miss: a placeholder bearer token", text: "Authorization: Bearer YOUR_API_KEY"},
		{name: "Anthropic key", text: anthropic + "\n", kind: AnthropicKey, match: anthropic},
		{name: "Zhipu id.secret", text: `"api_key": "` + zhipu + `"`, kind: ZhipuKey, match: zhipu},
		{name: "Zhipu upper-case hex", text: strings.ToUpper(hex32) + "." + alnum16, kind: ZhipuKey, match: strings.ToUpper(hex32) + "." + alnum16},
		{name: "near miss: a prompt hash (64 hex)", text: `prompt_hash: "` + hex32 + hex32 + `"`},
		{name: "near miss: 64 hex, a dot and 16 alnum", text: hex32 + hex32 + "." + alnum16},
		{name: "near miss: 32 hex and a file extension", text: hex32 + ".jpg"},
		{name: "near miss: 32 hex, a dot, 15 alnum", text: hex32 + "." + alnum16[:15]},
		{name: "near miss: 32 hex, a dot, 17 alnum", text: hex32 + "." + alnum16 + "x"},
		{name: "near miss: 31 hex", text: hex32[1:] + "." + alnum16},
		{name: "Google API key", text: "?key=" + google + "&x=1", kind: GoogleKey, match: google},
		{name: "near miss: AIza and 34 bytes", text: google[:len(google)-1] + " "},
		{name: "near miss: AIza and 36 bytes", text: google + "x"},
		{name: "near miss: AIza inside a word", text: "x" + google},
		{name: "GitHub classic token", text: "token " + githubPAT, kind: GitHubToken, match: githubPAT},
		{name: "GitHub OAuth token", text: githubOA, kind: GitHubToken, match: githubOA},
		{name: "near miss: ghp_ and 35 bytes", text: githubPAT[:len(githubPAT)-1]},
		{name: "near miss: ghx_", text: "ghx_" + githubPAT[4:]},
		{name: "GitHub fine-grained token", text: githubFine, kind: GitHubFineGrained, match: githubFine},
		{name: "near miss: github_pat_ and 21 bytes", text: "github" + "_pat_" + strings.Repeat("a", 21)},
		{name: "AWS access key id", text: "aws_access_key_id=" + awsKey, kind: AWSAccessKey, match: awsKey},
		{name: "AWS temporary key id", text: awsTemp, kind: AWSAccessKey, match: awsTemp},
		{name: "near miss: AKIA and lower case", text: "AKIA" + "iosfodnn7example"},
		{name: "near miss: AKIA and 17 bytes", text: awsKey + "X"},
		{name: "near miss: AKIA and 15 bytes", text: awsKey[:19]},
		{name: "near miss: AKIA in a word", text: "X" + awsKey},
		{name: "Slack bot token", text: slackBot, kind: SlackToken, match: slackBot},
		{name: "Slack user token", text: slackUser, kind: SlackToken, match: slackUser},
		{name: "Slack app token", text: slackApp, kind: SlackToken, match: slackApp},
		{name: "near miss: xoxb- without a digit", text: "xoxb" + "-abcdefghijklmnop"},
		{name: "near miss: xoxz-", text: "xoxz" + slackBot[4:]},
		{name: "JWT", text: "token=" + jwt + "&", kind: JWT, match: jwt},
		{name: "JWT without signature (alg none)", text: jwt[:strings.LastIndex(jwt, ".")+1] + " ", kind: JWT, match: jwt[:strings.LastIndex(jwt, ".")+1]},
		{name: "near miss: one base64url part", text: jwt[:strings.Index(jwt, ".")]},
		{name: "near miss: short header", text: "eyJ" + "abc.defgh.ijk"},
		{name: "bearer token", text: "Authorization: Bearer " + bearerTok, kind: BearerToken, match: bearerTok},
		{name: "bearer token in lower case with padding", text: "bearer\t" + bearerTok + "==", kind: BearerToken, match: bearerTok + "=="},
		{name: "bearer token of three parts", text: "Bearer abc.def.ghi", kind: BearerToken, match: "abc.def.ghi"},
		{name: "bearer token of mixed case", text: "Bearer abcdEFGHij", kind: BearerToken, match: "abcdEFGHij"},
		{name: "near miss: the placeholder", text: "Authorization: Bearer REDACTED"},
		{name: "near miss: prose", text: "Bearer authentication. Bearer tokens are bearer instruments."},
		{name: "near miss: capitalised prose", text: "Bearer Authentication"},
		{name: "near miss: Bearer inside a word", text: "XBearer " + bearerTok},
		{name: "near miss: ordinary text", text: "Scale ./picture/window.jpg to width 256, then say done. sk- is a prefix."},
	}
	d := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := d.Find([]byte(tt.text))
			if tt.kind == "" {
				require.False(t, ok, "found %s %q", f.Kind, tt.text[f.Start:f.End])
				require.Empty(t, d.FindAll([]byte(tt.text)))
				return
			}
			require.True(t, ok, "no finding in %q", tt.text)
			got := struct {
				Kind  Kind
				Match string
			}{f.Kind, tt.text[f.Start:f.End]}
			want := struct {
				Kind  Kind
				Match string
			}{tt.kind, tt.match}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("finding mismatch (-want +got):\n%s", diff)
			}
			masked := d.MaskString(tt.text)
			require.NotContains(t, masked, tt.match[4:], "masked text shows more than 4 bytes")
			_, again := d.Find([]byte(masked))
			require.False(t, again, "masked text %q still has a finding", masked)
		})
	}
}

func TestFindInUse(t *testing.T) {
	const key = "test-key-ABCDEFGH12345678"
	const odd = `p@ss/w0rd "q"`
	tests := []struct {
		name    string
		secrets []string
		text    string
		want    string // the text of the finding; "" for none
	}{
		{name: "as written", secrets: []string{key}, text: "your key is " + key, want: key},
		{name: "URL query-escaped", secrets: []string{odd}, text: "pw=" + url.QueryEscape(odd), want: url.QueryEscape(odd)},
		{name: "URL path-escaped", secrets: []string{odd}, text: "/u/" + url.PathEscape(odd), want: url.PathEscape(odd)},
		{name: "JSON-escaped", secrets: []string{odd}, text: `{"pw":` + jsonString(odd) + `}`, want: jsonString(odd)[1 : len(jsonString(odd))-1]},
		{name: "JSON-escaped with \\/", secrets: []string{odd}, text: `p@ss\/w0rd \"q\"`, want: `p@ss\/w0rd \"q\"`},
		{name: "JSON-escaped in a YAML double-quoted string", secrets: []string{odd}, text: `p@ss\\/w0rd \\"q\\"`, want: `p@ss\\/w0rd \\"q\\"`},
		{name: "short values are ignored", secrets: []string{"short"}, text: "a short text"},
		{name: "an empty value is ignored", secrets: []string{""}, text: "anything"},
		{name: "the first of several", secrets: []string{"second-secret", "first-secret"}, text: "first-secret then second-secret", want: "first-secret"},
		{name: "cut off by the console trace", secrets: []string{key}, text: "tool echo(" + key[:12] + "…", want: key[:12] + "…"},
		{name: "too little cut off to tell", secrets: []string{key}, text: "tool echo(" + key[:5] + "…"},
		{name: "in use before key-shaped at the same offset", secrets: []string{deepSeek}, text: deepSeek, want: deepSeek},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := New(tt.secrets...).Find([]byte(tt.text))
			if tt.want == "" {
				require.False(t, ok, "found %q", tt.text[f.Start:f.End])
				return
			}
			require.True(t, ok)
			require.Equal(t, InUse, f.Kind)
			require.Equal(t, tt.want, tt.text[f.Start:f.End])
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestMask(t *testing.T) {
	d := New("test-key-ABCDEFGH12345678", `p\ss"word`, `abc\defgh`)
	tests := []struct {
		name, in, want string
	}{
		{name: "nothing to mask", in: "plain text", want: "plain text"},
		{name: "a key in use", in: "key test-key-ABCDEFGH12345678.", want: "key test…."},
		{name: "a key shape", in: "k=" + deepSeek + "&", want: "k=sk-0…&"},
		{name: "bearer keeps the scheme", in: "Bearer " + bearerTok, want: "Bearer abc1…"},
		{name: "the whole token around a key in use", in: "xx_test-key-ABCDEFGH12345678_yy", want: "xx_t…"},
		{name: "a key cut off by the console", in: "echo(test-key-ABCDEF…", want: "echo(test…"},
		{name: "two findings", in: awsKey + " and " + githubPAT, want: "AKIA… and ghp_…"},
		{name: "overlapping findings", in: "Bearer " + jwt, want: "Bearer eyJh…"},
		{name: "JSON escapes kept whole", in: `{"pw":"p\\ss\"word"}`, want: `{"pw":"p\\s…"}`},
		{name: "JSON stays valid: no odd backslash kept", in: `{"pw":"abc\\defgh"}`, want: `{"pw":"abc…"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, d.MaskString(tt.in)); diff != "" {
				t.Errorf("MaskString mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, tt := range []struct{ in, want string }{
		{"", "…"}, {"abcd", "…"}, {"abcde", "abcd…"}, {"ab\\cd", "ab\\c…"}, {"abc\\d", "abc…"}, {"a\\\\bc", "a\\\\b…"}, {"日本語です", "日…"},
	} {
		require.Equal(t, tt.want, Mask(tt.in), "Mask(%q)", tt.in)
	}
}

func TestURLPassword(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://user:pa55word@host/v1", "pa55word"},
		{"https://user@host/v1", ""},
		{"https://host/v1", ""},
		{"://bad", ""},
	} {
		require.Equal(t, tt.want, URLPassword(tt.in), tt.in)
	}
}

// TestBundledCassettesAreClean scans every file of the repository's
// cassettes/ (YAML with base64 image bodies, meta.json with prompt hashes,
// decisions.json): none may hold a key shape.
func TestBundledCassettesAreClean(t *testing.T) {
	root := filepath.Join("..", "..", "cassettes")
	d := New()
	n := 0
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		n++
		if f, ok := d.Find(data); ok {
			t.Errorf("%s line %d: %s %s", path, bytes.Count(data[:f.Start], []byte("\n"))+1, f.Kind, Mask(string(data[f.Start:f.End])))
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, n, 100, "the bundled cassettes were not found")
}

// TestRandomBase64IsClean: 4 MiB of seeded random bytes, standard and
// URL base64, wrapped and unwrapped, hold no key shape.
func TestRandomBase64IsClean(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, 1<<20)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	std := base64.StdEncoding.EncodeToString(raw)
	var wrapped strings.Builder
	for i := 0; i < len(std); i += 76 {
		wrapped.WriteString(std[i:min(i+76, len(std))] + "\n")
	}
	d := New()
	for name, text := range map[string]string{"raw": string(raw), "std": std, "wrapped": wrapped.String(), "url": base64.RawURLEncoding.EncodeToString(raw)} {
		if f, ok := d.Find([]byte(text)); ok {
			t.Errorf("%s: found %s %q", name, f.Kind, text[f.Start:f.End])
		}
	}
}

// cassetteLike returns about n bytes shaped like a recorded cassette: YAML,
// JSON bodies with prose, hashes and a base64 image body.
func cassetteLike(n int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	img := make([]byte, 3000)
	for i := range img {
		img[i] = byte(r.Uint32())
	}
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		b.WriteString("    - request:\n        body: '{\"model\":\"glm-4-flash\",\"messages\":[{\"role\":\"system\",\"content\":\"You are an agent. Thought: scale the picture. Action: image_scaling\\nAction Input: ./picture/window.jpg 256\"}]}'\n")
		b.WriteString("        headers:\n            Authorization:\n                - REDACTED\n        url: http://localhost/v1/chat/completions?stream=false\n")
		b.WriteString("      response:\n        body: !!binary |\n            ")
		b.WriteString(base64.StdEncoding.EncodeToString(img))
		b.WriteString("\n        prompt_hash: " + hex32 + hex32 + "\n")
	}
	return b.Bytes()
}

// BenchmarkFind scans 1 MB of cassette-like text with two secrets in use
// (go test -bench Find -benchmem ./internal/secret).
func BenchmarkFind(b *testing.B) {
	data := cassetteLike(1 << 20)
	d := New("test-key-ABCDEFGH12345678", zhipu)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := d.Find(data); ok {
			b.Fatal("finding in clean data")
		}
	}
}

// BenchmarkMask masks 1 MB of cassette-like text holding a key every 64 KiB.
func BenchmarkMask(b *testing.B) {
	data := cassetteLike(1 << 20)
	for i := 0; i+len(zhipu) < len(data); i += 64 << 10 {
		j := bytes.IndexByte(data[i:], ' ')
		copy(data[i+j+1:], " "+zhipu+" ")
	}
	d := New()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d.Mask(data)
	}
}

func FuzzMask(f *testing.F) {
	for _, s := range []string{openAIKey, anthropic, zhipu, google, githubPAT, githubFine, awsKey, slackBot, slackApp, jwt,
		"Bearer " + bearerTok, "x test-key-ABCDEFGH12345678 y", `{"pw":"p\\ss\"word"}`, "AKIA" + "IOSFODNN7EXAMPL" + "test-key-ABCDEFGH12345678",
		hex32 + "." + "test-key-ABCDEFGH12345678", "Bearer abc/test-key-ABCDEFGH12345678", "echo(test-key-ABCDEF…)", "k3y/with+o…", string(cassetteLike(2000))} {
		f.Add(s)
	}
	d := New("test-key-ABCDEFGH12345678", `p\ss"word`, "k3y/with+odd=chars")
	f.Fuzz(func(t *testing.T, s string) {
		all := d.FindAll([]byte(s))
		for _, fd := range all {
			if fd.Start < 0 || fd.End > len(s) || fd.End-fd.Start < MinLen {
				t.Fatalf("bad finding %+v in %d bytes", fd, len(s))
			}
		}
		masked := d.MaskString(s)
		if f, ok := d.Find([]byte(masked)); ok {
			t.Fatalf("masked %q still has %s %q", masked, f.Kind, masked[f.Start:f.End])
		}
		if again := d.MaskString(masked); again != masked {
			t.Fatalf("masking is not idempotent: %q then %q", masked, again)
		}
		if len(all) == 0 && masked != s {
			t.Fatalf("text without findings changed: %q to %q", s, masked)
		}
	})
}
