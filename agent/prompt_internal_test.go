package agent

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/parser"
)

func TestLoadVariantsProtocolHeader(t *testing.T) {
	fsys := fstest.MapFS{
		"p/json.tmpl":    {Data: []byte("{{/* protocol: json */ -}}\nReply in JSON.")},
		"p/text.tmpl":    {Data: []byte("{{/* protocol: text */ -}}\nReply in text.")},
		"p/bare.tmpl":    {Data: []byte("No header at all.")},
		"p/unknown.tmpl": {Data: []byte("{{/* protocol: yaml */ -}}\nHm.")},
		"p/notes.md":     {Data: []byte("not a template")},
	}
	got := map[string]parser.Protocol{}
	for name, v := range mustLoadVariants(fsys, "p") {
		got[name] = v.protocol
	}
	require.Equal(t, map[string]parser.Protocol{"json": parser.JSON, "text": parser.Text, "bare": parser.Auto, "unknown": parser.Auto}, got)
}
