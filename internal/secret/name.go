package secret

import "strings"

// secretWords are the words that make a header, query or form key secret
// (see IsSecretName): Authorization, Api-Key, Cookie, Set-Cookie,
// OpenAI-Organization, OpenAI-Project, access_token, pwd…
var secretWords = map[string]bool{
	"authorization": true, "auth": true, "cookie": true, "key": true,
	"token": true, "secret": true, "password": true, "passwd": true, "pwd": true,
	"passphrase": true, "session": true, "organization": true, "org": true,
	"project": true, "signature": true, "sig": true, "credential": true,
	"credentials": true, "jwt": true,
	"code": true, // OAuth-style access codes in query strings
}

// qualifiers are the words that may be written together with a secret
// word, in front of it, and still name a secret: appkey, apikey,
// accesstoken, clientsecret, xapikey.
var qualifiers = []string{
	"access", "account", "admin", "api", "app", "auth", "bearer", "bot", "client",
	"consumer", "csrf", "db", "id", "login", "master", "oauth", "pass", "private",
	"refresh", "root", "secret", "security", "service", "session", "shared",
	"signing", "user", "x", "xsrf",
}

// IsSecretName reports whether a header, query or form key names a secret.
// The name is split into words (see the package doc); it names a secret
// when a word is a secret word or qualifiers followed by a secret word
// written as one: "key", "X-Api-Key", "api_key", "accessToken",
// "authToken", "secretKey", "appkey", "APIKEY", "pwd", "client_secret" are
// secret names; "monkey", "keyboard", "max_tokens", "author" are not.
func IsSecretName(name string) bool {
	for _, w := range words(name) {
		if isSecretWord(w) {
			return true
		}
	}
	return false
}

// isSecretWord reports whether a lower-case word is a secret word, with
// any number of qualifiers in front.
func isSecretWord(w string) bool {
	if secretWords[w] {
		return true
	}
	for _, q := range qualifiers {
		if rest, ok := strings.CutPrefix(w, q); ok && rest != "" && isSecretWord(rest) {
			return true
		}
	}
	return false
}

// words splits a name into lower-case words at every byte that is not an
// ASCII letter or digit, between a lower-case letter and an upper-case
// one, before the last upper-case letter of a run followed by a lower-case
// one ("APIKey" is "api", "key"), and between letters and digits.
func words(name string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start >= 0 {
			p := name[i-1]
			switch {
			case isLower(p) && isUpper(c),
				isDigit(p) != isDigit(c),
				isUpper(p) && isUpper(c) && i+1 < len(name) && isLower(name[i+1]):
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(name))
	return out
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
