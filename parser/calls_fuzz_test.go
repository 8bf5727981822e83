package parser_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agenthub/agenthub/parser"
)

// Separators of the fuzzer's calls blob: calls are separated by callSep,
// and the ID, name and arguments of a call by fieldSep.
const (
	callSep  = "\x1e"
	fieldSep = "\x1f"
)

// encodeCalls and decodeCalls map calls to the fuzzer's string blob and
// back ("" is no call at all).
func encodeCalls(calls []parser.Call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.ID + fieldSep + c.Name + fieldSep + c.Arguments
	}
	return strings.Join(parts, callSep)
}

func decodeCalls(blob string) []parser.Call {
	if blob == "" {
		return nil
	}
	var calls []parser.Call
	for _, part := range strings.Split(blob, callSep) {
		f := strings.SplitN(part, fieldSep, 3)
		for len(f) < 3 {
			f = append(f, "")
		}
		calls = append(calls, parser.Call{ID: f[0], Name: f[1], Arguments: f[2]})
	}
	return calls
}

// FuzzDecideCalls checks the invariants of DecideCalls on arbitrary content
// and calls, seeded from the native golden fixtures: no panic; the calls
// given are not modified; calls in are calls out, in order, with the same
// ids and names; a call carries Err exactly when its name is blank or its
// arguments are not a JSON object, with the code the rules name; valid
// arguments come out compacted and mean the same JSON; an error is only
// empty_reply for a message with no calls; the result is deterministic and
// renders as JSON.
func FuzzDecideCalls(f *testing.F) {
	for _, fx := range loadNativeFixtures(f) {
		f.Add(fx.content, encodeCalls(fx.calls))
	}
	f.Add("<think>x", "a"+fieldSep+"echo"+fieldSep+` {"a" : [1, 2.50e1, "\u00e9 "]} `)
	f.Add("", fieldSep+fieldSep+callSep+fieldSep+"\u200b"+fieldSep+"null")
	f.Fuzz(func(t *testing.T, content, blob string) {
		calls := decodeCalls(blob)
		before := slices.Clone(calls)
		d, err := parser.DecideCalls(content, calls)
		if !reflect.DeepEqual(before, calls) {
			t.Fatalf("DecideCalls modified its calls: %+v became %+v", before, calls)
		}
		d2, err2 := parser.DecideCalls(content, calls)
		if !reflect.DeepEqual(d, d2) || !reflect.DeepEqual(err, err2) {
			t.Fatalf("DecideCalls is not deterministic: %+v, %v then %+v, %v", d, err, d2, err2)
		}
		out, rerr := parser.Render(d, err)
		if rerr != nil || !json.Valid(out) {
			t.Fatalf("Render: %v: %s", rerr, out)
		}
		if len(d.Thought)+len(d.FinalAnswer) > len(content) {
			t.Fatalf("decision holds more content than the %d bytes given: %+v", len(content), d)
		}
		if err != nil {
			var pe *parser.Error
			if !errors.As(err, &pe) || pe.Code != parser.CodeEmptyReply || pe.Message == "" || pe.Line != 0 {
				t.Fatalf("error %v (%T) is not an empty_reply *Error", err, err)
			}
			if len(calls) > 0 || !reflect.DeepEqual(d, parser.Decision{}) {
				t.Fatalf("error %v with %d calls or a decision %+v", err, len(calls), d)
			}
			return
		}
		if len(calls) == 0 {
			if d.Kind != parser.KindFinal || d.FinalAnswer == "" || d.Calls != nil {
				t.Fatalf("no calls gave %+v, not a final answer", d)
			}
			return
		}
		if d.Kind != parser.KindToolCalls || d.FinalAnswer != "" || len(d.Calls) != len(calls) {
			t.Fatalf("%d calls gave %+v", len(calls), d)
		}
		for i, in := range calls {
			checkCall(t, i, in, d.Calls[i])
		}
	})
}

// checkCall fails t when got, the i-th call DecideCalls returned for in,
// breaks an invariant.
func checkCall(t *testing.T, i int, in, got parser.Call) {
	t.Helper()
	if got.ID != in.ID || got.Name != in.Name {
		t.Fatalf("call %d: id/name %q/%q came out as %q/%q", i, in.ID, in.Name, got.ID, got.Name)
	}
	isObject := json.Valid([]byte(in.Arguments)) &&
		strings.HasPrefix(strings.TrimLeft(in.Arguments, " \t\r\n"), "{")
	var want parser.Code
	switch {
	case parser.IsBlank(in.Name):
		want = parser.CodeMissingAction
	case !json.Valid([]byte(in.Arguments)):
		want = parser.CodeInvalidJSON
	case !isObject:
		want = parser.CodeInvalidArguments
	}
	if want == "" {
		if got.Err != nil {
			t.Fatalf("call %d %+v: unexpected error %v", i, in, got.Err)
		}
		if !json.Valid([]byte(got.Arguments)) || len(got.Arguments) > len(in.Arguments) {
			t.Fatalf("call %d: arguments %q came out as %q", i, in.Arguments, got.Arguments)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(got.Arguments)); err != nil || buf.String() != got.Arguments {
			t.Fatalf("call %d: arguments %q are not compact", i, got.Arguments)
		}
		if a, b := decodeAny(t, in.Arguments), decodeAny(t, got.Arguments); !reflect.DeepEqual(a, b) {
			t.Fatalf("call %d: compacting changed the arguments: %v became %v", i, a, b)
		}
		return
	}
	if got.Err == nil || got.Err.Code != want || got.Err.Message == "" || got.Err.Line != 0 {
		t.Fatalf("call %d %+v: error %+v, want code %s", i, in, got.Err, want)
	}
	if got.Arguments != in.Arguments {
		t.Fatalf("call %d: the arguments of a failed call changed: %q became %q", i, in.Arguments, got.Arguments)
	}
}

// decodeAny decodes a valid JSON text, numbers kept as json.Number.
func decodeAny(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}
