package secret

import "bytes"

// scanShapes calls yield with the key shapes in data, in order of their
// start. Every shape starts a word (its first byte is a letter or digit
// after a byte that is not a letter, digit or "_"), so one pass visits the
// starts of words and tries the shapes that can begin with that byte; with
// firstOnly it stops at the first.
func scanShapes(data []byte, firstOnly bool, yield func(Finding)) {
	inWord := false
	for i, c := range data {
		w := wordBytes[c]
		if w && (!inWord || afterEscape(data, i)) {
			if f, ok := matchAt(data, i); ok {
				yield(f)
				if firstOnly {
					return
				}
			}
		}
		inWord = w
	}
}

// matchAt tries the shapes that may start at the word start data[i].
func matchAt(data []byte, i int) (Finding, bool) {
	rest := data[i:]
	var f Finding
	ok := false
	switch data[i] {
	case 's':
		if bytes.HasPrefix(rest, []byte("sk-")) {
			f, ok = matchSK(data, i)
		}
	case 'A':
		switch {
		case bytes.HasPrefix(rest, []byte("AIza")):
			f, ok = matchGoogle(data, i)
		case bytes.HasPrefix(rest, []byte("AKIA")), bytes.HasPrefix(rest, []byte("ASIA")),
			bytes.HasPrefix(rest, []byte("ABIA")), bytes.HasPrefix(rest, []byte("ACCA")):
			f, ok = matchAWS(data, i)
		}
	case 'g':
		switch {
		case bytes.HasPrefix(rest, []byte("github_pat_")):
			f, ok = matchGitHubFine(data, i)
		case bytes.HasPrefix(rest, []byte("gh")):
			f, ok = matchGitHub(data, i)
		}
	case 'x':
		if bytes.HasPrefix(rest, []byte("xox")) || bytes.HasPrefix(rest, []byte("xapp-")) {
			f, ok = matchSlack(data, i)
		}
	case 'e':
		if bytes.HasPrefix(rest, []byte("eyJ")) {
			f, ok = matchJWT(data, i)
		}
	case 'B', 'b':
		f, ok = matchBearer(data, i)
	}
	if !ok && isHex(data[i]) {
		f, ok = matchZhipu(data, i)
	}
	return f, ok
}

// wordBytes marks the letters, digits and "_": a table, as the word
// scan visits every byte.
var wordBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
	}
	return t
}()

func isWordByte(c byte) bool { return wordBytes[c] }

// isKeyByte reports a byte of a key's body: a word byte or "-" (base64url).
func isKeyByte(c byte) bool { return isWordByte(c) || c == '-' }

func isAlnum(c byte) bool { return c != '_' && isWordByte(c) }

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isAWSByte(c byte) bool { return 'A' <= c && c <= 'Z' || '2' <= c && c <= '7' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// boundaryBefore reports whether a shape may start at data[i]: at the
// start, after a byte that is not a letter, digit or "_", or right after a
// JSON or C string escape ("\n", "\t", "\r", "\b", "\f"), where the
// letter before the key is part of the escape, not of a word.
func boundaryBefore(data []byte, i int) bool {
	return i == 0 || !isWordByte(data[i-1]) || afterEscape(data, i)
}

// afterEscape reports whether data[i] directly follows a one-letter
// backslash escape ("\n" and the like).
func afterEscape(data []byte, i int) bool {
	if i < 2 || data[i-2] != '\\' {
		return false
	}
	switch data[i-1] {
	case 'n', 't', 'r', 'b', 'f':
		return true
	}
	return false
}

// boundaryAfter reports whether a shape may end before data[j].
func boundaryAfter(data []byte, j int) bool { return j >= len(data) || !isWordByte(data[j]) }

// run returns the end of the run of bytes in class starting at data[i].
func run(data []byte, i int, class func(byte) bool) int {
	for i < len(data) && class(data[i]) {
		i++
	}
	return i
}

// prefixRun matches a prefix of n bytes (the anchor) followed by a run
// of class bytes at least minN long, starting at a boundary; with maxN >= 0
// the run is exactly between minN and maxN long and ends at a boundary.
func prefixRun(kind Kind, n int, class func(byte) bool, minN, maxN int) func([]byte, int) (Finding, bool) {
	return func(data []byte, i int) (Finding, bool) {
		if !boundaryBefore(data, i) {
			return Finding{}, false
		}
		j := run(data, i+n, class)
		if l := j - (i + n); l < minN || maxN >= 0 && (l > maxN || !boundaryAfter(data, j)) {
			return Finding{}, false
		}
		return Finding{Kind: kind, Start: i, End: j}, true
	}
}

var (
	matchGoogle     = prefixRun(GoogleKey, len("AIza"), isKeyByte, 35, 35)
	matchAWS        = prefixRun(AWSAccessKey, len("AKIA"), isAWSByte, 16, 16)
	matchGitHubFine = prefixRun(GitHubFineGrained, len("github_pat_"), isWordByte, 22, -1)
	matchOpenAI     = prefixRun(OpenAIKey, len("sk-"), isKeyByte, 16, -1)
	matchAnthropic  = prefixRun(AnthropicKey, len("sk-"), isKeyByte, 16, -1)
	matchGHToken    = prefixRun(GitHubToken, len("ghp_"), isAlnum, 36, -1)
	matchSlackBody  = prefixRun(SlackToken, len("xoxb-"), isSlackByte, 10, -1)
)

// matchSK matches OpenAI-style keys, telling Anthropic's (sk-ant-) apart.
// Real keys are random and always hold a digit; a run of words with dashes
// ("sk-fix-login-redirect-bug", a branch name) is not a key.
func matchSK(data []byte, i int) (Finding, bool) {
	f, ok := Finding{}, false
	if bytes.HasPrefix(data[i:], []byte("sk-ant-")) {
		f, ok = matchAnthropic(data, i)
	} else {
		f, ok = matchOpenAI(data, i)
	}
	if ok && bytes.IndexFunc(data[f.Start+3:f.End], func(r rune) bool { return '0' <= r && r <= '9' }) < 0 {
		return Finding{}, false
	}
	return f, ok
}

// matchGitHub matches gh[pousr]_ tokens around "gh" at data[i].
func matchGitHub(data []byte, i int) (Finding, bool) {
	if i+4 > len(data) || data[i+3] != '_' || bytes.IndexByte([]byte("pousr"), data[i+2]) < 0 {
		return Finding{}, false
	}
	return matchGHToken(data, i)
}

func isSlackByte(c byte) bool { return isAlnum(c) || c == '-' }

// matchSlack matches xox?- and xapp- tokens (both 5-byte prefixes) whose
// body has a digit.
func matchSlack(data []byte, i int) (Finding, bool) {
	if i+5 > len(data) || data[i+4] != '-' || data[i+1] == 'o' && bytes.IndexByte([]byte("abeoprs"), data[i+3]) < 0 {
		return Finding{}, false
	}
	f, ok := matchSlackBody(data, i)
	if !ok || !bytes.ContainsAny(data[i+5:f.End], "0123456789") {
		return Finding{}, false
	}
	return f, true
}

// matchJWT matches header.payload.signature with a JSON header (eyJ).
func matchJWT(data []byte, i int) (Finding, bool) {
	if !boundaryBefore(data, i) {
		return Finding{}, false
	}
	h := run(data, i+3, isKeyByte)
	if h-(i+3) < 10 || h >= len(data) || data[h] != '.' {
		return Finding{}, false
	}
	p := run(data, h+1, isKeyByte)
	if p-(h+1) < 2 || p >= len(data) || data[p] != '.' {
		return Finding{}, false
	}
	return Finding{Kind: JWT, Start: i, End: run(data, p+1, isKeyByte)}, true
}

// matchZhipu matches <32 hex>.<16 alnum> starting at data[i].
func matchZhipu(data []byte, i int) (Finding, bool) {
	dot, end := i+32, i+32+1+16
	if end > len(data) || data[dot] != '.' || !boundaryBefore(data, i) || !boundaryAfter(data, end) {
		return Finding{}, false
	}
	if run(data, i, isHex) != dot || run(data, dot+1, isAlnum) != end {
		return Finding{}, false
	}
	return Finding{Kind: ZhipuKey, Start: i, End: end}, true
}

// isTokenByte reports a byte of an RFC 6750 b64token (before its "="s).
func isTokenByte(c byte) bool {
	return isAlnum(c) || bytes.IndexByte([]byte("-._~+/"), c) >= 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// matchBearer matches "Bearer <token>" (any case) starting at data[i];
// the finding is the token.
func matchBearer(data []byte, i int) (Finding, bool) {
	if len(data)-i < 6 || !bytes.EqualFold(data[i:i+6], []byte("bearer")) || !boundaryBefore(data, i) {
		return Finding{}, false
	}
	t := run(data, i+6, isSpace)
	if t == i+6 {
		return Finding{}, false
	}
	end := run(data, t, isTokenByte)
	for end > t && data[end-1] == '.' { // a sentence's full stop
		end--
	}
	tok := data[t:end]
	end = run(data, end, func(c byte) bool { return c == '=' })
	if len(tok) < 8 || string(tok) == Redacted || !tokenLike(tok) {
		return Finding{}, false
	}
	return Finding{Kind: BearerToken, Start: t, End: end}, true
}

// tokenLike reports whether a bearer token looks random rather than like
// a word or a placeholder: a digit, an upper-case letter after a lower-case
// one, or two dots ("abc.def.ghi"); "Authentication" is a word and
// "YOUR_API_KEY" a placeholder.
func tokenLike(tok []byte) bool {
	var lower bool
	dots := 0
	for _, c := range tok {
		switch {
		case isDigit(c):
			return true
		case 'A' <= c && c <= 'Z':
			if lower {
				return true
			}
		case 'a' <= c && c <= 'z':
			lower = true
		case c == '.':
			dots++
		}
	}
	return dots >= 2
}
