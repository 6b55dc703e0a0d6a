package semantic

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/datasource"
	"github.com/stewardhq/steward/internal/eritest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// BenchmarkResolveFunction measures what semantic_search costs every
// request: ten local sources and one ERI source whose answers are in the
// five-minute cache.
func BenchmarkResolveFunction(b *testing.B) {
	srv := eritest.New(b, eritest.Options{})
	var sources []datasource.Source
	for i := 0; i < 10; i++ {
		sources = append(sources, src(fmt.Sprintf("s%02d", i), i, policy.Medium))
	}
	sources = append(sources, datasource.Source{ID: "hr", Name: "HR", Kind: datasource.ERI, Number: 20, MaxMatches: 10, Security: policy.AllowAny, Hostname: srv.URL(), Auth: datasource.AuthNone})
	f := newFixture(b, sources...)
	rc := tool.ResolveContext{Definition: f.tool.Definition(), ProviderConfidence: policy.High, ProviderTrusted: true, Chat: &chat.Thread{}}
	if fn, err := f.tool.ResolveFunction(context.Background(), rc); err != nil || !strings.Contains(fn.Description, "id=hr") {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.tool.ResolveFunction(context.Background(), rc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchAndAssemble measures one semantic_search call over three
// local sources of ten passages each, filtered and assembled.
func BenchmarkSearchAndAssemble(b *testing.B) {
	f := newFixture(b, src("a", 1, policy.Medium), src("b", 2, policy.Medium), src("c", 3, policy.Medium))
	for _, id := range []string{"a", "b", "c"} {
		for i := 0; i < 11; i++ {
			f.local.hits[id] = append(f.local.hits[id], datasource.LocalHit{Path: "/data/" + id + "/doc.md", Chunk: i,
				Text: "budget " + strings.Repeat("The quarterly plan names the owners, the dates and the risks of every project. ", 20)})
		}
	}
	for i := range f.sources {
		f.sources[i].MaxMatches = 10
	}
	ec := tool.ExecContext{Definition: f.tool.Definition(), ProviderConfidence: policy.High, ProviderTrusted: true, Chat: &chat.Thread{}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := f.tool.Execute(context.Background(), []byte(`{"query":"budget"}`), ec)
		if err != nil || len(res.Sources) != 30 {
			b.Fatalf("%v %d", err, len(res.Sources))
		}
	}
}
