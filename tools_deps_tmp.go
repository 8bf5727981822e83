//go:build deps

package agenthub

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/stretchr/testify/require"
	_ "golang.org/x/image/draw"
	_ "gopkg.in/dnaeon/go-vcr.v2/recorder"
	_ "gopkg.in/yaml.v3"
)
