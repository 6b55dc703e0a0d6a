package websearch

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// BenchmarkSearch measures one whole search against loopback: a SearXNG
// answer with five hits, five pages read, budgeted and filtered in one
// batch.
func BenchmarkSearch(b *testing.B) {
	w := newWorld(b)
	var hits []res
	for _, p := range []string{"/1", "/2", "/3", "/4", "/5"} {
		hits = append(hits, res{w.u("news.example.com", p), "Page", "snippet", ""})
	}
	w.searx.respond = func(rw http.ResponseWriter, _ *http.Request, _ string) { writeJSON(rw, searxngBody(hits, nil)) }
	tl := w.tool()
	args, _ := json.Marshal(map[string]any{"query": "harbour"})
	ec := tool.ExecContext{Settings: w.settings("S", nil), ProviderConfidence: policy.Medium}
	if _, err := tl.Execute(context.Background(), args, ec); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tl.Execute(context.Background(), args, ec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMerge measures merging three services' 20 hits each.
func BenchmarkMerge(b *testing.B) {
	var lists []backendHits
	for _, name := range []string{"A", "B", "C"} {
		var hits []hit
		for i := range 20 {
			hits = append(hits, hit{url: "https://news.example.com/" + name + string(rune('a'+i)), title: "t", snippet: "s"})
		}
		lists = append(lists, backendHits{backend: name, hits: hits})
	}
	for b.Loop() {
		merge(append([]backendHits(nil), lists...), 20)
	}
}
