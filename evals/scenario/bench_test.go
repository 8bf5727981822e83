package scenario

import "testing"

func BenchmarkParseScenario(b *testing.B) {
	data := fullScenario(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("full.yaml", data, nil); err != nil {
			b.Fatal(err)
		}
	}
}
