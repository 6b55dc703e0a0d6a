package chatcompletions

import (
	"bytes"
	"testing"
)

// BenchmarkReadSSE decodes every recorded streamed answer once per
// iteration.
func BenchmarkReadSSE(b *testing.B) {
	var bodies [][]byte
	total := 0
	for _, rec := range loadRecordings(b) {
		for _, in := range rec.Interactions {
			if len(in.Body) > 0 && in.Body[0] != '{' {
				bodies = append(bodies, in.Body)
				total += len(in.Body)
			}
		}
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, body := range bodies {
			_, _ = readSSE(bytes.NewReader(body), func(string) {})
		}
	}
}
