package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxPartValue is the largest non-file multipart field, in bytes, whose text
// is kept in the canonical form (so that a miss shows it); larger fields and
// all files are compared by size and SHA-256 only.
const maxPartValue = 4 << 10

// Request is the canonical form of an HTTP request: what the matcher
// compares and what a miss diffs. Two requests match when their canonical
// forms are equal.
type Request struct {
	// Method is the upper-case HTTP method.
	Method string
	// Path is the escaped URL path; host and port are ignored.
	Path string
	// Query is the query string with keys sorted and secret-named values
	// replaced by Redacted.
	Query string
	// MediaType is the Content-Type media type without parameters (so a
	// multipart boundary never counts), lower-case; empty when absent.
	MediaType string
	// Body is the body in comparable form: parsed JSON (map[string]any,
	// []any, float64, string, bool or nil), []Part for multipart bodies,
	// url.Values for forms, the text itself for other UTF-8 bodies, and
	// "sha256:<hex> (<n> bytes)" for binary ones. Nil when there is no body.
	Body any

	key string
}

// Part is the canonical form of one part of a multipart body.
type Part struct {
	// Name is the form field name.
	Name string
	// FileName is the file name, empty for plain fields.
	FileName string
	// ContentType is the part's own Content-Type header, verbatim.
	ContentType string
	// Size is the length of the part's content in bytes.
	Size int
	// SHA256 is the hex SHA-256 of the part's content.
	SHA256 string
	// Value is the content of a plain (non-file) UTF-8 field of at most
	// 4 KiB, kept so that a miss can show it; empty otherwise.
	Value string `json:",omitempty"`
}

// canonicalize returns the canonical form of a request given its method,
// URL, Content-Type header and body. It never fails: a body that does not parse as its media
// type says is compared byte for byte.
func canonicalize(method string, u *url.URL, contentType string, body []byte) Request {
	r := Request{Method: strings.ToUpper(method)}
	if u != nil {
		r.Path = u.EscapedPath()
		r.Query = canonicalQuery(u.RawQuery)
	}
	var params map[string]string
	if contentType != "" {
		mt, p, err := mime.ParseMediaType(contentType)
		if err != nil {
			// Keep what precedes the parameters so that a malformed
			// parameter never makes two requests look alike.
			mt, _, _ = strings.Cut(contentType, ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
		}
		r.MediaType, params = mt, p
	}
	r.Body, r.key = canonicalBody(r.MediaType, params, body)
	r.key = r.Method + " " + r.Path + "?" + r.Query + "\n" + r.MediaType + "\n" + r.key
	return r
}

// Equal reports whether two canonical requests match.
func (r Request) Equal(o Request) bool { return r.key == o.key }

// canonicalQuery sorts the query by key (values of one key keep their
// order) and redacts secret-named keys; an unparseable query is kept as is.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return raw
	}
	return redactValues(v).Encode()
}

// canonicalBody returns the comparable body and its equality key.
func canonicalBody(mediaType string, params map[string]string, body []byte) (any, string) {
	if len(body) == 0 {
		return nil, ""
	}
	switch {
	case isJSON(mediaType) || mediaType == "":
		if v, ok := parseJSON(body); ok {
			b, err := json.Marshal(v)
			if err == nil {
				return v, "json:" + string(b)
			}
		}
	case strings.HasPrefix(mediaType, "multipart/") && params["boundary"] != "":
		if parts, err := parseMultipart(body, params["boundary"]); err == nil {
			b, err := json.Marshal(parts)
			if err == nil {
				return parts, "multipart:" + string(b)
			}
		}
	case mediaType == "application/x-www-form-urlencoded":
		if v, err := url.ParseQuery(string(body)); err == nil {
			v = redactValues(v)
			return v, "form:" + v.Encode()
		}
	}
	if utf8.Valid(body) {
		return string(body), "raw:" + string(body)
	}
	sum := sha256.Sum256(body)
	return fmt.Sprintf("sha256:%s (%d bytes)", hex.EncodeToString(sum[:]), len(body)), "raw:" + string(body)
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// parseJSON parses exactly one JSON value; trailing data fails.
func parseJSON(body []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return v, true
}

// parseMultipart reads every part of a multipart body.
func parseMultipart(body []byte, boundary string) ([]Part, error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	parts := []Part{}
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		var text bytes.Buffer
		w := io.Writer(h)
		if p.FileName() == "" {
			w = io.MultiWriter(h, &limitedBuffer{buf: &text, max: maxPartValue})
		}
		n, err := io.Copy(w, p)
		if err != nil {
			return nil, err
		}
		part := Part{
			Name:        p.FormName(),
			FileName:    p.FileName(),
			ContentType: p.Header.Get("Content-Type"),
			Size:        int(n),
			SHA256:      hex.EncodeToString(h.Sum(nil)),
		}
		if p.FileName() == "" && n <= maxPartValue && utf8.Valid(text.Bytes()) {
			part.Value = text.String()
		}
		parts = append(parts, part)
	}
}

// limitedBuffer keeps the first max bytes written to it and drops the rest
// without failing the write.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
