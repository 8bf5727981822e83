package parser

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestUnquote(t *testing.T) {
	tests := []struct {
		name string
		lit  string
		want string
		ok   bool
	}{
		{"plain", `"abc"`, "abc", true},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true},
		{"unicode escape", `"\u4e2d\u6587"`, "中文", true},
		{"surrogate pair", `"\ud83d\ude00"`, "😀", true},
		{"lone surrogate", `"\ud83dx"`, "\ufffdx", true},
		{"invalid utf-8 kept", "\"\x94\x94\"", "\x94\x94", true},
		{"bad escape", `"\x"`, "", false},
		{"short unicode escape", `"\u12"`, "", false},
		{"not a string", `12`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := unquote([]byte(tt.lit))
			if ok != tt.ok || got != tt.want {
				t.Errorf("unquote(%s) = %q, %v; want %q, %v", tt.lit, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzUnquote checks unquote against encoding/json on valid UTF-8 string
// literals and that its output is never longer than the literal.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"x\\y\"z"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		got, ok := unquote([]byte(lit))
		if ok && len(got) > len(lit) {
			t.Fatalf("unquote(%q) = %q is longer than the literal", lit, got)
		}
		var want string
		literal := len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"'
		if !literal || !utf8.ValidString(lit) || json.Unmarshal([]byte(lit), &want) != nil {
			return
		}
		if !ok {
			t.Fatalf("unquote(%q) failed, encoding/json decodes %q", lit, want)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("unquote(%q) mismatch (-want +got):\n%s", lit, diff)
		}
	})
}
