package searchindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkScore measures Scorer.Score on chunk texts of 250
// Zipf-distributed ASCII words (mixed case), as the word searches rank
// their candidates, for a one-word and a two-word query.
func BenchmarkScore(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", r.Uint32()%0xfffff)
		if i%7 == 0 {
			vocab[i] = strings.ToUpper(vocab[i][:1]) + vocab[i][1:]
		}
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	texts := make([]string, 400)
	for i := range texts {
		ws := make([]string, 250)
		for j := range ws {
			ws[j] = vocab[zipf.Uint64()]
		}
		texts[i] = strings.Join(ws, " ") + "."
	}
	st := &TermStats{Chunks: 100000, Tokens: 25000000, Docs: map[string]int64{}}
	for i := range 50 {
		st.Docs[strings.ToLower(vocab[i])] = int64(50000 - 900*i)
	}
	w := &Words{Name: "bench"}
	for _, q := range []string{vocab[3], vocab[5] + " " + vocab[40]} {
		sc, err := w.NewScorer(context.Background(), st, QueryWords(q))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%d_words", len(QueryWords(q))), func(b *testing.B) {
			var sum float64
			for b.Loop() {
				for _, t := range texts {
					sum += sc.Score(t)
				}
			}
			if sum <= 0 {
				b.Fatal("nothing scored")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts))/1000, "µs/text")
		})
	}
}
