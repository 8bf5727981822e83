package secret

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// MinLen is the shortest secret in use, in bytes, that New keeps; shorter
// values would match ordinary text.
const MinLen = 6

// Redacted is the placeholder that replaces a secret-named value (a header,
// query or form value) in saved cassettes. A bearer token equal to it is
// not a finding.
const Redacted = "REDACTED"

// Kind names what a Finding is: a secret in use or a key shape. The values
// of the shapes are gitleaks-style rule ids (see the package doc).
type Kind string

// The kinds of finding; the package doc gives each shape and its source.
const (
	InUse             Kind = "secret-in-use"           // a value given to New, in any of its forms
	OpenAIKey         Kind = "openai-api-key"          // sk-… (OpenAI, DeepSeek, other OpenAI-compatible providers)
	AnthropicKey      Kind = "anthropic-api-key"       // sk-ant-…
	ZhipuKey          Kind = "zhipu-api-key"           // <32 hex>.<16 alnum> (Zhipu / BigModel id.secret)
	GoogleKey         Kind = "gcp-api-key"             // AIza… (Google Cloud, Gemini)
	GitHubToken       Kind = "github-pat"              // ghp_, gho_, ghu_, ghs_, ghr_
	GitHubFineGrained Kind = "github-fine-grained-pat" // github_pat_…
	AWSAccessKey      Kind = "aws-access-token"        // AKIA…, ASIA…, ABIA…, ACCA… (access key IDs)
	SlackToken        Kind = "slack-token"             // xoxb-, xoxp-, xoxe-…, xapp-
	JWT               Kind = "jwt"                     // eyJ….….…
	BearerToken       Kind = "bearer-token"            // the token after "Bearer "
)

const (
	// ellipsis ends a masked value.
	ellipsis = "…"
	// maxMaskPasses bounds Mask's passes; two always suffice for key
	// shapes and ASCII secrets.
	maxMaskPasses = 8
)

// Finding is one secret found in a text: its kind and its byte offsets
// [Start, End). For a BearerToken it covers the token, not "Bearer ".
type Finding struct {
	Kind       Kind
	Start, End int
}

// Detector finds the secrets in use and key-shaped strings in a text. It is
// immutable and safe for concurrent use; a nil *Detector finds key shapes
// only, like New().
type Detector struct {
	// forms are the secrets in use in every form looked for, longest
	// first, deduplicated.
	forms [][]byte
	// raw are the secrets in use as given, for cut-off copies.
	raw [][]byte
}

// New returns a Detector for the given secrets in use (values shorter than
// MinLen ignored; see the package doc for the escaped forms also looked
// for) and for every key shape.
func New(secrets ...string) *Detector {
	d := &Detector{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) < MinLen {
			continue
		}
		d.raw = append(d.raw, []byte(s))
		for _, f := range escapedForms(s) {
			if !seen[f] {
				seen[f] = true
				d.forms = append(d.forms, []byte(f))
			}
		}
	}
	slices.SortStableFunc(d.forms, func(a, b []byte) int { return len(b) - len(a) })
	return d
}

// escapedForms returns s as written, URL-escaped, JSON-escaped and with
// the JSON escapes' backslashes doubled.
func escapedForms(s string) []string {
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	var jsonForms []string
	if b, err := json.Marshal(s); err == nil {
		j := string(b[1 : len(b)-1])
		jsonForms = append(jsonForms, j, strings.ReplaceAll(j, "/", `\/`))
	}
	for _, j := range jsonForms {
		forms = append(forms, j, strings.ReplaceAll(j, `\`, `\\`))
	}
	return forms
}

// Find returns the first finding in data (the lowest Start; at the same
// Start a secret in use, then the longest).
func (d *Detector) Find(data []byte) (Finding, bool) {
	var best Finding
	found := false
	d.each(data, true, func(f Finding) {
		if !found || less(f, best) {
			best, found = f, true
		}
	})
	return best, found
}

// FindAll returns every finding in data, ordered as Find orders them.
// Findings may overlap (a key in use is often also key-shaped).
func (d *Detector) FindAll(data []byte) []Finding {
	var all []Finding
	d.each(data, false, func(f Finding) { all = append(all, f) })
	slices.SortFunc(all, func(a, b Finding) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
	return slices.Compact(all)
}

// less orders findings by Start, then secrets in use first, then longest.
func less(a, b Finding) bool {
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	if (a.Kind == InUse) != (b.Kind == InUse) {
		return a.Kind == InUse
	}
	if a.End != b.End {
		return a.End > b.End
	}
	return a.Kind < b.Kind
}

// each calls yield with the findings in data; with firstOnly, only the
// first of each rule (enough for Find).
func (d *Detector) each(data []byte, firstOnly bool, yield func(Finding)) {
	if d != nil {
		for _, form := range d.forms {
			for off := 0; off < len(data); {
				i := bytes.Index(data[off:], form)
				if i < 0 {
					break
				}
				yield(Finding{Kind: InUse, Start: off + i, End: off + i + len(form)})
				if firstOnly {
					break
				}
				off += i + 1
			}
		}
		d.eachCut(data, firstOnly, yield)
	}
	scanShapes(data, firstOnly, yield)
}

// eachCut finds secrets in use cut off by a display limit: at least
// MinLen bytes of a secret's start right before "…" (as the console trace
// shortens long inputs). The finding includes the "…".
func (d *Detector) eachCut(data []byte, firstOnly bool, yield func(Finding)) {
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], []byte(ellipsis))
		if i < 0 {
			return
		}
		i += off
		off = i + len(ellipsis)
		found := false
		for _, s := range d.raw {
			for k := min(len(s)-1, i); k >= MinLen; k-- {
				if bytes.Equal(data[i-k:i], s[:k]) {
					yield(Finding{Kind: InUse, Start: i - k, End: off})
					found = true
					break
				}
			}
		}
		if found && firstOnly {
			return
		}
	}
}

// Mask returns data with every finding masked (see Mask): the bytes of a
// finding, widened to the whole run of letters, digits, "_" and "-"
// around it, are replaced by their first four bytes and "…". Masking
// repeats until no finding is left, so that the output contains no
// finding and masking it again changes nothing (for secrets in use that do
// not themselves contain "…"). data is not modified; a text without
// findings is returned as is.
func (d *Detector) Mask(data []byte) []byte {
	for range maxMaskPasses {
		all := d.FindAll(data)
		if len(all) == 0 {
			return data
		}
		data = maskOnce(data, all)
	}
	// A pathological secret in use keeps reappearing: hide every finding
	// whole.
	for _, f := range d.FindAll(data) {
		for i := f.Start; i < f.End; i++ {
			data[i] = '*'
		}
	}
	return data
}

// MaskString is Mask for a string.
func (d *Detector) MaskString(s string) string {
	if _, ok := d.Find([]byte(s)); !ok {
		return s
	}
	return string(d.Mask([]byte(s)))
}

// maskOnce replaces the regions of the findings (sorted by Start) by their
// masked form.
func maskOnce(data []byte, all []Finding) []byte {
	var out []byte
	last := 0 // data[:last] is already in out
	for k := 0; k < len(all); {
		start, end := all[k].Start, all[k].End
		for k++; k < len(all) && all[k].Start < end; k++ {
			end = max(end, all[k].End)
		}
		// Widen to the surrounding token, so that what is left of it
		// cannot join the kept prefix into a new key shape.
		for start > last && isKeyByte(data[start-1]) {
			start--
		}
		for end < len(data) && isKeyByte(data[end]) {
			end++
		}
		for k < len(all) && all[k].Start < end {
			end = max(end, all[k].End)
			k++
		}
		out = append(out, data[last:start]...)
		out = append(out, Mask(string(data[start:end]))...)
		last = end
	}
	return append(out, data[last:]...)
}

// Mask returns s cut to at most its first four bytes (never inside a UTF-8
// sequence or after an odd backslash, so that a masked JSON string stays
// valid) followed by "…"; a value of four bytes or less becomes "…".
func Mask(s string) string {
	if len(s) <= 4 {
		return ellipsis
	}
	n := 4
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	p := s[:n]
	if t := strings.TrimRight(p, `\`); (len(p)-len(t))%2 == 1 {
		p = p[:len(p)-1]
	}
	return p + ellipsis
}

// URLPassword returns the password in a URL's user info
// (https://user:password@host/…), or "" when there is none or raw does not
// parse: a secret in use when the URL is a base URL.
func URLPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}
