package searchindex

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func tokens(text string, query bool) []string {
	var out []string
	_ = Tokenize(text, query, func(tok string, start, end int, colocated bool) error {
		mark := ""
		if colocated {
			mark = "+"
		}
		out = append(out, mark+tok+fmt.Sprintf("@%d", start))
		return nil
	})
	return out
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		text  string
		query bool
		want  []string
	}{
		{"Crème BRÛLÉE, naïve-café 42", false, []string{"creme@0", "brulee@7", "naive@17", "cafe@24", "42@30"}},
		{"東京都に", false, []string{"東@0", "+東京@0", "京@3", "+京都@3", "都@6", "+都に@6", "に@9"}},
		{"東京都に", true, []string{"東京@0", "京都@3", "都に@6"}},
		{"会", true, []string{"会@0"}},
		{"会", false, []string{"会@0"}},
		{"Tokyo東京2026", false, []string{"tokyo@0", "東@5", "+東京@5", "京@8", "2026@11"}},
		{"서울에서 회의", true, []string{"서울@0", "울에@3", "에서@6", "회의@13"}},
		{"コーヒー", true, []string{"コー@0", "ーヒ@3", "ヒー@6"}},
	} {
		if got := tokens(tc.text, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("tokenize(%q, query=%v) = %q, want %q", tc.text, tc.query, got, tc.want)
		}
	}
}

func TestQueryWordsAndMatchQuery(t *testing.T) {
	if got := QueryWords("Crème BRÛLÉE, crème; naïve-café 42"); !slices.Equal(got, []string{"creme", "brulee", "naive", "cafe", "42"}) {
		t.Errorf("QueryWords = %q", got)
	}
	if got := MatchQuery(`budget" OR NOT x* (y)`); got != `"budget" OR "or" OR "not" OR "x" OR "y"` {
		t.Errorf("MatchQuery = %s", got)
	}
	if MatchQuery("  ,;  ") != "" {
		t.Error("a query without words is not empty")
	}
	if got := QuoteWords([]string{`a"b`, "c"}, " AND "); got != `"a""b" AND "c"` {
		t.Errorf("QuoteWords = %s", got)
	}
}

func TestTopKIsSortedPrefix(t *testing.T) {
	type item struct {
		id    int
		score int
	}
	before := func(a, b item) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.id < b.id
	}
	for _, tc := range []struct{ n, k int }{{0, 5}, {3, 5}, {5, 5}, {50, 1}, {50, 7}, {1000, 40}, {1000, 999}, {10, 0}} {
		items := make([]item, tc.n)
		for i := range items {
			items[i] = item{id: (i * 7919) % 1009, score: (i * 31) % 5}
		}
		want := slices.Clone(items)
		slices.SortFunc(want, func(a, b item) int {
			if before(a, b) {
				return -1
			}
			return 1
		})
		want = want[:min(tc.k, len(want))]
		got := TopK(slices.Clone(items), tc.k, before)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d k=%d: %v, want %v", tc.n, tc.k, got, want)
		}
	}
}

func TestFuseByReciprocalRank(t *testing.T) {
	got := Fuse([]string{"a", "b", "c", "a"}, []string{"c", "d"})
	// c: 1/63 + 1/61; a: 1/61; d: 1/62; b: 1/62 (b seen before d).
	var keys []string
	for _, f := range got {
		keys = append(keys, f.Key)
	}
	if !slices.Equal(keys, []string{"c", "a", "b", "d"}) {
		t.Fatalf("order %v", keys)
	}
	if math.Abs(got[0].Score-(1.0/63+1.0/61)) > 1e-12 || got[0].List != 0 || got[0].Rank != 2 {
		t.Errorf("c: %+v", got[0])
	}
	if got[3].List != 1 || got[3].Rank != 1 {
		t.Errorf("d: %+v", got[3])
	}
	if len(Fuse[string]()) != 0 {
		t.Error("nothing fused to something")
	}
}

func TestMatrixNormalizesAndSkipsOtherSizes(t *testing.T) {
	m := NewMatrix(2)
	for i := range 5000 {
		if !m.AppendBlob(EncodeVector([]float32{3, float32(4 + i%2)})) {
			t.Fatal("refused a vector of its size")
		}
	}
	if m.AppendBlob(EncodeVector([]float32{1, 2, 3})) {
		t.Fatal("took a vector of another size")
	}
	m.Done()
	if m.Rows() != 5000 || len(m.Data) != 10000 {
		t.Fatalf("%d rows, %d values", m.Rows(), len(m.Data))
	}
	if r := m.Row(0); math.Abs(float64(r[0])-0.6) > 1e-6 || math.Abs(float64(r[1])-0.8) > 1e-6 {
		t.Errorf("row 0 = %v", r)
	}
	if d := Dot(m.Row(0), m.Row(0)); math.Abs(float64(d)-1) > 1e-6 {
		t.Errorf("|row| = %v", d)
	}
	if Cosine([]float32{1, 0}, []float32{0, 0}) != 0 || Cosine([]float32{1}, []float32{1, 2}) != 0 {
		t.Error("cosine of a zero or mismatched vector")
	}
	if got := DecodeVector(EncodeVector([]float32{1.5, -2})); !slices.Equal(got, []float32{1.5, -2}) {
		t.Errorf("round trip %v", got)
	}
}

func testDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "sub", "x.db"), "testindex")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

const testSchema = `CREATE TABLE IF NOT EXISTS chunks(id INTEGER PRIMARY KEY, doc TEXT NOT NULL);` + WordsSchema + VectorSchema

func TestMigrateRunsStepsOnceAndRefusesNewer(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	var ran []int
	s := Schema{Name: "testindex", Version: 2, Create: testSchema, Migrations: []Migration{
		{Version: 1, Up: func(context.Context, *sql.Tx) error { ran = append(ran, 1); return nil }},
		{Version: 2, Up: func(ctx context.Context, tx *sql.Tx) error {
			ran = append(ran, 2)
			has, err := HasColumn(ctx, tx, "chunks", "doc")
			if err != nil || !has {
				return fmt.Errorf("HasColumn = %v, %v", has, err)
			}
			has, err = HasColumn(ctx, tx, "chunks", "nope")
			if err != nil || has {
				return fmt.Errorf("HasColumn(nope) = %v, %v", has, err)
			}
			return nil
		}},
	}}
	if err := Migrate(ctx, db, s); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, db, s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ran, []int{1, 2}) {
		t.Fatalf("steps ran %v, want once each", ran)
	}
	s.Version = 1
	if err := Migrate(ctx, db, s); err == nil || !strings.Contains(err.Error(), "newer than this program's 1") {
		t.Fatalf("an index of a newer version was opened: %v", err)
	}
	failing := Schema{Name: "testindex", Version: 3, Create: testSchema, Migrations: []Migration{
		{Version: 3, Up: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks(id, doc) VALUES(99, 'x')`); err != nil {
				return err
			}
			return fmt.Errorf("boom")
		}},
	}}
	if err := Migrate(ctx, db, failing); err == nil || !strings.Contains(err.Error(), "migrate to schema 3: boom") {
		t.Fatalf("err = %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM chunks`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a failed migration left %d rows (%v)", n, err)
	}
}

func TestWordsScorerEqualsFTS5AndReaders(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	if err := Migrate(ctx, db, Schema{Name: "testindex", Version: 1, Create: testSchema}); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"the budget for the new office chairs",
		"budget budget budget review",
		"東京の会議は来週です",
		"café chairs and tables",
		"nothing relevant here at all, only filler words",
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewStmtCache(tx)
	var batch FTSBatch
	for i, txt := range texts {
		if _, err := sc.ExecContext(ctx, `INSERT INTO chunks(id, doc) VALUES(?, ?)`, i+1, fmt.Sprint("d", i%2)); err != nil {
			t.Fatal(err)
		}
		batch.Add("chunks_fts", i+1, txt)
	}
	if batch.Len() != len(texts) {
		t.Fatalf("batch holds %d", batch.Len())
	}
	if err := batch.Flush(ctx, tx); err != nil {
		t.Fatal(err)
	}
	sc.Close()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	w := &Words{DB: db, Name: "testindex", CommonMin: 1}
	st, err := w.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Chunks != 5 || st.MaxChunk != 5 {
		t.Fatalf("stats %+v", st)
	}
	for _, q := range []string{"budget chairs", "会議", "cafe", "tables review"} {
		words := QueryWords(q)
		scorer, err := w.NewScorer(ctx, st, words)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.QueryContext(ctx, `SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?`, MatchQuery(q))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id int
			var bm float64
			if err := rows.Scan(&id, &bm); err != nil {
				t.Fatal(err)
			}
			n++
			if got := scorer.Score(texts[id-1]); math.Abs(got+bm) > 1e-9*math.Max(1, -bm) {
				t.Errorf("%q chunk %d: Go %v, FTS5 %v", q, id, got, -bm)
			}
		}
		rows.Close()
		if n == 0 {
			t.Errorf("%q matched nothing", q)
		}
	}
	// A fresh process reads the stored counts of the query's words alone,
	// with the same figures, and keeps no partial snapshot.
	fresh := &Words{DB: db, Name: "testindex", CommonMin: 1}
	part, err := fresh.Stats(ctx, "budget", "zzz")
	if err != nil {
		t.Fatal(err)
	}
	if len(part.Docs) != 1 || part.Docs["budget"] != st.Docs["budget"] || part.Chunks != st.Chunks || part.Tokens != st.Tokens || part.Cut != st.Cut {
		t.Errorf("the snapshot of budget and zzz is %+v; the whole one has budget %d, chunks %d, tokens %d", part, st.Docs["budget"], st.Chunks, st.Tokens)
	}
	whole, err := fresh.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Docs) != len(st.Docs) || len(whole.Docs) < 2 {
		t.Errorf("after a per-word read the whole snapshot has %d words, want %d", len(whole.Docs), len(st.Docs))
	}
	docs, err := w.Docs(ctx, QueryWords("budget chairs"))
	if err != nil || docs != 4 {
		t.Errorf("Docs = %d, %v; want 4", docs, err)
	}
	ids, err := Int64s(ctx, db, "read", `SELECT id FROM chunks WHERE doc = ? ORDER BY id`, "d0")
	if err != nil || !slices.Equal(ids, []int64{1, 3, 5}) {
		t.Errorf("Int64s = %v, %v", ids, err)
	}
	set, err := IDSet(ctx, db, "read", `SELECT doc FROM chunks`)
	if err != nil || len(set) != 2 || !set["d1"] {
		t.Errorf("IDSet = %v, %v", set, err)
	}
	byID, err := TextsByID(ctx, db, "read", `SELECT rowid, text FROM chunks_fts WHERE rowid IN (SELECT value FROM json_each(?))`, []int64{2, 4, 77})
	if err != nil || len(byID) != 2 || byID[4] != texts[3] {
		t.Errorf("TextsByID = %v, %v", byID, err)
	}
	if _, err := Int64s(ctx, db, "read thing", `SELECT nope FROM chunks`); err == nil || !strings.HasPrefix(err.Error(), "read thing: ") {
		t.Errorf("error %v does not name the step", err)
	}
	// A deleted chunk's text goes with it.
	if _, err := db.ExecContext(ctx, `DELETE FROM chunks WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.QueryRow(`SELECT COUNT(*) FROM chunks_fts`).Scan(&left); err != nil || left != 4 {
		t.Errorf("%d texts left (%v), want 4", left, err)
	}
}

// TestScorerASCIIScanEqualsFTS5 checks the scan that scores ASCII texts
// without folding words against FTS5's own bm25 and against the
// tokenizer's path, on texts of mixed case, digits, punctuation and runs
// longer than any query word.
func TestScorerASCIIScanEqualsFTS5(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	if err := Migrate(ctx, db, Schema{Name: "testindex", Version: 1, Create: testSchema}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"Budget", "budget", "BUDGET", "chair", "Chairs", "x", "a1", "2024", "review", "office", "budgets", "bud", strings.Repeat("long", 20)}
	seps := []string{" ", ", ", ". ", "-", "\n", "  ", "/", "(", ")"}
	var texts []string
	for range 200 {
		var b strings.Builder
		for j := 0; j < 5+r.IntN(60); j++ {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteString(seps[r.IntN(len(seps))])
		}
		texts = append(texts, b.String())
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var batch FTSBatch
	for i, txt := range texts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO chunks(id, doc) VALUES(?, 'd')`, i+1); err != nil {
			t.Fatal(err)
		}
		batch.Add("chunks_fts", i+1, txt)
	}
	if err := batch.Flush(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	w := &Words{DB: db, Name: "testindex", CommonMin: 1}
	st, err := w.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"budget", "Chairs 2024", "x a1 review", "bud budgets", "office chair"} {
		sc, err := w.NewScorer(ctx, st, QueryWords(q))
		if err != nil {
			t.Fatal(err)
		}
		if !sc.ascii {
			t.Fatalf("%q: the ASCII scan is not used", q)
		}
		slow := *sc
		slow.ascii = false
		rows, err := db.QueryContext(ctx, `SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?`, MatchQuery(q))
		if err != nil {
			t.Fatal(err)
		}
		matched := 0
		for rows.Next() {
			var id int
			var bm float64
			if err := rows.Scan(&id, &bm); err != nil {
				t.Fatal(err)
			}
			matched++
			got, want := sc.Score(texts[id-1]), slow.Score(texts[id-1])
			if got != want {
				t.Errorf("%q chunk %d: scan %v, tokenizer %v", q, id, got, want)
			}
			if math.Abs(got+bm) > 1e-9*math.Max(1, -bm) {
				t.Errorf("%q chunk %d: Go %v, FTS5 %v", q, id, got, -bm)
			}
		}
		rows.Close()
		if matched == 0 {
			t.Errorf("%q matched nothing", q)
		}
	}
	// A text that is not ASCII takes the tokenizer's path.
	sc, _ := w.NewScorer(ctx, st, QueryWords("budget"))
	if got := sc.Score("Budget für Café budget"); got <= 0 {
		t.Errorf("a text with non-ASCII letters scores %v", got)
	}
}
