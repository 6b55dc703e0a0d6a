package local

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/internal/embedtest"
	"github.com/stewardhq/steward/internal/testenv"
)

// hashModel is the loopback embedding server's stand-in model for
// benchmarks: words hashed into dim buckets. It costs little, so the
// figures show the indexer, the HTTP exchange and the index.
func hashModel(dim int) embedtest.Model {
	return func(s string) []float32 {
		v := make([]float32, dim)
		for _, w := range strings.Fields(strings.ToLower(s)) {
			h := fnv.New32a()
			_, _ = h.Write([]byte(w))
			v[h.Sum32()%uint32(dim)]++
		}
		v[0] += 0.01
		return v
	}
}

// writeCorpus generates n documents of about size bytes of text each, of
// Zipf-distributed pseudo-words: in every 20, 7 Markdown, 3 plain text, 4
// HTML, 2 Go, 2 CSV, 1 DOCX and 1 PDF (made from the same kind of text by
// writeDOCX and writePDF). It returns the total size of the files.
func writeCorpus(b *testing.B, dir string, n, size int, vocab []string, r *rand.Rand) int64 {
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	paragraphs := func() []string {
		var ps []string
		for n := 0; n < size; {
			p := words(40+r.IntN(80)) + "."
			ps = append(ps, p)
			n += len(p) + 2
		}
		return ps
	}
	var total int64
	for i := range n {
		var body strings.Builder
		var name string
		var write func(path string) error
		switch i % 20 {
		case 0, 1, 2, 3, 4, 5, 6:
			name = fmt.Sprintf("notes/%03d/doc%05d.md", i/500, i)
			body.WriteString("# " + words(5) + "\n\n")
			for body.Len() < size {
				if r.IntN(6) == 0 {
					body.WriteString("## " + words(4) + "\n\n")
				}
				body.WriteString(words(40+r.IntN(80)) + ".\n\n")
			}
		case 7, 8, 9:
			name = fmt.Sprintf("text/%03d/doc%05d.txt", i/500, i)
			for body.Len() < size {
				body.WriteString(words(60+r.IntN(60)) + ".\n\n")
			}
		case 10, 11, 12, 13:
			name = fmt.Sprintf("web/%03d/page%05d.html", i/500, i)
			body.WriteString("<html><head><title>" + words(5) + "</title></head><body><article><h1>" + words(5) + "</h1>\n")
			for body.Len() < size {
				body.WriteString("<p>" + words(50+r.IntN(50)) + "</p>\n")
			}
			body.WriteString("</article></body></html>\n")
		case 14, 15:
			name = fmt.Sprintf("code/%03d/file%05d.go", i/500, i)
			body.WriteString("package bench\n\n")
			for body.Len() < size {
				fmt.Fprintf(&body, "// %s\nfunc F%d(x int) int {\n\treturn x + %d // %s\n}\n\n", words(12), body.Len(), r.IntN(100), words(6))
			}
		case 16, 17:
			name = fmt.Sprintf("tables/%03d/table%05d.csv", i/500, i)
			body.WriteString("name,amount,comment\n")
			for body.Len() < size {
				fmt.Fprintf(&body, "%s,%d,%s\n", vocab[zipf.Uint64()], r.IntN(10000), words(8))
			}
		case 18:
			name = fmt.Sprintf("office/%03d/report%05d.docx", i/500, i)
			title, paras := words(5), paragraphs()
			write = func(p string) error { return writeDOCX(p, title, paras) }
		case 19:
			name = fmt.Sprintf("office/%03d/paper%05d.pdf", i/500, i)
			title, paras := words(5), paragraphs()
			write = func(p string) error { return writePDF(p, title, paras) }
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if write == nil {
			write = func(p string) error { return os.WriteFile(p, []byte(body.String()), 0o644) }
		}
		if err := write(p); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		total += fi.Size()
	}
	return total
}

func benchPercentile(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return float64(s[max(0, i)]) / float64(time.Millisecond)
}

// BenchmarkSyncAndSearch generates STEWARD_BENCH_DOCS documents (default
// 1,000) of about 20 KB each (so 10,000 make about 200 MB), indexes them
// with 512-token chunks and an embedding server stand-in on loopback
// (256 dimensions), and then measures word and hybrid search latency
// (query embedding included) over 200 queries. Run it once:
//
//	STEWARD_BENCH_DOCS=10000 go test -run '^$' -bench SyncAndSearch -benchtime=1x ./datasource/local/
func BenchmarkSyncAndSearch(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_DOCS")); err == nil && v > 0 {
		n = v
	}
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 30000)
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "ba", "do", "fe", "gi", "ha", "ju", "pe", "qui", "wo", "xa", "yu"}
	for i := range vocab {
		var w strings.Builder
		for j := 0; j < 2+r.IntN(3); j++ {
			w.WriteString(syl[r.IntN(len(syl))])
		}
		vocab[i] = w.String()
	}
	dir := filepath.Join(b.TempDir(), "corpus")
	total := writeCorpus(b, dir, n, 20_000, vocab, r)
	b.Logf("generated %d documents, %.1f MB", n, float64(total)/1e6)
	srv := embedtest.Start(b, hashModel(256))
	emb, err := embed.New(embed.Config{Kind: embed.Ollama, BaseURL: srv.URL, Model: "hash256", Provider: "SELF_HOSTED", BatchSize: 64}, "", srv.Client())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	dbPath := filepath.Join(b.TempDir(), "docs.db")
	ix, err := Open(ctx, dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()

	stopHeap := testenv.SampleHeapInUse(50 * time.Millisecond)
	rssReset := resetPeakRSS()
	b.ResetTimer()
	t0, cpu0 := time.Now(), testenv.ProcessCPU()
	st, err := ix.Sync(ctx, Spec{ID: "bench", Path: dir, Embedder: emb, MaxChunkTokens: 512, OverlapTokens: 64}, nil)
	dur, cpu := time.Since(t0), testenv.ProcessCPU()-cpu0
	rss := peakRSS() // while indexing, before the searches load the vectors
	peakHeap := stopHeap()
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if st.Added != n || st.Embedded != st.Chunks || len(st.Skipped) != 0 {
		b.Fatalf("stats %+v", st)
	}
	queries := make([]string, 200)
	for i := range queries {
		var q []string
		for j := 0; j < 1+r.IntN(4); j++ {
			q = append(q, vocab[r.IntN(3000)])
		}
		queries[i] = strings.Join(q, " ")
	}
	measure := func(e embed.Embedder) []time.Duration {
		var ds []time.Duration
		for _, q := range queries {
			t := time.Now()
			if _, _, err := ix.Search(ctx, "bench", Query{Text: q, Limit: 10, Embedder: e}); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t))
		}
		return ds
	}
	_ = measure(emb) // loads the vectors once
	wd := measure(nil)
	hd := measure(emb)
	var size int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(dbPath + suffix); err == nil {
			size += fi.Size()
		}
	}
	b.ReportMetric(float64(total)/1e6/dur.Seconds(), "MB/s")
	b.ReportMetric(float64(n)/dur.Seconds(), "docs/s")
	b.ReportMetric(cpu.Seconds()/(float64(total)/1e6), "cpu_s/MB")
	b.ReportMetric(float64(st.Chunks), "chunks")
	b.ReportMetric(benchPercentile(wd, 0.5), "words_p50_ms")
	b.ReportMetric(benchPercentile(wd, 0.95), "words_p95_ms")
	b.ReportMetric(benchPercentile(hd, 0.5), "hybrid_p50_ms")
	b.ReportMetric(benchPercentile(hd, 0.95), "hybrid_p95_ms")
	b.ReportMetric(float64(size)/1e6, "index_MB")
	b.ReportMetric(float64(peakHeap)/1e6, "peak_heap_MB")
	if rssReset {
		b.ReportMetric(float64(rss)/1e6, "peak_rss_MB")
	}
	b.Logf("indexed %.1f MB in %v (%d chunks, all embedded), index %.1f MB", float64(total)/1e6, dur, st.Chunks, float64(size)/1e6)
}
