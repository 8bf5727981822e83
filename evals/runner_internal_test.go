package evals

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthub/agenthub/internal/scriptedmodel"
)

func TestScriptFor(t *testing.T) {
	text := []scriptedmodel.Turn{{Reply: "Final Answer: t"}}
	sc := &Scenario{File: "s.yaml", Script: map[string][]scriptedmodel.Turn{"react-text": text}}
	got, err := scriptFor(sc, "react-text")
	require.NoError(t, err)
	require.Equal(t, text, got)

	_, err = scriptFor(sc, "react-json")
	require.EqualError(t, err, "scenario s.yaml has no script for prompt react-json, nor for another variant of its protocol (json); add script.react-json (needed by --scripted)")

	_, err = scriptFor(sc, "react-yaml")
	require.ErrorContains(t, err, `unknown prompt variant "react-yaml"`)
}
