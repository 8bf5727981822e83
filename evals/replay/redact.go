package replay

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"gopkg.in/dnaeon/go-vcr.v2/cassette"
)

// Redacted is the placeholder that replaces a secret in a saved cassette.
const Redacted = "REDACTED"

// minSecretLen is the shortest WithSecrets value, in bytes, that the
// post-save scan looks for; shorter values would match ordinary text.
const minSecretLen = 6

// ErrSecretLeak is wrapped by the error Close returns when the saved
// cassette still contains a secret in use or a key-shaped string; the
// recording is then discarded and the old cassette left as it was.
var ErrSecretLeak = errors.New("secret in cassette")

// secretWords are the dash- or underscore-separated words that make a
// header, query or form key secret: Authorization, Api-Key, X-Api-Key,
// Cookie, Set-Cookie, OpenAI-Organization, OpenAI-Project, access_token...
var secretWords = map[string]bool{
	"authorization": true, "auth": true, "cookie": true, "key": true,
	"apikey": true, "token": true, "secret": true, "password": true,
	"session": true, "organization": true, "org": true, "project": true,
	"signature": true, "sig": true, "credential": true, "credentials": true,
	"code": true, // OAuth-style access codes in query strings
}

// isSecretName reports whether a header, query or form key names a secret.
func isSecretName(name string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == '-' || r == '_' || r == '.'
	}) {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// isVaryingHeader reports whether a request header varies by machine or
// client version and is dropped before saving (User-Agent, X-Stainless-*).
func isVaryingHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "user-agent" || strings.HasPrefix(n, "x-stainless-")
}

// redactHeaders returns a copy of h with secret values replaced by Redacted
// and, when dropVarying is set, machine-varying headers removed. h itself
// is never modified: in go-vcr it aliases the live request's headers.
func redactHeaders(h http.Header, dropVarying bool) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		switch {
		case dropVarying && isVaryingHeader(k):
			continue
		case isSecretName(k):
			red := make([]string, len(vs))
			for i := range red {
				red[i] = Redacted
			}
			out[k] = red
		default:
			out[k] = append([]string(nil), vs...)
		}
	}
	return out
}

// redactValues returns a copy of v with the values of secret-named keys
// replaced by Redacted.
func redactValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		if isSecretName(k) {
			red := make([]string, len(vs))
			for i := range red {
				red[i] = Redacted
			}
			out[k] = red
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// redactURL returns raw with the values of secret-named query keys replaced
// by Redacted; an unparseable URL is returned unchanged (the secret scan
// still guards it).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	changed := false
	if u.User != nil {
		// Credentials in the URL (https://user:password@host/…).
		u.User = url.User(Redacted)
		changed = true
	}
	if u.RawQuery != "" {
		if q, err := url.ParseQuery(u.RawQuery); err == nil {
			u.RawQuery = redactValues(q).Encode()
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return u.String()
}

// redactInteraction is the go-vcr save filter. It replaces every map it
// changes with a redacted copy, so that nothing the live run still holds
// (request headers, the response handed to the client) is modified.
func redactInteraction(i *cassette.Interaction) error {
	i.Request.Headers = redactHeaders(i.Request.Headers, true)
	i.Request.URL = stableLoopback(redactURL(i.Request.URL))
	i.Request.Form = redactValues(i.Request.Form)
	i.Response.Headers = redactHeaders(i.Response.Headers, false)
	// Redirects carry URLs whose query may hold signatures and codes.
	for _, h := range []string{"Location", "Content-Location"} {
		if vs := i.Response.Headers[h]; len(vs) > 0 {
			red := make([]string, len(vs))
			for j, v := range vs {
				red[j] = redactURL(v)
			}
			i.Response.Headers[h] = red
		}
	}
	// The response date changes on every recording and matters to no
	// client here: dropping it keeps re-recording diffs to real changes.
	delete(i.Response.Headers, "Date")
	return nil
}

// stableLoopback replaces a loopback host and its random port
// (127.0.0.1:41234, [::1]:5000, localhost:8080) with "localhost", so that
// re-recording against in-process servers does not churn every URL.
// Matching ignores the host anyway; other hosts are kept as data.
func stableLoopback(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		u.Host = "localhost"
		return u.String()
	}
	return raw
}

var (
	// skKey matches OpenAI-style keys (sk-..., sk-proj-...); \b keeps
	// words such as "task-" from matching.
	skKey = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`)
	// bearer matches a bearer token; only Redacted may follow.
	bearer = regexp.MustCompile(`Bearer\s+([^\s"',\\]+)`)
)

// scanSecrets looks for the secrets in use and for key-shaped strings in
// data; where names the scanned text in the error (a file, a body).
// Secrets are quoted masked: never more than their first four bytes.
func scanSecrets(data []byte, where string, secrets []string) error {
	for _, s := range secrets {
		if len(s) < minSecretLen {
			continue
		}
		// As written, URL-escaped, and JSON-escaped ("/" as "\/", as some
		// providers echo it; a YAML double-quoted body doubles the "\").
		jsonEsc := strings.ReplaceAll(s, "/", `\/`)
		for _, form := range []string{s, url.QueryEscape(s), jsonEsc, strings.ReplaceAll(jsonEsc, `\`, `\\`)} {
			if i := bytes.Index(data, []byte(form)); i >= 0 {
				return fmt.Errorf("%w: %s line %d: secret in use %s", ErrSecretLeak, where, lineOf(data, i), mask(s))
			}
		}
	}
	if loc := skKey.FindIndex(data); loc != nil {
		return fmt.Errorf("%w: %s line %d: key-shaped string %s", ErrSecretLeak, where, lineOf(data, loc[0]), mask(string(data[loc[0]:loc[1]])))
	}
	for _, m := range bearer.FindAllSubmatchIndex(data, -1) {
		if string(data[m[2]:m[3]]) != Redacted {
			return fmt.Errorf("%w: %s line %d: bearer token %s", ErrSecretLeak, where, lineOf(data, m[0]), mask(string(data[m[2]:m[3]])))
		}
	}
	return nil
}

// lineOf returns the 1-based line of byte offset i in data.
func lineOf(data []byte, i int) int { return bytes.Count(data[:i], []byte("\n")) + 1 }

// mask shows the first four bytes of a secret and hides the rest.
func mask(s string) string {
	if len(s) <= 4 {
		return `"…"`
	}
	return fmt.Sprintf("%q", s[:4]+"…")
}
