package docindex

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/store/searchindex"
)

func openTest(t *testing.T) *Index {
	t.Helper()
	x, err := Open(context.Background(), filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func begin(t *testing.T, x *Index, id string) {
	t.Helper()
	if _, err := x.BeginRun(context.Background(), Source{ID: id, Path: "/src/" + id, Chunking: "c1", Model: "m"}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func doc(path string, texts ...string) NewDocument {
	d := NewDocument{Document: Document{Path: path, Size: int64(len(strings.Join(texts, ""))), ModTime: time.Unix(1700000000, 5), Hash: "h-" + path, Kind: "document", Title: path}}
	for i, t := range texts {
		d.Chunks = append(d.Chunks, Chunk{Text: t, Page: i + 1})
	}
	return d
}

func check(t *testing.T, x *Index) {
	t.Helper()
	problems, err := x.Check(context.Background())
	if err != nil || len(problems) > 0 {
		t.Fatalf("check: %v %v", problems, err)
	}
}

func paths(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s#%d", h.Path, h.Seq))
	}
	return out
}

func TestPutSearchReplaceDelete(t *testing.T) {
	ctx := context.Background()
	x := openTest(t)
	begin(t, x, "a")
	begin(t, x, "b")
	if err := x.PutDocuments(ctx, "a", []NewDocument{
		doc("guide.md", "Parental leave lasts up to fourteen months.", "The canteen opens at noon."),
		doc("notes/東京.txt", "来週の会議は東京都庁で行います。"),
	}); err != nil {
		t.Fatal(err)
	}
	if err := x.PutDocuments(ctx, "b", []NewDocument{doc("other.md", "Parental leave is none of this source's business.")}); err != nil {
		t.Fatal(err)
	}
	check(t, x)
	p, err := x.Search(ctx, "a", Query{Text: "parental leave", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(p.Hits); !slices.Equal(got, []string{"guide.md#0"}) || p.HasMore {
		t.Fatalf("hits %v more %v", got, p.HasMore)
	}
	h := p.Hits[0]
	if h.Page != 1 || h.Title != "guide.md" || !strings.Contains(h.Text, "fourteen") || h.Modified.UnixNano() != 1700000000_000000005 {
		t.Errorf("hit %+v", h)
	}
	if p, _ := x.Search(ctx, "a", Query{Text: "会議", Limit: 10}); len(p.Hits) != 1 || p.Hits[0].Path != "notes/東京.txt" {
		t.Errorf("CJK word: %v", paths(p.Hits))
	}
	// Replacing the document drops its old chunks.
	if err := x.PutDocuments(ctx, "a", []NewDocument{doc("guide.md", "Holidays are planned in spring.")}); err != nil {
		t.Fatal(err)
	}
	check(t, x)
	if p, _ := x.Search(ctx, "a", Query{Text: "parental leave", Limit: 10}); len(p.Hits) != 0 {
		t.Errorf("old text still found: %v", paths(p.Hits))
	}
	docs, err := x.Documents(ctx, "a")
	if err != nil || len(docs) != 2 || docs["guide.md"].Chunks != 1 {
		t.Fatalf("documents %+v %v", docs, err)
	}
	if err := x.DeleteDocuments(ctx, "a", []string{"guide.md"}); err != nil {
		t.Fatal(err)
	}
	check(t, x)
	if p, _ := x.Search(ctx, "a", Query{Text: "holidays", Limit: 10}); len(p.Hits) != 0 {
		t.Errorf("deleted text still found")
	}
	if err := x.RemoveSource(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	check(t, x)
	if _, err := x.Search(ctx, "a", Query{Text: "会議", Limit: 10}); err == nil {
		t.Error("a removed source was searched")
	}
	if p, _ := x.Search(ctx, "b", Query{Text: "parental", Limit: 10}); len(p.Hits) != 1 {
		t.Errorf("the other source lost its document")
	}
}

func TestVectorsReusedRenamedCopiedAndFused(t *testing.T) {
	ctx := context.Background()
	x := openTest(t)
	begin(t, x, "a")
	if err := x.PutDocuments(ctx, "a", []NewDocument{doc("a.txt", "alpha one", "beta two", "gamma three")}); err != nil {
		t.Fatal(err)
	}
	pend, err := x.PendingChunks(ctx, "a", "m", 0, 10)
	if err != nil || len(pend) != 3 {
		t.Fatalf("pending %v %v", pend, err)
	}
	vecs := map[int64][]float32{}
	for i, c := range pend {
		v := make([]float32, 3)
		v[i] = 1
		vecs[c.ID] = v
	}
	if err := x.SetEmbeddings(ctx, "m", vecs); err != nil {
		t.Fatal(err)
	}
	// A changed file whose first two chunks stayed: only the new one waits.
	if err := x.PutDocuments(ctx, "a", []NewDocument{doc("a.txt", "alpha one", "beta two", "delta four")}); err != nil {
		t.Fatal(err)
	}
	check(t, x)
	pend, _ = x.PendingChunks(ctx, "a", "m", 0, 10)
	if len(pend) != 1 || pend[0].Text != "delta four" {
		t.Fatalf("pending after change: %+v", pend)
	}
	if err := x.SetEmbeddings(ctx, "m", map[int64][]float32{pend[0].ID: {0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := x.Rename(ctx, "a", "a.txt", "moved/b.txt", 5, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := x.Copy(ctx, "a", "moved/b.txt", "copy.txt", 5, time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	check(t, x)
	cov, err := x.Coverage(ctx, "a", "m")
	if err != nil || cov.Documents != 2 || cov.Chunks != 6 || cov.Embedded != 6 {
		t.Fatalf("coverage %+v %v", cov, err)
	}
	// By meaning alone the query is nearest "beta two" (dimension 1).
	p, err := x.Search(ctx, "a", Query{Text: "zzz", Vector: []float32{0, 1, 0.1}, Model: "m", Limit: 2})
	if err != nil || len(p.Hits) != 2 || p.Hits[0].Text != "beta two" || !p.HasMore {
		t.Fatalf("vector page %+v %v", p, err)
	}
	// Fused: "delta" is found by words and near by meaning.
	p, _ = x.Search(ctx, "a", Query{Text: "delta", Vector: []float32{0, 0, 1}, Model: "m", Limit: 10})
	if len(p.Hits) == 0 || p.Hits[0].Text != "delta four" {
		t.Fatalf("fused %v", paths(p.Hits))
	}
	// Another model's vectors are not compared.
	p, _ = x.Search(ctx, "a", Query{Text: "zzz", Vector: []float32{0, 1, 0}, Model: "other", Limit: 2})
	if len(p.Hits) != 0 {
		t.Fatalf("vectors of another model compared: %v", paths(p.Hits))
	}
	// Paging: the second page continues the first.
	var all []string
	for off := 0; ; off += 2 {
		p, err := x.Search(ctx, "a", Query{Text: "alpha beta delta", Vector: []float32{1, 1, 1}, Model: "m", Limit: 2, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, paths(p.Hits)...)
		if !p.HasMore {
			break
		}
	}
	if len(all) != 6 {
		t.Errorf("pages gave %v", all)
	}
}

func TestChunkingChangeResetsAndFailures(t *testing.T) {
	ctx := context.Background()
	x := openTest(t)
	begin(t, x, "a")
	if err := x.PutDocuments(ctx, "a", []NewDocument{doc("a.txt", "alpha")}); err != nil {
		t.Fatal(err)
	}
	if err := x.SetFailure(ctx, "a", Failure{Path: "bad.pdf", Size: 3, ModTime: time.Unix(5, 0), Reason: "no text"}); err != nil {
		t.Fatal(err)
	}
	fs, err := x.Failures(ctx, "a")
	if err != nil || fs["bad.pdf"].Reason != "no text" || !fs["bad.pdf"].ModTime.Equal(time.Unix(5, 0)) {
		t.Fatalf("failures %+v %v", fs, err)
	}
	reset, err := x.BeginRun(ctx, Source{ID: "a", Path: "/src/a", Chunking: "c1", Model: "m"}, time.Now())
	if err != nil || reset {
		t.Fatalf("same chunking reset: %v %v", reset, err)
	}
	reset, err = x.BeginRun(ctx, Source{ID: "a", Path: "/src/a", Chunking: "c2", Model: "m"}, time.Now())
	if err != nil || !reset {
		t.Fatalf("new chunking kept: %v %v", reset, err)
	}
	docs, _ := x.Documents(ctx, "a")
	fs, _ = x.Failures(ctx, "a")
	if len(docs) != 0 || len(fs) != 0 {
		t.Fatalf("after reset: %v %v", docs, fs)
	}
	s, ok, err := x.Source(ctx, "a")
	if err != nil || !ok || s.RunComplete || s.Chunking != "c2" {
		t.Fatalf("source %+v %v %v", s, ok, err)
	}
	if err := x.EndRun(ctx, "a", time.Now()); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := x.Source(ctx, "a"); !s.RunComplete {
		t.Error("run not complete")
	}
	check(t, x)
}

// A source holding few of the index's chunks ranks its own matches at
// once; the answer is the one the widening windows over the whole index's
// best matches give, and the large source's answer is unchanged too.
func TestSmallSourceRanksItsOwnMatches(t *testing.T) {
	ctx := context.Background()
	x := openTest(t)
	begin(t, x, "big")
	begin(t, x, "small")
	var big, small []NewDocument
	for i := range 400 {
		words := fmt.Sprintf("alpha%d beta%d shared%d common text", i%7, i%11, i%13)
		if i%20 == 0 {
			small = append(small, doc(fmt.Sprintf("s%03d.md", i), words, "more "+words))
		} else {
			big = append(big, doc(fmt.Sprintf("b%03d.md", i), words))
		}
	}
	if err := x.PutDocuments(ctx, "big", big); err != nil {
		t.Fatal(err)
	}
	if err := x.PutDocuments(ctx, "small", small); err != nil {
		t.Fatal(err)
	}
	if n, err := x.sourceChunks(ctx, 2); err != nil || n != 40 {
		t.Fatalf("small source: %d chunks, %v", n, err)
	}
	for _, src := range []struct {
		id  string
		num int64
	}{{"big", 1}, {"small", 2}} {
		for _, q := range []string{"alpha3", "beta4 shared5", "alpha1 beta2 shared3"} {
			mq := searchindex.MatchQuery(q)
			windows, err := x.wordsExact(ctx, src.num, mq, 5, false)
			if err != nil {
				t.Fatal(err)
			}
			direct, err := x.wordsExact(ctx, src.num, mq, 5, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.SearchWords(ctx, src.id, q, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(windows) == 0 || !slices.Equal(ids(windows), ids(direct)) || !slices.Equal(ids(got), ids(direct)) {
				t.Errorf("%s %q: windows %v, direct %v, SearchWords %v", src.id, q, ids(windows), ids(direct), ids(got))
			}
		}
	}
}

func ids(hs []Hit) []int64 {
	out := make([]int64, len(hs))
	for i, h := range hs {
		out[i] = h.ChunkID
	}
	return out
}
