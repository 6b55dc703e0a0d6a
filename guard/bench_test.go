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
// The sub-benchmark "rules" runs without the local classifier, "all" with
// it, so one run shows what the classifier costs.
func BenchmarkFilter(b *testing.B) {
	set := labelledSet(b)
	ctx := context.Background()
	total := 0
	for _, l := range set {
		total += len(l.text)
	}
	for _, mode := range benchModes {
		b.Run(mode.name, func(b *testing.B) {
			f := New(Options{Logger: slog.New(slog.DiscardHandler), LocalClassifier: !mode.noLocal})
			f.FilterText(ctx, Source{Kind: WebContent, Label: "warm-up"}, set[0].text)
			b.SetBytes(int64(total))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, l := range set {
					f.FilterText(ctx, Source{Kind: WebContent, Label: "bench"}, l.text)
				}
			}
		})
	}
}

var benchModes = []struct {
	name    string
	noLocal bool
}{{"rules", true}, {"all", false}}

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
	ctx := context.Background()
	for _, mode := range benchModes {
		b.Run(mode.name, func(b *testing.B) {
			f := New(Options{Logger: slog.New(slog.DiscardHandler), LocalClassifier: !mode.noLocal})
			f.FilterText(ctx, Source{Kind: WebContent, Label: "warm-up"}, "warm up")
			b.SetBytes(int64(len(page)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.FilterText(ctx, Source{Kind: WebContent, Label: "bench"}, page)
			}
		})
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
