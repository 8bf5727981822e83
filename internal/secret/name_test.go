package secret

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

func TestIsSecretName(t *testing.T) {
	tests := []struct {
		name string
		want bool
		why  string
	}{
		{"Authorization", true, "the header"},
		{"X-Api-Key", true, "words x, api, key"},
		{"Api-Key", true, "words api, key"},
		{"api_key", true, "snake case"},
		{"apikey", true, "api+key written together"},
		{"APIKEY", true, "any case"},
		{"xapikey", true, "x+api+key written together"},
		{"appkey", true, "app+key written together"},
		{"AppKey", true, "camel case"},
		{"key", true, "Google's ?key="},
		{"accessToken", true, "camel case access, token"},
		{"access_token", true, "OAuth"},
		{"authToken", true, "auth, token"},
		{"authtoken", true, "auth+token written together"},
		{"secretKey", true, "secret, key"},
		{"SECRET_KEY", true, "upper snake case"},
		{"client_secret", true, "OAuth"},
		{"clientsecret", true, "client+secret written together"},
		{"password", true, "a password"},
		{"Passwd", true, "a password"},
		{"pwd", true, "a password"},
		{"dbPwd", true, "db, pwd"},
		{"auth", true, "auth alone"},
		{"X-Amz-Signature", true, "presigned URLs"},
		{"X-Amz-Credential", true, "presigned URLs"},
		{"X-Amz-Security-Token", true, "presigned URLs"},
		{"sig", true, "Azure SAS"},
		{"Cookie", true, "sessions"},
		{"Set-Cookie", true, "sessions"},
		{"OpenAI-Organization", true, "account ids"},
		{"OpenAI-Project", true, "account ids"},
		{"code", true, "OAuth codes"},
		{"oauth2Token", true, "digits split words"},
		{"APIKey", true, "an acronym before a word"},
		{"monkey", false, "key inside a word"},
		{"keyboard", false, "key starting a longer word"},
		{"max_tokens", false, "tokens is not token"},
		{"author", false, "auth inside a word"},
		{"Content-Type", false, "an ordinary header"},
		{"stream", false, "an ordinary query"},
		{"width", false, "an ordinary form field"},
		{"turkey", false, "key inside a word"},
		{"", false, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsSecretName(tt.name); got != tt.want {
				t.Errorf("IsSecretName(%q) = %v, want %v (%s)", tt.name, got, tt.want, tt.why)
			}
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"accessToken", []string{"access", "token"}},
		{"APIKey", []string{"api", "key"}},
		{"X-Api-Key", []string{"x", "api", "key"}},
		{"oauth2Token", []string{"oauth", "2", "token"}},
		{"SECRET_KEY", []string{"secret", "key"}},
		{"a.b c", []string{"a", "b", "c"}},
		{"--", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, words(tt.in)); diff != "" {
			t.Errorf("words(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestDocListsNames: the package doc lists exactly the secret words and
// qualifiers in use.
func TestDocListsNames(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	text := strings.ReplaceAll(strings.ReplaceAll(string(doc), "\n// ", " "), "\n//", " ")
	list := func(intro string) []string {
		_, rest, ok := strings.Cut(text, intro)
		require.True(t, ok, "doc has no %q", intro)
		rest, _, _ = strings.Cut(rest, ".")
		var out []string
		for _, w := range strings.Split(rest, ",") {
			w, _, _ = strings.Cut(strings.TrimSpace(w), " ")
			out = append(out, w)
		}
		return out
	}
	var words []string
	for w := range secretWords {
		words = append(words, w)
	}
	sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	if diff := cmp.Diff(words, list("The secret words:"), sorted); diff != "" {
		t.Errorf("secret words in the doc mismatch (-code +doc):\n%s", diff)
	}
	if diff := cmp.Diff(qualifiers, list("The qualifiers:"), sorted); diff != "" {
		t.Errorf("qualifiers in the doc mismatch (-code +doc):\n%s", diff)
	}
}
