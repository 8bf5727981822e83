package replay

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"gopkg.in/dnaeon/go-vcr.v2/cassette"

	"github.com/agenthub/agenthub/internal/secret"
)

// Redacted is the placeholder that replaces a secret in a saved cassette.
const Redacted = secret.Redacted

// ErrSecretLeak is wrapped by the error Close returns when the saved
// cassette still contains a secret in use or a key-shaped string; the
// recording is then discarded and the old cassette left as it was.
var ErrSecretLeak = errors.New("secret in cassette")

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
		case secret.IsSecretName(k):
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
		if secret.IsSecretName(k) {
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

// scanSecrets looks for the secrets in use (values shorter than
// secret.MinLen ignored; also URL- and JSON-escaped) and for key-shaped
// strings (package secret lists the shapes) in data; where names the
// scanned text in the error (a file, a body). The error wraps
// ErrSecretLeak, names the first finding's line and kind, and quotes it
// masked: never more than its first four bytes.
func scanSecrets(data []byte, where string, secrets []string) error {
	f, ok := secret.New(secrets...).Find(data)
	if !ok {
		return nil
	}
	var what string
	switch f.Kind {
	case secret.InUse:
		what = "secret in use"
	case secret.BearerToken:
		what = "bearer token"
	default:
		what = fmt.Sprintf("key-shaped string (%s)", f.Kind)
	}
	line := bytes.Count(data[:f.Start], []byte("\n")) + 1
	return fmt.Errorf("%w: %s line %d: %s %q", ErrSecretLeak, where, line, what, secret.Mask(string(data[f.Start:f.End])))
}
