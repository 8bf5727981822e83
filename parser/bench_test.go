package parser_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenthub/agenthub/parser"
)

// BenchmarkParse measures throughput (MB/s) over the whole fixture corpus
// and over long replies of 4 KiB, 256 KiB and 4 MiB; the per-byte cost must
// stay flat as replies grow (linear time).
func BenchmarkParse(b *testing.B) {
	fixtures := loadFixtures(b)
	b.Run("corpus", func(b *testing.B) {
		total := 0
		for _, fx := range fixtures {
			total += len(fx.reply)
		}
		b.SetBytes(int64(total))
		b.ReportAllocs()
		for b.Loop() {
			for _, fx := range fixtures {
				_, _ = parser.Parse(fx.reply, parser.WithProtocol(fixtureProtocol(fx.name)))
			}
		}
	})
	for _, shape := range []struct {
		name  string
		reply func(size int) string
	}{
		{"text", longTextReply},
		{"final", longFinalReply},
		{"json", longJSONReply},
	} {
		for _, size := range []int{4 << 10, 256 << 10, 4 << 20} {
			reply := shape.reply(size)
			b.Run(fmt.Sprintf("%s/%dKiB", shape.name, size>>10), func(b *testing.B) {
				if _, err := parser.Parse(reply); err != nil {
					b.Fatalf("Parse: %v", err)
				}
				b.SetBytes(int64(len(reply)))
				b.ReportAllocs()
				for b.Loop() {
					_, _ = parser.Parse(reply)
				}
			})
		}
	}
}

// filler returns about n bytes of mixed prose, code fences, label-like text
// and JSON, so that every branch of the scan is exercised.
func filler(n int) string {
	lines := []string{
		"I should check the image size before scaling it, then report back.",
		"思考：先确认图片路径，再调用工具。",
		"```go",
		"Action: not_a_label_inside_a_fence",
		"```",
		`{"width": 320, "height": 240, "note": "a } brace"}`,
		"- **Note**: the Action item here is prose, not a label.",
	}
	var sb strings.Builder
	for sb.Len() < n { // whole cycles, so that every fence is closed
		for _, l := range lines {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func longTextReply(size int) string {
	return "Thought: " + filler(size/2) + "Action: image_scaling\nAction Input:\n" + filler(size/2) +
		"Observation: the model made this up\n"
}

func longFinalReply(size int) string {
	return "Thought: " + filler(size/2) + "Final Answer: " + filler(size/2)
}

func longJSONReply(size int) string {
	return `{"thought": "` + strings.Repeat("plan the resize, ", size/34) + `", "action": "image_scaling", ` +
		`"action_input": {"path": "` + strings.Repeat("a/", size/4) + `in.png", "width": 320}}`
}

// BenchmarkParseAdversarial runs replies built to defeat a linear scan
// (deep nesting, repeated labels, unclosed fences and brackets) at 64 KiB
// and 1 MiB; MB/s must not fall as the size grows.
func BenchmarkParseAdversarial(b *testing.B) {
	shapes := []struct {
		name  string
		proto parser.Protocol
		unit  string
		head  string
	}{
		{"none-actions", parser.Auto, "Action: None\n", ""},
		{"orphan-inputs", parser.Auto, "Action Input: x\n", ""},
		{"fences", parser.Auto, "```\nAction: a\n", ""},
		{"open-brackets", parser.Auto, "{[(", "Action: a\nAction Input: "},
		{"call-parens", parser.Auto, "(", "Action: a"},
		{"inline-input-words", parser.Auto, "action input action ", "Action: "},
		{"json-open-braces", parser.JSON, `{"a":`, ""},
		{"json-deep-arrays", parser.Auto, "[", `{"action": "a", "args": `},
		{"decorations", parser.Auto, "*_#->+ ", ""},
		{"observation-lines", parser.Auto, "```\nObservation: x\n", "Action: a\nAction Input: "},
	}
	for _, sh := range shapes {
		for _, size := range []int{64 << 10, 1 << 20} {
			reply := sh.head + strings.Repeat(sh.unit, size/len(sh.unit))
			b.Run(fmt.Sprintf("%s/%dKiB", sh.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(reply)))
				b.ReportAllocs()
				for b.Loop() {
					_, _ = parser.Parse(reply, parser.WithProtocol(sh.proto))
				}
			})
		}
	}
}

// BenchmarkDecideCalls measures throughput (MB/s of content and arguments)
// over the native fixture corpus, over one call whose pretty-printed
// arguments are 4 KiB, 256 KiB and 4 MiB, over 16 and 4096 small parallel
// calls, and over invalid arguments of the same sizes; the per-byte cost
// must stay flat as the input grows (linear time).
func BenchmarkDecideCalls(b *testing.B) {
	fixtures := loadNativeFixtures(b)
	b.Run("corpus", func(b *testing.B) {
		total := 0
		for _, fx := range fixtures {
			total += len(fx.content)
			for _, c := range fx.calls {
				total += len(c.ID) + len(c.Name) + len(c.Arguments)
			}
		}
		b.SetBytes(int64(total))
		b.ReportAllocs()
		for b.Loop() {
			for _, fx := range fixtures {
				_, _ = parser.DecideCalls(fx.content, fx.calls)
			}
		}
	})
	bench := func(name, content string, calls []parser.Call) {
		total := len(content)
		for _, c := range calls {
			total += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = parser.DecideCalls(content, calls)
			}
		})
	}
	for _, size := range []int{4 << 10, 256 << 10, 4 << 20} {
		args := "{\n  \"path\": \"" + strings.Repeat("a/", size/4) + "in.png\",\n  \"note\": \"" +
			strings.Repeat("plan  the resize ", size/34) + "\",\n  \"width\": 320\n}"
		bench(fmt.Sprintf("one-call/%dKiB", size>>10), "<think>"+filler(size/8)+"</think>resizing",
			[]parser.Call{{ID: "call_1", Name: "image_scaling", Arguments: args}})
		bench(fmt.Sprintf("invalid/%dKiB", size>>10), "",
			[]parser.Call{{ID: "call_1", Name: "image_scaling", Arguments: args[:len(args)-1]}})
	}
	for _, n := range []int{16, 4096} {
		calls := make([]parser.Call, n)
		for i := range calls {
			calls[i] = parser.Call{ID: fmt.Sprintf("call_%d", i), Name: "echo", Arguments: `{"text": "status?"}`}
		}
		bench(fmt.Sprintf("parallel/%d", n), "", calls)
	}
}
