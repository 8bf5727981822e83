package parser

import (
	"strings"
	"unicode/utf8"
)

// label is one of the text-protocol labels.
type label int

const (
	labelNone label = iota
	labelThought
	labelAction
	labelInput
	labelFinal
	labelObservation
)

// labelWords lists the label words; "Action Input" and "Final Answer" come
// before "Action" so that the longer word wins.
var labelWords = [...]struct {
	words []string
	label label
}{
	{[]string{"action", "input"}, labelInput},
	{[]string{"final", "answer"}, labelFinal},
	{[]string{"action"}, labelAction},
	{[]string{"thoughts"}, labelThought},
	{[]string{"thought"}, labelThought},
	{[]string{"observation"}, labelObservation},
}

// isInvisible reports whether r is a character that is normalised away for
// label detection: whitespace that models and editors sprinkle around labels
// (NBSP, ideographic space) and zero-width characters (including the BOM).
func isInvisible(r rune) bool {
	switch r {
	case ' ', '\t', '\r', '\v', '\f',
		'\u00a0', '\u3000', '\u2002', '\u2003', '\u2009', '\u202f',
		'\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return false
}

// isDecoration reports whether b is markdown decoration allowed around a
// label: emphasis, headings, list markers and block quotes.
func isDecoration(b byte) bool {
	switch b {
	case '*', '_', '#', '-', '+', '>':
		return true
	}
	return false
}

// skipInvisible returns the index of the first byte at or after i that is not
// an invisible character.
func skipInvisible(s string, i int) int {
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			switch s[i] {
			case ' ', '\t', '\r', '\v', '\f':
				i++
				continue
			}
			return i
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isInvisible(r) {
			return i
		}
		i += n
	}
	return i
}

// skipDecorated skips invisible characters and decoration bytes.
func skipDecorated(s string, i int) int {
	for {
		j := skipInvisible(s, i)
		for j < len(s) && isDecoration(s[j]) {
			j++
		}
		if j == i {
			return i
		}
		i = j
	}
}

// lower returns the ASCII lower case of b.
func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// hasWordPrefix reports whether s[i:] starts with word (ASCII, any case).
func hasWordPrefix(s string, i int, word string) bool {
	if len(s)-i < len(word) {
		return false
	}
	for k := 0; k < len(word); k++ {
		if lower(s[i+k]) != word[k] {
			return false
		}
	}
	return true
}

func isASCIIAlnum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// matchWords matches the label words at s[i:], separated by spaces,
// underscores, hyphens or nothing, and returns the index after them.
func matchWords(s string, i int, words []string) (int, bool) {
	for k, w := range words {
		if k > 0 {
			for i < len(s) && (s[i] == ' ' || s[i] == '_' || s[i] == '-') {
				i++
			}
		}
		if !hasWordPrefix(s, i, w) {
			return 0, false
		}
		i += len(w)
	}
	if i < len(s) && isASCIIAlnum(s[i]) {
		return 0, false // "Actions", "Actionable", "Thoughtful"
	}
	return i, true
}

// detectLabel reports whether line is a label line and, if so, which label
// and the byte offset in line where its value starts (len(line) for a line
// holding only the label). See rule 1 in the package documentation.
func detectLabel(line string) (label, int) {
	i := labelStart(line)
	if i == len(line) {
		return labelNone, 0
	}
	return labelAt(line, i, strings.ContainsAny(line[:i], "*_"), false)
}

// labelStart returns the offset in line after the decoration and list
// number that may come before a label at the start of a line.
func labelStart(line string) int {
	i := skipDecorated(line, 0)
	// A numbered list item: "1. Thought:", "2) Action:".
	if j := i; j < len(line) && '0' <= line[j] && line[j] <= '9' {
		for j < len(line) && '0' <= line[j] && line[j] <= '9' {
			j++
		}
		if j < len(line) && (line[j] == '.' || line[j] == ')') {
			i = skipDecorated(line, j+1)
		}
	}
	return i
}

// labelAt reports whether a label word starts at line[i:] and, if so,
// which label and the offset where its value starts. opened says emphasis
// came before the word (it then closes after the colon); needColon refuses
// a label word without a colon (which at the end of a label line stands
// alone).
func labelAt(line string, i int, opened, needColon bool) (label, int) {
	if i == len(line) {
		return labelNone, 0
	}
	switch lower(line[i]) {
	case 'a', 'f', 't', 'o':
	default:
		return labelNone, 0 // no label word starts with another letter
	}
	for _, lw := range labelWords {
		j, ok := matchWords(line, i, lw.words)
		if !ok {
			continue
		}
		// An optional step number: "Action 2:", "Thought 1:".
		k := skipInvisible(line, j)
		if k < len(line) && '0' <= line[k] && line[k] <= '9' {
			for k < len(line) && '0' <= line[k] && line[k] <= '9' {
				k++
			}
			j = k
		}
		k = skipDecorated(line, j)
		switch {
		case k == len(line) && !needColon:
			return lw.label, len(line) // the label word alone
		case k == len(line):
			return labelNone, 0
		case line[k] == ':':
			k++
		case strings.HasPrefix(line[k:], "："):
			k += len("：")
		default:
			return labelNone, 0
		}
		return lw.label, skipClosingEmphasis(line, k, opened)
	}
	return labelNone, 0
}

// Label is a protocol label that FindLabels found in a text.
type Label struct {
	// Name is the label as the package documentation spells it:
	// "Thought", "Action", "Action Input", "Final Answer" or
	// "Observation", whatever the spelling in the text.
	Name string
	// Offset is the byte offset in the text where the label's first word
	// starts (after any decoration).
	Offset int
	// Value is the label's value on its line, trimmed of white space; for a
	// label alone on its line (whose value Parse reads from the lines
	// after it), the next non-blank line, trimmed.
	Value string
	// LineStart says the label starts its line, where Parse obeys it; a
	// label inside a line ("… finished. Final Answer: x") is one a model
	// reading the text might obey.
	LineStart bool
}

// labelNames are the Label.Name of each label.
var labelNames = [...]string{
	labelThought: "Thought", labelAction: "Action", labelInput: "Action Input",
	labelFinal: "Final Answer", labelObservation: "Observation",
}

// FindLabels returns every protocol label in text, in order. At the start
// of a line it finds exactly the labels Parse obeys (rule 1: any case;
// the words separated by a space, '_', '-' or nothing; an ASCII or
// full-width colon; markdown decoration; a step number; a label word
// alone on its line). Inside a line it finds the same spellings, with
// their colon, where a word starts ("done.**final answer**：x"). It
// does not track code fences or the structure of a reply: it answers
// whether a text, such as a tool's output, carries a label that the
// parser or a model reading the text could act on. Lines end at "\n"; a
// "\r" before it is ignored.
func FindLabels(text string) []Label {
	var out []Label
	for start := 0; start <= len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := trimCR(text[start:end])
		i := labelStart(line)
		from := 0
		if l, v := labelAt(line, i, strings.ContainsAny(line[:i], "*_"), false); l != labelNone {
			value := trim(line[v:])
			if v == len(line) {
				value = nextLine(text, end)
			}
			out = append(out, Label{Name: labelNames[l], Offset: start + i, Value: value, LineStart: true})
			from = v
		}
		out = appendInline(out, line, start, from)
		if end == len(text) {
			break
		}
		start = end + 1
	}
	return out
}

// appendInline appends the labels inside line (at offset base of the
// text) that start at or after from.
func appendInline(out []Label, line string, base, from int) []Label {
	for p := max(from, 1); p < len(line); p++ {
		if isASCIIAlnum(line[p-1]) {
			continue // not the start of a word
		}
		l, v := labelAt(line, p, line[p-1] == '*' || line[p-1] == '_', true)
		if l == labelNone {
			continue
		}
		out = append(out, Label{Name: labelNames[l], Offset: base + p, Value: trim(line[v:])})
		p = v - 1
	}
	return out
}

// nextLine returns the first non-blank line after offset end (a "\n" or
// the end of text), trimmed; "" when there is none.
func nextLine(text string, end int) string {
	for end < len(text) {
		start := end + 1
		end = strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		if s := trim(text[start:end]); s != "" {
			return s
		}
	}
	return ""
}

// isObservationResidue reports whether line is what a stop sequence leaves
// of an Observation label: "Obs", "Observ", "Observation:" with no value.
func isObservationResidue(line string) bool {
	i := skipDecorated(line, 0)
	j := i
	for j < len(line) && isASCIIAlnum(line[j]) {
		j++
	}
	if j-i < 3 || j-i > len("observation") || !hasWordPrefix("observation", 0, asciiLower(line[i:j])) {
		return false
	}
	k := skipDecorated(line, j)
	if k < len(line) && line[k] == ':' {
		k++
	} else if strings.HasPrefix(line[k:], "：") {
		k += len("：")
	}
	return skipDecorated(line, k) == len(line)
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for k := i; k < len(b); k++ {
				b[k] = lower(b[k])
			}
			return string(b)
		}
	}
	return s
}

// fence is the state of a markdown code fence.
type fence struct {
	char  byte // '`' or '~'; 0 when no fence is open
	count int  // length of the opening run
}

// fenceOpener reports whether s (a line or the value part of a label line)
// opens a code fence: three or more backticks or tildes, an optional info
// string without backticks.
func fenceOpener(s string) (fence, bool) {
	i := skipInvisible(s, 0)
	if i == len(s) || (s[i] != '`' && s[i] != '~') {
		return fence{}, false
	}
	c := s[i]
	j := i
	for j < len(s) && s[j] == c {
		j++
	}
	if j-i < 3 {
		return fence{}, false
	}
	if c == '`' && strings.IndexByte(s[j:], '`') >= 0 {
		return fence{}, false // inline code: ```ls```
	}
	return fence{char: c, count: j - i}, true
}

// closes reports whether line closes f: a run of f's character at least as
// long as the opener and nothing else.
func (f fence) closes(line string) bool {
	i := skipInvisible(line, 0)
	j := i
	for j < len(line) && line[j] == f.char {
		j++
	}
	return j-i >= f.count && skipInvisible(line, j) == len(line)
}

// trimCR removes a trailing "\r" from a line for label detection.
func trimCR(line string) string {
	return strings.TrimSuffix(line, "\r")
}

// skipClosingEmphasis skips the emphasis that closes a label after its
// colon ("**Action:** search") when the label was opened with emphasis or
// the run is followed by a space, so that "Action:**search**" keeps its
// name decoration for cleanName.
func skipClosingEmphasis(line string, k int, opened bool) int {
	j := k
	for j < len(line) && (line[j] == '*' || line[j] == '_') {
		j++
	}
	if opened || j == len(line) || line[j] == ' ' || line[j] == '\t' {
		return j
	}
	return k
}
