package mailindex

import (
	"context"
	"fmt"
	"github.com/stewardhq/steward/store/searchindex"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// ftsScores returns FTS5's bm25 score (negated: higher is better) of every
// chunk matching any word of query.
func ftsScores(t *testing.T, x *Index, query string) map[int64]float64 {
	t.Helper()
	rows, err := x.db.Query(`SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?`, MatchQuery(query))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var id int64
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	return out
}

// commonIndex is the generated order corpus with the common-word cut
// lowered to 60 chunks, so that the frequent words of its Zipf vocabulary
// take the common-word paths.
func commonIndex(t *testing.T) *Index {
	t.Helper()
	x := openTest(t)
	x.words.CommonMin = 60
	orderCorpus(t, x)
	if err := x.RefreshWordStats(context.Background()); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestCommonWordStats(t *testing.T) {
	x := commonIndex(t)
	st, err := x.termStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Docs["v0"]; !ok {
		t.Fatalf("v0 is not common: %+v", st.Docs)
	}
	if _, ok := st.Docs["v150"]; ok {
		t.Fatal("v150 counted as common")
	}
	var docs int64
	if err := x.db.QueryRow(`SELECT doc FROM chunks_vocab WHERE term = 'v0'`).Scan(&docs); err != nil || docs != st.Docs["v0"] {
		t.Fatalf("v0 held by %d chunks (%v), statistics say %d", docs, err, st.Docs["v0"])
	}
	// Growing by more than a tenth counts anew.
	before := st.MaxChunk
	var more []Incoming
	for i := range 80 {
		more = append(more, incoming(uint32(10000+i), fmt.Sprint("new", i), "new", "s1", "me", "v0 v0 v1 fresh", day.Add(1000*time.Hour), Flags{}))
	}
	if err := x.AddBatch(context.Background(), "mb", "INBOX", more); err != nil {
		t.Fatal(err)
	}
	st2, err := x.termStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st2.MaxChunk <= before || st2.Docs["v0"] <= st.Docs["v0"] {
		t.Fatalf("statistics not counted anew after 80 new chunks: max chunk %d -> %d, v0 %d -> %d", before, st2.MaxChunk, st.Docs["v0"], st2.Docs["v0"])
	}
	// Another process's index sees the stored counts without recounting.
	y, err := Open(context.Background(), strings.TrimPrefix(dbPath(t, x), "file:"))
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	sy, err := y.words.Load(context.Background())
	if err != nil || sy == nil || sy.MaxChunk != st2.MaxChunk || sy.Docs["v0"] != st2.Docs["v0"] {
		t.Fatalf("stored statistics %+v (%v), want those counted", sy, err)
	}
}

func dbPath(t *testing.T, x *Index) string {
	t.Helper()
	var seq int
	var name, file string
	if err := x.db.QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		t.Fatal(err)
	}
	return file
}

// The Go scorer computes FTS5's bm25 exactly, so every path ranks alike.
func TestWordScorerEqualsFTS5(t *testing.T) {
	scorerEqualsFTS5(t, commonIndex(t), "v0", "v1 v2", "v7 v90 v200", "V3 v150")
}

// scorerEqualsFTS5 checks the Go score of every chunk matching each query
// against FTS5's bm25.
func scorerEqualsFTS5(t *testing.T, x *Index, queries ...string) {
	t.Helper()
	ctx := context.Background()
	st, err := x.termStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		sc, err := x.words.NewScorer(ctx, st, searchindex.QueryWords(q))
		if err != nil {
			t.Fatal(err)
		}
		want := ftsScores(t, x, q)
		if len(want) == 0 {
			t.Fatalf("%q matches nothing", q)
		}
		ids := make([]int64, 0, len(want))
		for id := range want {
			ids = append(ids, id)
		}
		texts, err := x.chunkTextsIn(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for id, w := range want {
			if got := sc.Score(texts[id]); math.Abs(got-w) > 1e-9*math.Max(1, w) {
				t.Fatalf("%q chunk %d: Go score %v, FTS5 %v", q, id, got, w)
			}
		}
	}
}

func TestFoldWordAndQueryWords(t *testing.T) {
	if got := searchindex.QueryWords("Crème BRÛLÉE, crème; naïve-café 42"); !slices.Equal(got, []string{"creme", "brulee", "naive", "cafe", "42"}) {
		t.Fatalf("queryWords = %q", got)
	}
}

// hitsEqual compares two hit lists by score, and by mail wherever the
// score is not tied with the last one (which of several tied mails
// makes the cut is not part of the answer).
func hitsEqual(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	gotMails, wantMails := map[string]bool{}, map[string]bool{}
	for i := range got {
		if !close(got[i].Score, want[i].Score) {
			t.Fatalf("%s hit %d: %+v, want %+v", what, i, got[i], want[i])
		}
		if !close(got[i].Score, want[len(want)-1].Score) {
			gotMails[got[i].MailID] = true
			wantMails[want[i].MailID] = true
		}
	}
	for m := range wantMails {
		if !gotMails[m] {
			t.Fatalf("%s: mail %s missing from %+v", what, m, got)
		}
	}
}

func TestCommonWordsSelectiveFilterIsExact(t *testing.T) {
	x := commonIndex(t)
	ctx := context.Background()
	for _, tc := range []struct {
		q string
		f Filter
	}{
		{"v0", Filter{From: "s7@"}},
		{"v0 v1", Filter{From: "S7@example"}},
		{"v0 v150", Filter{After: day.Add(560 * time.Hour)}},
		{"v2", Filter{Folder: "Archive", Before: day.Add(100 * time.Hour)}},
	} {
		got, err := x.SearchWords(ctx, "mb", tc.f, tc.q, 12)
		if err != nil {
			t.Fatal(err)
		}
		want, err := x.searchWordsExhaustive(ctx, "mb", tc.f, MatchQuery(tc.q), 12)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%q %+v: the corpus has no match", tc.q, tc.f)
		}
		hitsEqual(t, fmt.Sprintf("%q %+v", tc.q, tc.f), got, want)
	}
}

func TestCommonWordsOnlyRankNewestMatches(t *testing.T) {
	x := commonIndex(t)
	ctx := context.Background()
	for _, q := range []string{"v0", "v0 v1"} {
		got, err := x.SearchWords(ctx, "mb", Filter{}, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 {
			t.Fatalf("%q: %d hits, want 10", q, len(got))
		}
		fts := ftsScores(t, x, q)
		// The candidates: the newest chunks holding every word.
		newest, err := x.newestMatches(ctx, "mb", Filter{}, searchindex.QuoteWords(searchindex.QueryWords(q), " AND "), newestRanked, true)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(newest))
		for i, r := range newest {
			ids[i] = r.id
		}
		// The mails and texts read with the matches are the chunks' own.
		mails, err := x.chunkMails(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := x.chunkTextsIn(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		var ranked []Hit
		for _, r := range newest {
			if !r.hasText || r.text != texts[r.id] || r.mail != mails[r.id] {
				t.Fatalf("%q chunk %d: read with mail %q and text %q, its own are %q and %q", q, r.id, r.mail, r.text, mails[r.id], texts[r.id])
			}
			ranked = append(ranked, Hit{MailID: mails[r.id], ChunkID: r.id, Score: fts[r.id]})
		}
		slices.SortStableFunc(ranked, func(a, b Hit) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return int(a.ChunkID - b.ChunkID)
		})
		want := BestPerMail(ranked)[:10]
		hitsEqual(t, q, got, want)
	}
}

func TestRareAndCommonWordsRerank(t *testing.T) {
	x := commonIndex(t)
	ctx := context.Background()
	st, err := x.termStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, rare string }{{"v0 v150", "v150"}, {"v1 v120 v2", "v120"}} {
		for _, w := range searchindex.QueryWords(tc.q) {
			if _, common := st.Docs[w]; common == (w == tc.rare) {
				t.Fatalf("%q: word %s common=%v", tc.q, w, common)
			}
		}
		got, err := x.SearchWords(ctx, "mb", Filter{}, tc.q, 8)
		if err != nil {
			t.Fatal(err)
		}
		// Among the mails holding the rare word, the order is that of
		// bm25 over all the words.
		all, err := x.searchWordsExhaustive(ctx, "mb", Filter{}, MatchQuery(tc.q), 1000)
		if err != nil {
			t.Fatal(err)
		}
		rareHits := ftsScores(t, x, tc.rare)
		var want []Hit
		for _, h := range all {
			if _, ok := rareHits[h.ChunkID]; ok {
				want = append(want, h)
			}
		}
		if len(want) < 8 {
			t.Fatalf("%q: only %d mails hold %s", tc.q, len(want), tc.rare)
		}
		hitsEqual(t, tc.q, got, want[:8])
	}
}

func TestPeopleFilterByTrigrams(t *testing.T) {
	x := commonIndex(t)
	ctx := context.Background()
	count := func(f Filter) int {
		c, err := x.Count(ctx, "mb", f, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		return int(c.Mails)
	}
	var like int
	if err := x.db.QueryRow(`SELECT COUNT(*) FROM mails WHERE mailbox_id = 'mb' AND loc_count > 0 AND from_text LIKE '%s7@%'`).Scan(&like); err != nil {
		t.Fatal(err)
	}
	if like == 0 {
		t.Fatal("no mail from s7")
	}
	for _, from := range []string{"s7@", "S7@EXAMPLE.ORG", "s7@example"} {
		if got := count(Filter{From: from}); got != like {
			t.Errorf("From %q: %d mails, want %d", from, got, like)
		}
	}
	if got := count(Filter{To: "me@example.org"}); got != count(Filter{}) {
		t.Errorf("To me@example.org: %d mails, want all %d", got, count(Filter{}))
	}
	// Two characters have no trigram: the filter scans instead.
	var short int
	if err := x.db.QueryRow(`SELECT COUNT(*) FROM mails WHERE mailbox_id = 'mb' AND loc_count > 0 AND from_text LIKE '%s7%'`).Scan(&short); err != nil {
		t.Fatal(err)
	}
	if got := count(Filter{From: "S7"}); got != short {
		t.Errorf("From S7: %d mails, want %d", got, short)
	}
	// Removed mails leave the sender index.
	if err := x.ResetFolder(ctx, "mb", "INBOX", 9); err != nil {
		t.Fatal(err)
	}
	if err := x.ResetFolder(ctx, "mb", "Archive", 9); err != nil {
		t.Fatal(err)
	}
	if _, err := x.RemoveOrphans(ctx, "mb"); err != nil {
		t.Fatal(err)
	}
	var mails, people int
	if err := x.db.QueryRow(`SELECT (SELECT COUNT(*) FROM mails), (SELECT COUNT(*) FROM mails_people)`).Scan(&mails, &people); err != nil {
		t.Fatal(err)
	}
	if mails != 0 || people != 0 {
		t.Fatalf("after removing every mail: %d mails, %d sender rows; want 0 and 0", mails, people)
	}
}

// In an index of one mailbox a search of common words reads the newest
// matches without looking up their mails; a mail pending removal (no
// location left) is still never found, and once another mailbox shares
// the index the newest matches are this mailbox's own again.
func TestCommonWordsMailsPendingRemovalAndOtherMailboxes(t *testing.T) {
	x := commonIndex(t)
	ctx := context.Background()
	if !x.onlyMailbox(ctx, "mb") || x.onlyMailbox(ctx, "mb2") {
		t.Fatal("onlyMailbox is wrong for an index of mailbox mb alone")
	}
	before, err := x.SearchWords(ctx, "mb", Filter{}, "v0", 10)
	if err != nil || len(before) != 10 {
		t.Fatalf("%d hits (%v), want 10", len(before), err)
	}
	gone := before[0].MailID
	rows, err := x.db.QueryContext(ctx, `SELECT f.path, l.uid FROM locations l JOIN folders f ON f.id = l.folder_id WHERE l.mail_id = ?`, gone)
	if err != nil {
		t.Fatal(err)
	}
	locs := map[string][]uint32{}
	for rows.Next() {
		var path string
		var uid uint32
		if err := rows.Scan(&path, &uid); err != nil {
			t.Fatal(err)
		}
		locs[path] = append(locs[path], uid)
	}
	rows.Close()
	for path, uids := range locs {
		if err := x.RemoveUIDs(ctx, "mb", path, uids); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := x.PendingRemovals(ctx, "mb"); err != nil || n != 1 {
		t.Fatalf("%d mails pending removal (%v), want 1", n, err)
	}
	after, err := x.SearchWords(ctx, "mb", Filter{}, "v0", 10)
	if err != nil || len(after) != 10 {
		t.Fatalf("after the removal: %d hits (%v), want 10", len(after), err)
	}
	for i, h := range after {
		if h.MailID == gone {
			t.Fatalf("the mail pending removal was found: %+v", after)
		}
		if i < 9 && h.MailID != before[i+1].MailID {
			t.Fatalf("hit %d is %s, want %s (the order without the removed mail)", i, h.MailID, before[i+1].MailID)
		}
	}
	// A newer mailbox whose 500 chunks all hold v0.
	if err := x.SaveFolder(ctx, Folder{MailboxID: "mb2", Path: "INBOX", ServerMessages: -1, ServerUnseen: -1}); err != nil {
		t.Fatal(err)
	}
	var more []Incoming
	for i := range 500 {
		more = append(more, incoming(uint32(i+1), fmt.Sprint("o", i), "other", "s1", "me", "v0 v0 v0 elsewhere", day.Add(2000*time.Hour), Flags{}))
	}
	if err := x.AddBatch(ctx, "mb2", "INBOX", more); err != nil {
		t.Fatal(err)
	}
	if x.onlyMailbox(ctx, "mb") {
		t.Fatal("onlyMailbox ignores mailbox mb2")
	}
	mine, err := x.SearchWords(ctx, "mb", Filter{}, "v0", 10)
	if err != nil || len(mine) != 10 {
		t.Fatalf("with mailbox mb2: %d hits (%v), want 10", len(mine), err)
	}
	for _, h := range mine {
		var mb string
		if err := x.db.QueryRowContext(ctx, `SELECT mailbox_id FROM mails WHERE id = ?`, h.MailID).Scan(&mb); err != nil || mb != "mb" || h.MailID == gone {
			t.Fatalf("with mailbox mb2, hit %+v is of mailbox %q (%v) or pending removal", h, mb, err)
		}
	}
}
