package mailindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	benchOnce  sync.Once
	benchIndex *Index
	benchVocab []string
)

// benchIndexOf builds (once per test binary) an index of
// STEWARD_BENCH_INDEX_MAILS synthetic mails (default 20,000) with 64-dim
// embeddings.
func benchIndexOf(b *testing.B) (*Index, []string) {
	benchOnce.Do(func() {
		n := 20000
		if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_INDEX_MAILS")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "mailindex-bench-")
		if err != nil {
			b.Fatal(err)
		}
		x, err := Open(context.Background(), filepath.Join(dir, "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 4))
		vocab := make([]string, 20000)
		for i := range vocab {
			vocab[i] = fmt.Sprintf("w%x", r.Uint32()%0xfffff)
		}
		zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
		ctx := context.Background()
		if err := x.SaveFolder(ctx, Folder{MailboxID: "mb", Path: "INBOX", ServerMessages: -1, ServerUnseen: -1}); err != nil {
			b.Fatal(err)
		}
		var batch []Incoming
		vecs := map[int64][]float32{}
		for i := 0; i < n; i++ {
			ws := make([]string, 150)
			for j := range ws {
				ws[j] = vocab[zipf.Uint64()]
			}
			m := incoming(uint32(i+1), fmt.Sprint("k", i), strings.Join(ws[:5], " "), fmt.Sprint("s", i%300), "me", strings.Join(ws, " "),
				time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour), Flags{Seen: i%3 == 0})
			batch = append(batch, m)
			if len(batch) == 500 || i == n-1 {
				if err := x.AddBatch(ctx, "mb", "INBOX", batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		var after int64
		for {
			pend, err := x.PendingChunks(ctx, "mb", "m64", after, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(pend) == 0 {
				break
			}
			after = pend[len(pend)-1].ID
			for _, p := range pend {
				v := make([]float32, 64)
				for j := range v {
					v[j] = r.Float32() - 0.5
				}
				vecs[p.ID] = v
			}
			if err := x.SetEmbeddings(ctx, "m64", vecs); err != nil {
				b.Fatal(err)
			}
			clear(vecs)
		}
		benchIndex, benchVocab = x, vocab
	})
	return benchIndex, benchVocab
}

func BenchmarkSearchWords(b *testing.B) {
	x, vocab := benchIndexOf(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name string
		pick func() string
	}{
		{"rare", func() string { return vocab[1000+r.IntN(10000)] }},
		{"common", func() string { return vocab[r.IntN(20)] }},
		{"two words", func() string { return vocab[r.IntN(2000)] + " " + vocab[r.IntN(2000)] }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := x.SearchWords(ctx, "mb", Filter{}, tc.pick(), 40); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSearchVector(b *testing.B) {
	x, _ := benchIndexOf(b)
	ctx := context.Background()
	q := make([]float32, 64)
	for i := range q {
		q[i] = float32(i%7) - 3
	}
	for _, tc := range []struct {
		name string
		f    Filter
	}{{"no filter", Filter{}}, {"unread", Filter{Unread: ptr(true)}}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := x.SearchVector(ctx, "mb", tc.f, "m64", q, 40); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkListAndSummaries(b *testing.B) {
	x, _ := benchIndexOf(b)
	ctx := context.Background()
	b.Run("list newest", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := x.List(ctx, "mb", Filter{}, 0, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	ids, _, _ := x.List(ctx, "mb", Filter{}, 0, 10)
	b.Run("summaries of 10", func(b *testing.B) {
		for b.Loop() {
			if _, err := x.Summaries(ctx, "mb", ids); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("folder states", func(b *testing.B) {
		for b.Loop() {
			if _, err := x.FolderStates(ctx, "mb"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("count by sender", func(b *testing.B) {
		for b.Loop() {
			if _, err := x.Count(ctx, "mb", Filter{}, GroupSender, 20); err != nil {
				b.Fatal(err)
			}
		}
	})
}
