package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// plainBody is the non-streamed chat.completion body of r.
func plainBody(t testing.TB, r Reply) []byte {
	t.Helper()
	calls := r.ToolCalls
	if calls == nil {
		calls = []ToolCall{}
	}
	b, err := json.Marshal(map[string]any{
		"id": r.ID, "model": r.Model, "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "finish_reason": nullable(r.FinishReason),
			"message": map[string]any{"role": "assistant", "content": r.Content, "reasoning_content": r.Reasoning, "tool_calls": calls}}},
		"usage": usageBody(r.Usage),
	})
	require.NoError(t, err)
	return b
}

// streamBody is r as an event stream whose strings arrive in pieces of at
// most n runes: reasoning, then content, then each call (id, type and the
// first piece of its name together), then finish_reason, a usage chunk
// without choices, [DONE].
func streamBody(t testing.TB, r Reply, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	chunk := func(choices []any, usage any) {
		data, err := json.Marshal(map[string]any{"id": r.ID, "model": r.Model, "object": "chat.completion.chunk",
			"choices": choices, "usage": usage})
		require.NoError(t, err)
		fmt.Fprintf(&b, "data: %s\n\n", data)
	}
	delta := func(d map[string]any) {
		chunk([]any{map[string]any{"index": 0, "delta": d, "finish_reason": nil}}, nil)
	}
	delta(map[string]any{"role": "assistant", "content": ""})
	for _, p := range pieces(r.Reasoning, n) {
		delta(map[string]any{"reasoning_content": p})
	}
	for _, p := range pieces(r.Content, n) {
		delta(map[string]any{"content": p})
	}
	for i, c := range r.ToolCalls {
		names, args := pieces(c.Function.Name, n), pieces(c.Function.Arguments, n)
		first := map[string]any{"index": i, "id": c.ID, "type": c.Type, "function": map[string]any{"name": at(names, 0), "arguments": ""}}
		delta(map[string]any{"tool_calls": []any{first}})
		for _, p := range names[min(1, len(names)):] {
			delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"name": p}}}})
		}
		for _, p := range args {
			delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}})
		}
	}
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": nullable(r.FinishReason)}}, nil)
	chunk([]any{}, usageBody(r.Usage))
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func usageBody(u Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens}}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// pieces cuts s into pieces of at most n runes.
func pieces(s string, n int) []string {
	var out []string
	for s != "" {
		cut, runes := 0, 0
		for cut < len(s) && runes < n {
			_, w := utf8.DecodeRuneInString(s[cut:])
			cut += w
			runes++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// replySize is the assembled size AssembleStream bounds.
func replySize(r Reply) int {
	n := len(r.Content) + len(r.Reasoning)
	for _, c := range r.ToolCalls {
		n += len(c.Function.Name) + len(c.Function.Arguments)
	}
	return n
}

// FuzzAssembleStream checks that any bytes assemble to a Reply or an
// *APIError, never a panic; that a Reply is bounded and sane; and that a
// stream and its non-streamed equivalent decode to the same Reply: the
// Reply re-encoded as a JSON body, and as a stream cut into other pieces,
// decodes back to itself.
func FuzzAssembleStream(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "bodies", "*.sse"))
	require.NoError(f, err)
	require.NotEmpty(f, files)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
		f.Add(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")))
		f.Add(b[:len(b)/2])
	}
	for _, s := range []string{
		"", "data: [DONE]\n\n", "\uFEFF: hi\r\rdata:[DONE]\r\r",
		"event: error\ndata: overloaded\n\n",
		events(`{"error":{"code":502,"message":"Provider disconnected"}}`),
		events(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"e","arguments":{"x":1}}}]}}]}`),
		events(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-3,"function":{"arguments":"\u00e9"}}]}}]}`),
		events(`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":-1}}`),
		"data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		got, err := AssembleStream(bytes.NewReader(stream))
		if err != nil {
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *APIError", err)
			}
			if ae.Status != 200 {
				t.Fatalf("APIError.Status = %d, want 200", ae.Status)
			}
			if ae.Retryable && ae.Code != CodeStreamCut && !retryableCode(ae.Code) {
				t.Fatalf("retryable error of code %q: %v", ae.Code, err)
			}
			if len(ae.Error()) > 1000 {
				t.Fatalf("error message of %d bytes", len(ae.Error()))
			}
			return
		}
		if !got.Streamed || got.TTFT != 0 {
			t.Fatalf("Streamed %v, TTFT %v: want true, 0", got.Streamed, got.TTFT)
		}
		if n := replySize(got); n > MaxResponseBytes || n > 3*len(stream) { // an invalid byte decodes as 3-byte U+FFFD
			t.Fatalf("assembled %d bytes from a %d-byte stream", n, len(stream))
		}
		u := got.Usage
		if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.ReasoningTokens < 0 || u.CachedTokens < 0 {
			t.Fatalf("negative token counts accepted: %+v", u)
		}
		for _, c := range got.ToolCalls {
			if c.Type == "" {
				t.Fatalf("tool call without a type: %+v", c)
			}
		}

		plain, err := DecodeResponse(200, plainBody(t, got))
		require.NoError(t, err)
		plain.Streamed = true
		if diff := cmp.Diff(got, plain); diff != "" {
			t.Fatalf("streamed and plain Reply mismatch (-streamed +plain):\n%s", diff)
		}
		// Short texts are cut finely, long ones in about 32 pieces.
		again, err := AssembleStream(bytes.NewReader(streamBody(t, got, 1+len(stream)%5+replySize(got)/32)))
		require.NoError(t, err)
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("Reply of the re-cut stream mismatch (-first +again):\n%s", diff)
		}
	})
}

func TestStreamBodyHelpers(t *testing.T) {
	// The fuzz test's encoders agree with the committed bodies.
	for _, tt := range bodyReplies {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			want.Streamed = true
			for _, n := range []int{1, 3, 1000} {
				got, err := AssembleStream(bytes.NewReader(streamBody(t, want, n)))
				require.NoError(t, err)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("pieces of %d: Reply mismatch (-want +got):\n%s", n, diff)
				}
			}
			got, err := DecodeResponse(200, plainBody(t, tt.want))
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plain Reply mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkAssembleStream measures SSE assembly (MB/s of event-stream
// bytes) and reports plain_ns/op, DecodeResponse's time for the equivalent
// JSON body measured in the same run, and x_plain, the ratio of the two.
func BenchmarkAssembleStream(b *testing.B) {
	long := Reply{Content: strings.Repeat("Final Answer: the picture is 256 pixels wide. ", 40),
		Reasoning:    strings.Repeat("The user wants the picture smaller; image_scaling does it. ", 60),
		FinishReason: "stop", Usage: Usage{PromptTokens: 412, CompletionTokens: 900, ReasoningTokens: 700, CachedTokens: 384},
		Model: "glm-4.7-flash", ID: "20260314101500a1b2c3d4e5f60718"}
	cases := []struct {
		name        string
		sse, plain  []byte
		description string
	}{
		{"glm-reasoning", body(b, "glm-reasoning.sse"), body(b, "glm-reasoning.json"), "the committed GLM body, a word per chunk"},
		{"openai-parallel-tool-calls", body(b, "openai-parallel-tool-calls.sse"), body(b, "openai-parallel-tool-calls.json"), "two calls, arguments in 5-byte deltas"},
		{"long-reasoning-4-runes", streamBody(b, long, 4), plainBody(b, long), "5.4 KB of text in 4-rune deltas (~1350 chunks)"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.sse)))
			for b.Loop() {
				if _, err := AssembleStream(bytes.NewReader(tc.sse)); err != nil {
					b.Fatal(err)
				}
			}
			streamNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			// b.Loop has stopped the timer: the plain decoding of the same
			// reply, as many times, is timed by hand for the ratio (a
			// nested testing.Benchmark would wait for this one to end).
			start := time.Now()
			for range b.N {
				if _, err := DecodeResponse(200, tc.plain); err != nil {
					b.Fatal(err)
				}
			}
			plainNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			b.ReportMetric(plainNs, "plain_ns/op")
			b.ReportMetric(streamNs/plainNs, "x_plain")
		})
	}
}
