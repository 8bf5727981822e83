package parser

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isSpace reports whether r is trimmed from around values: Unicode white
// space and zero-width characters.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || isInvisible(r)
}

// trimBounds returns the bounds of s[a:b] with surrounding space removed.
func trimBounds(s string, a, b int) (int, int) {
	for a < b {
		r, n := utf8.DecodeRuneInString(s[a:b])
		if !isSpace(r) {
			break
		}
		a += n
	}
	for b > a {
		r, n := utf8.DecodeLastRuneInString(s[a:b])
		if !isSpace(r) {
			break
		}
		b -= n
	}
	return a, b
}

func trim(s string) string { return strings.TrimFunc(s, isSpace) }

// firstLine returns the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for s != "" {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if t := trim(line); t != "" {
			return t
		}
	}
	return ""
}

// pairs are the decorations stripped from around an action name (rule 8)
// and, for quotes, from around a single-line action input (rule 9).
var namePairs = [][2]string{
	{"**", "**"}, {"__", "__"}, {"*", "*"}, {"`", "`"}, {`"`, `"`}, {"'", "'"},
	{"“", "”"}, {"‘", "’"}, {"[", "]"}, {"<", ">"}, {"【", "】"}, {"「", "」"}, {"《", "》"},
}

var quotePairs = [][2]string{{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"‘", "’"}}

// cleanName removes surrounding space and decoration from an action name
// (rule 8), repeatedly: "**`search`**" becomes "search".
func cleanName(s string) string {
	s = trim(s)
	for changed := true; changed; {
		changed = false
		for _, p := range namePairs {
			if len(s) >= len(p[0])+len(p[1]) && strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) {
				s = trim(s[len(p[0]) : len(s)-len(p[1])])
				changed = true
			}
		}
	}
	return s
}

// noneNames are action names that mean "no action" (rule 8), lower case.
var noneNames = map[string]bool{
	"none": true, "n/a": true, "na": true, "null": true, "nil": true, "no": true,
	"no action": true, "no_action": true, "no tool": true, "no tool needed": true,
	"nothing": true, "-": true, "无": true, "没有": true, "无需": true, "不需要": true,
	"无操作": true, "无动作": true, "无需工具": true, "不需要工具": true,
}

// isNoneName reports whether a cleaned action name means "no action".
func isNoneName(name string) bool {
	return noneNames[strings.ToLower(strings.TrimRight(name, ".。"))]
}

// splitCall splits "tool(args)" call syntax (rule 7): a name made of
// letters, digits, '_', '-' and '.', then parentheses that are balanced and
// end the string. It returns the name and the trimmed arguments.
func splitCall(s string) (name, args string, ok bool) {
	open := strings.IndexByte(s, '(')
	if open <= 0 || s[len(s)-1] != ')' {
		return "", "", false
	}
	for _, r := range s[:open] {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.') {
			return "", "", false
		}
	}
	if end := balancedEnd(s, open); end != len(s) {
		return "", "", false
	}
	return s[:open], trim(s[open+1 : len(s)-1]), true
}

// balancedEnd returns the index just after the bracket that closes the one
// at s[i] ('{', '[' or '('; parentheses count only when s[i] is one), skipping brackets inside double-quoted strings
// (with backslash escapes), or -1 when it is never closed or a bracket of
// the wrong kind closes it.
func balancedEnd(s string, i int) int {
	parens := s[i] == '('
	var stack []byte
	inString, escaped := false, false
	for j := i; j < len(s); j++ {
		c := s[j]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '(':
			if parens {
				stack = append(stack, ')')
			}
		case ')':
			if !parens {
				continue
			}
			fallthrough
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return -1
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// stripQuotes removes one matching pair of quotes or one matching run of
// backticks around a single-line value (rule 9), when the inside holds no
// further quote of the same kind.
func stripQuotes(s string) string {
	if strings.IndexByte(s, '\n') >= 0 {
		return s
	}
	if n := len(s) - len(strings.TrimLeft(s, "`")); n > 0 && n*2 < len(s) &&
		strings.HasSuffix(s, strings.Repeat("`", n)) && !strings.Contains(s[n:len(s)-n], "`") {
		return trim(s[n : len(s)-n])
	}
	for _, p := range quotePairs {
		if len(s) >= len(p[0])+len(p[1]) && strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) {
			inner := s[len(p[0]) : len(s)-len(p[1])]
			if !strings.Contains(inner, p[0]) && !strings.Contains(inner, p[1]) {
				return inner
			}
		}
	}
	return s
}

// cleanInput applies rule 9 to the action input s[a:b]. It returns the input
// and, when text after a closing fence or a balanced JSON value is not part
// of the input, the offset where that text starts (-1 otherwise).
func cleanInput(s string, a, b int) (string, int) {
	a, b = trimBounds(s, a, b)
	v := s[a:b]
	if f, ok := fenceOpener(firstRawLine(v)); ok {
		nl := strings.IndexByte(v, '\n')
		if nl < 0 {
			return "", -1 // only the opening fence
		}
		start := a + nl + 1
		for pos := start; pos < b; {
			end := lineEnd(s, pos, b)
			if f.closes(s[pos:end]) {
				return trim(s[start:pos]), end
			}
			pos = end + 1
		}
		return trim(s[start:b]), -1 // never closed: everything after the opener
	}
	if v != "" && (v[0] == '{' || v[0] == '[') {
		if end := balancedEnd(v, 0); end > 0 {
			return v[:end], a + end
		}
		return v, -1 // unbalanced: verbatim, never repaired
	}
	return stripQuotes(v), -1
}

// firstRawLine returns s up to its first newline.
func firstRawLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// lineEnd returns the index of the newline ending the line at pos, or b.
func lineEnd(s string, pos, b int) int {
	if i := strings.IndexByte(s[pos:b], '\n'); i >= 0 {
		return pos + i
	}
	return b
}

// cutObservation returns s up to its first line that is an Observation label
// line, trimmed: an Observation line never reaches a tool (rule 4).
func cutObservation(s string) (kept, cut string) {
	for pos := 0; pos < len(s); {
		end := lineEnd(s, pos, len(s))
		if l, _ := detectLabel(trimCR(s[pos:end])); l == labelObservation {
			return trim(s[:pos]), trim(s[pos:])
		}
		pos = end + 1
	}
	return s, ""
}

// joinDiscarded joins two pieces of discarded text with a newline,
// skipping empty ones.
func joinDiscarded(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
