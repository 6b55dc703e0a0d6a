package guard

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// BenchmarkFilter measures throughput on a mixed corpus: the whole labelled
// set (pages, mails, JSON, code, non-English text, attacks) as one text per
// document.
func BenchmarkFilter(b *testing.B) {
	set := labelledSet(b)
	f := New(Options{Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	total := 0
	for _, l := range set {
		total += len(l.text)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range set {
			f.FilterText(ctx, Source{Kind: WebContent, Label: "bench"}, l.text)
		}
	}
}

// BenchmarkFilterLargePage measures one large benign page, the common case
// of a long article.
func BenchmarkFilterLargePage(b *testing.B) {
	var sb strings.Builder
	for _, l := range labelledSet(b) {
		if !l.attack {
			sb.WriteString(l.text)
			sb.WriteString("\n\n")
		}
	}
	page := sb.String()
	f := New(Options{Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.FilterText(ctx, Source{Kind: WebContent, Label: "bench"}, page)
	}
}

// BenchmarkBuild measures the build of the rules that the first filtered
// text of a process pays (New itself builds nothing).
func BenchmarkBuild(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if d := compile(); d.ac == nil {
			b.Fatal("no automaton built")
		}
	}
}
