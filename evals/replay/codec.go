package replay

import (
	"encoding/base64"
	"fmt"

	"gopkg.in/dnaeon/go-vcr.v2/cassette"
	"gopkg.in/yaml.v3"
)

// formatVersion is the go-vcr v2 cassette format version written.
const formatVersion = 1

// cassetteFile is the on-disk shape of a go-vcr v2 cassette.
type cassetteFile struct {
	Version      int                     `yaml:"version"`
	Interactions []*cassette.Interaction `yaml:"interactions"`
}

// encodeCassette renders interactions in the go-vcr v2 format. Bodies that
// yaml.v3 cannot round-trip as text (invalid UTF-8, a leading newline, a
// tab-indented line...) are written as !!binary (base64), which go-vcr
// reads back into the same string byte for byte.
func encodeCassette(interactions []*cassette.Interaction) ([]byte, error) {
	f := cassetteFile{Version: formatVersion, Interactions: make([]*cassette.Interaction, len(interactions))}
	type binaryBody struct {
		index int
		side  string // "request" or "response"
		body  string
	}
	var binary []binaryBody
	for i, in := range interactions {
		cp := *in
		if !yamlSafe(cp.Request.Body) {
			binary = append(binary, binaryBody{i, "request", cp.Request.Body})
			cp.Request.Body = ""
		}
		if !yamlSafe(cp.Response.Body) {
			binary = append(binary, binaryBody{i, "response", cp.Response.Body})
			cp.Response.Body = ""
		}
		f.Interactions[i] = &cp
	}
	var node yaml.Node
	if err := node.Encode(&f); err != nil {
		return nil, fmt.Errorf("encode cassette: %w", err)
	}
	if len(binary) > 0 {
		items := mappingValue(&node, "interactions")
		for _, b := range binary {
			if items == nil || b.index >= len(items.Content) {
				return nil, fmt.Errorf("encode cassette: interaction %d not in the encoded tree", b.index)
			}
			body := mappingValue(mappingValue(items.Content[b.index], b.side), "body")
			if body == nil {
				return nil, fmt.Errorf("encode cassette: interaction %d has no %s body node", b.index, b.side)
			}
			body.Tag = "!!binary"
			body.Value = base64.StdEncoding.EncodeToString([]byte(b.body))
			body.Style = 0
		}
	}
	data, err := yaml.Marshal(&node)
	if err != nil {
		return nil, fmt.Errorf("encode cassette: %w", err)
	}
	return append([]byte("---\n"), data...), nil
}

// mappingValue returns the value node of key in mapping node n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// yamlSafe reports whether s survives a yaml.v3 round trip as a plain
// string. Invalid UTF-8 is safe: yaml.v3 writes it as !!binary itself.
func yamlSafe(s string) bool {
	if s == "" {
		return true
	}
	data, err := yaml.Marshal(s)
	if err != nil {
		return false
	}
	var back string
	return yaml.Unmarshal(data, &back) == nil && back == s
}

// decodeCassette parses a go-vcr v2 cassette.
func decodeCassette(data []byte) ([]*cassette.Interaction, error) {
	var f cassetteFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Version != formatVersion {
		return nil, fmt.Errorf("unsupported cassette version %d (want %d)", f.Version, formatVersion)
	}
	for i, in := range f.Interactions {
		switch {
		case in == nil:
			return nil, fmt.Errorf("interaction %d is empty", i)
		case in.Request.Method == "" || in.Request.URL == "":
			return nil, fmt.Errorf("interaction %d: the request has no method or url", i)
		case in.Response.Code < 100 || in.Response.Code > TransportErrorStatus:
			// A cut-off file loses the response block: replaying it would
			// look like a network failure and blame the agent.
			return nil, fmt.Errorf("interaction %d (%s %s): the response has no valid status code (got %d); the cassette is damaged: re-record it", i, in.Request.Method, in.Request.URL, in.Response.Code)
		case in.Response.Duration < 0:
			return nil, fmt.Errorf("interaction %d: negative recorded duration %s", i, in.Response.Duration)
		}
	}
	return f.Interactions, nil
}
