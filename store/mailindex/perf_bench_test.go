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

	"github.com/stewardhq/steward/internal/testenv"
)

// perfCorpus is the generated index the latency benchmarks query.
type perfCorpus struct {
	x       *Index
	vocab   []string
	path    string
	dim     int
	embedCS float64 // chunks stored per second by SetEmbeddings
	loopCS  float64 // chunks per second of PendingChunks and SetEmbeddings together
}

var (
	perfOnce sync.Once
	perf     *perfCorpus
	perfErr  error
	perfDir  string
)

// TestMain removes the generated latency corpus (hundreds of MB at
// 100,000 mails) once the benchmarks are done.
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

// perfMails is STEWARD_BENCH_PERF_MAILS (default 20,000).
func perfMails() int {
	if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_PERF_MAILS")); err == nil && v > 0 {
		return v
	}
	return 20000
}

// buildPerfCorpus generates n mails in two folders from 300 senders over
// n hours, each one chunk of 150 Zipf-distributed words, and embeds every
// chunk with a 256-dim random vector, timing the storing of vectors.
func buildPerfCorpus(ctx context.Context, dir string, n, dim int) (*perfCorpus, error) {
	path := filepath.Join(dir, "perf.db")
	x, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(11, 12))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", r.Uint32()%0xfffff)
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	for _, p := range []string{"INBOX", "Archive"} {
		if err := x.SaveFolder(ctx, Folder{MailboxID: "mb", Path: p, ServerMessages: -1, ServerUnseen: -1}); err != nil {
			return nil, err
		}
	}
	batches := map[string][]Incoming{}
	for i := 0; i < n; i++ {
		ws := make([]string, 150)
		for j := range ws {
			ws[j] = vocab[zipf.Uint64()]
		}
		folder := "INBOX"
		if i%5 == 0 {
			folder = "Archive"
		}
		m := incoming(uint32(i+1), fmt.Sprint("k", i), strings.Join(ws[:5], " "), fmt.Sprint("s", i%300), "me", strings.Join(ws, " "),
			time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour), Flags{Seen: i%3 == 0})
		batches[folder] = append(batches[folder], m)
		if len(batches[folder]) == 500 || i == n-1 {
			for f, b := range batches {
				if err := x.AddBatch(ctx, "mb", f, b); err != nil {
					return nil, err
				}
				batches[f] = b[:0]
			}
		}
	}
	// As the indexer does after adding mails.
	if err := x.RefreshWordStats(ctx); err != nil {
		return nil, err
	}
	var after int64
	var stored int
	var spent time.Duration
	vecs := map[int64][]float32{}
	loopStart := time.Now()
	var making time.Duration
	for {
		pend, err := x.PendingChunks(ctx, "mb", "m256", after, 1000)
		if err != nil {
			return nil, err
		}
		if len(pend) == 0 {
			break
		}
		after = pend[len(pend)-1].ID
		made := time.Now()
		for _, p := range pend {
			v := make([]float32, dim)
			for j := range v {
				v[j] = r.Float32() - 0.5
			}
			vecs[p.ID] = v
		}
		making += time.Since(made)
		start := time.Now()
		if err := x.SetEmbeddings(ctx, "m256", vecs); err != nil {
			return nil, err
		}
		spent += time.Since(start)
		stored += len(vecs)
		clear(vecs)
	}
	loop := time.Since(loopStart) - making
	return &perfCorpus{x: x, vocab: vocab, path: path, dim: dim, embedCS: float64(stored) / spent.Seconds(),
		loopCS: float64(stored) / loop.Seconds()}, nil
}

func perfCorpusOf(b *testing.B) *perfCorpus {
	perfOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mailindex-perf-")
		if err != nil {
			perfErr = err
			return
		}
		perfDir = dir
		start := time.Now()
		perf, perfErr = buildPerfCorpus(context.Background(), dir, perfMails(), 256)
		if perfErr == nil {
			b.Logf("built %d mails in %s; vectors stored at %.0f chunks/s (%.0f/s with finding pending chunks); index %.1f MB",
				perfMails(), time.Since(start).Round(time.Second), perf.embedCS, perf.loopCS, float64(dirSize(dir))/1e6)
		}
	})
	if perfErr != nil {
		b.Fatal(perfErr)
	}
	return perf
}

func dirSize(dir string) int64 {
	var n int64
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// perfQuery is one search of the mixed set.
type perfQuery struct {
	text string
	f    Filter
}

// perfQueries is a fixed mix: rare, common and two-word queries, each
// without a filter and with a folder, sender or date filter.
func perfQueries(vocab []string, n int) []perfQuery {
	r := rand.New(rand.NewPCG(21, 22))
	after := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n*3/4) * time.Hour)
	filters := []Filter{{}, {Folder: "Archive"}, {From: "s17@"}, {After: after}}
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
		qs = append(qs, perfQuery{text: text, f: filters[(i/3)%len(filters)]})
	}
	return qs
}

// BenchmarkSearchLatency reports p50/p95 milliseconds of word and hybrid
// (words, vector, fusion and the summaries of a page of 10) searches over
// a mixed query set on STEWARD_BENCH_PERF_MAILS generated mails, and the
// rate at which vectors were stored while building.
func BenchmarkSearchLatency(b *testing.B) {
	c := perfCorpusOf(b)
	ctx := context.Background()
	qs := perfQueries(c.vocab, perfMails())
	qv := make([]float32, c.dim)
	for i := range qv {
		qv[i] = float32(i%7) - 3
	}
	const window = 40
	words := func(q perfQuery) error {
		_, err := c.x.SearchWords(ctx, "mb", q.f, q.text, window)
		return err
	}
	hybrid := func(q perfQuery) error {
		var w, v []Hit
		var werr, verr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); w, werr = c.x.SearchWords(ctx, "mb", q.f, q.text, window) }()
		go func() { defer wg.Done(); v, verr = c.x.SearchVector(ctx, "mb", q.f, "m256", qv, window) }()
		wg.Wait()
		if werr != nil || verr != nil {
			return fmt.Errorf("words: %v, vector: %v", werr, verr)
		}
		fused := Fuse(v, w)
		ids := make([]string, 0, 10)
		for _, h := range fused[:min(10, len(fused))] {
			ids = append(ids, h.MailID)
		}
		_, err := c.x.Summaries(ctx, "mb", ids)
		return err
	}
	for _, tc := range []struct {
		name string
		run  func(perfQuery) error
	}{{"words", words}, {"hybrid", hybrid}} {
		b.Run(tc.name, func(b *testing.B) {
			testenv.ReportQueryLatency(b, qs, tc.run)
			b.ReportMetric(c.embedCS, "embed-chunks/s")
			b.ReportMetric(c.loopCS, "pending+embed-chunks/s")
		})
	}
}
