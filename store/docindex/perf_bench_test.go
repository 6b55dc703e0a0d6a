package docindex

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

	"github.com/stewardhq/steward/internal/testenv"
)

// perfIndex is the generated index the latency benchmark queries.
type perfIndex struct {
	x     *Index
	vocab []string
	dim   int
}

var (
	perfOnce sync.Once
	perf     *perfIndex
	perfErr  error
	perfDir  string
)

// TestMain removes the generated latency index (hundreds of MB at 100,000
// chunks) once the benchmarks are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if perf != nil {
		perf.x.Close()
	}
	if perfDir != "" {
		os.RemoveAll(perfDir)
	}
	os.Exit(code)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// Sources of the latency index: most chunks in one, the rest in a second,
// so searches of either find the other's chunks among FTS5's matches.
const (
	perfBig   = "big"
	perfSmall = "small"
)

// buildPerfIndex stores n chunks of 250 Zipf-distributed words (about the
// size of a 512-token chunk), ten to a document, nine in ten in the source
// "big" and the rest in "small", each with a random vector of dim values,
// as the indexer stores them (PutDocuments, then SetEmbeddings of the
// pending chunks).
func buildPerfIndex(ctx context.Context, dir string, n, dim int) (*perfIndex, error) {
	x, err := Open(ctx, filepath.Join(dir, "perf.db"))
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(11, 12))
	vocab := perfVocabOf(r)
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	for _, src := range []string{perfBig, perfSmall} {
		if _, err := x.BeginRun(ctx, Source{ID: src, Path: "/data/" + src, Chunking: "bench", Model: "m"}, time.Now()); err != nil {
			return nil, err
		}
	}
	batch := map[string][]NewDocument{}
	for d := 0; d*10 < n; d++ {
		src := perfBig
		if d%10 == 9 {
			src = perfSmall
		}
		nd := NewDocument{Document: Document{Path: fmt.Sprintf("f%03d/doc%06d.md", d/1000, d), Size: 20000, ModTime: time.Unix(1700000000+int64(d), 0),
			Hash: fmt.Sprint("h", d), Kind: "document", Title: fmt.Sprint("Document ", d)}}
		for c := 0; c < 10 && d*10+c < n; c++ {
			ws := make([]string, 250)
			for j := range ws {
				ws[j] = vocab[zipf.Uint64()]
			}
			nd.Chunks = append(nd.Chunks, Chunk{Text: strings.Join(ws, " ")})
		}
		batch[src] = append(batch[src], nd)
		if len(batch[src]) == 100 {
			if err := x.PutDocuments(ctx, src, batch[src]); err != nil {
				return nil, err
			}
			batch[src] = nil
		}
	}
	for src, docs := range batch {
		if err := x.PutDocuments(ctx, src, docs); err != nil {
			return nil, err
		}
	}
	if err := x.RefreshWordStats(ctx); err != nil {
		return nil, err
	}
	for _, src := range []string{perfBig, perfSmall} {
		var after int64
		for {
			pend, err := x.PendingChunks(ctx, src, "m", after, 1000)
			if err != nil {
				return nil, err
			}
			if len(pend) == 0 {
				break
			}
			after = pend[len(pend)-1].ID
			vecs := make(map[int64][]float32, len(pend))
			for _, p := range pend {
				v := make([]float32, dim)
				for j := range v {
					v[j] = r.Float32() - 0.5
				}
				vecs[p.ID] = v
			}
			if err := x.SetEmbeddings(ctx, "m", vecs); err != nil {
				return nil, err
			}
		}
	}
	return &perfIndex{x: x, vocab: vocab, dim: dim}, nil
}

// perfVocab is the vocabulary of the latency index (the first numbers of
// its random source).
func perfVocab() []string { return perfVocabOf(rand.New(rand.NewPCG(11, 12))) }

func perfVocabOf(r *rand.Rand) []string {
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", r.Uint32()%0xfffff)
	}
	return vocab
}

func perfIndexOf(b *testing.B) *perfIndex {
	perfOnce.Do(func() {
		n, dim := envInt("STEWARD_BENCH_PERF_CHUNKS", 20000), envInt("STEWARD_BENCH_PERF_DIM", 256)
		// STEWARD_BENCH_PERF_KEEP names a folder where the index is built
		// once and kept for the next runs (of the same size).
		if keep := os.Getenv("STEWARD_BENCH_PERF_KEEP"); keep != "" {
			dir := filepath.Join(keep, fmt.Sprintf("docindex-%d-%d", n, dim))
			if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
				x, err := Open(context.Background(), filepath.Join(dir, "perf.db"))
				perf, perfErr = &perfIndex{x: x, vocab: perfVocab(), dim: dim}, err
				return
			}
			_ = os.RemoveAll(dir)
			if perfErr = os.MkdirAll(dir, 0o755); perfErr != nil {
				return
			}
			if perf, perfErr = buildPerfIndex(context.Background(), dir, n, dim); perfErr == nil {
				perfErr = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
			}
			return
		}
		dir, err := os.MkdirTemp("", "docindex-perf-")
		if err != nil {
			perfErr = err
			return
		}
		perfDir = dir
		start := time.Now()
		perf, perfErr = buildPerfIndex(context.Background(), dir, n, dim)
		if perfErr == nil {
			var size int64
			es, _ := os.ReadDir(dir)
			for _, e := range es {
				if fi, err := e.Info(); err == nil {
					size += fi.Size()
				}
			}
			b.Logf("built %d chunks (%d dimensions) in %s; index %.1f MB", n, dim, time.Since(start).Round(time.Second), float64(size)/1e6)
		}
	})
	if perfErr != nil {
		b.Fatal(perfErr)
	}
	return perf
}

// perfQuery is one search of the fixed set.
type perfQuery struct {
	source, text string
	vec          []float32
}

// perfQueries is a fixed mix, as the mail index's latency benchmark has
// it: rare words, common words (held by most chunks) and two-word
// queries, against the large source and the small one in turn.
func perfQueries(vocab []string, dim int) []perfQuery {
	r := rand.New(rand.NewPCG(21, 22))
	var qs []perfQuery
	for i := 0; i < 60; i++ {
		var text string
		switch i % 3 {
		case 0:
			text = vocab[1000+r.IntN(10000)]
		case 1:
			text = vocab[r.IntN(20)]
		default:
			text = vocab[r.IntN(2000)] + " " + vocab[r.IntN(2000)]
		}
		src := perfBig
		if (i/3)%2 == 1 {
			src = perfSmall
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = r.Float32() - 0.5
		}
		qs = append(qs, perfQuery{source: src, text: text, vec: v})
	}
	return qs
}

// BenchmarkSearchLatency reports p50/p95 milliseconds of word searches
// (SearchWords, a window of 40) and hybrid searches (Search: words and
// vectors in parallel, fused, a page of 10 with its texts and documents)
// over a fixed query set on STEWARD_BENCH_PERF_CHUNKS generated chunks
// (default 20,000) with STEWARD_BENCH_PERF_DIM-dimensional vectors
// (default 256), after one untimed pass of the query set, with the CPU
// time of each search beside its wall time. For the figures at 100,000
// chunks:
//
//	STEWARD_BENCH_PERF_CHUNKS=100000 go test -run '^$' -bench SearchLatency -benchtime=3x ./store/docindex/
func BenchmarkSearchLatency(b *testing.B) {
	c := perfIndexOf(b)
	ctx := context.Background()
	qs := perfQueries(c.vocab, c.dim)
	// One untimed pass loads the vectors into memory and brings the word
	// statistics and the pages the queries read into the caches, as a
	// freshly built index has them (the mail index's benchmark measures
	// right after building).
	for _, q := range qs {
		if _, err := c.x.Search(ctx, q.source, Query{Text: q.text, Vector: q.vec, Model: "m", Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
	words := func(q perfQuery) error {
		_, err := c.x.SearchWords(ctx, q.source, q.text, 40)
		return err
	}
	hybrid := func(q perfQuery) error {
		p, err := c.x.Search(ctx, q.source, Query{Text: q.text, Vector: q.vec, Model: "m", Limit: 10})
		if err == nil && (p.VectorErr != nil || len(p.Hits) != 10) {
			err = fmt.Errorf("%q: %d hits, vector error %v", q.text, len(p.Hits), p.VectorErr)
		}
		return err
	}
	for _, tc := range []struct {
		name string
		run  func(perfQuery) error
	}{{"words", words}, {"hybrid", hybrid}} {
		b.Run(tc.name, func(b *testing.B) {
			testenv.ReportQueryLatency(b, qs, tc.run)
		})
	}
}
