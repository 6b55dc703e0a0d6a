package mailindex

import (
	"github.com/stewardhq/steward/store/searchindex"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

func TestTopHitsIsSortedPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, k int }{{0, 5}, {3, 5}, {5, 5}, {50, 1}, {50, 7}, {1000, 40}, {1000, 999}, {10, 0}} {
		hits := make([]Hit, tc.n)
		for i := range hits {
			// Few distinct scores, so ties are decided by chunk ID.
			hits[i] = Hit{MailID: "m", ChunkID: int64(r.IntN(1 << 20)), Score: float64(r.IntN(5))}
		}
		want := slices.Clone(hits)
		sort.Slice(want, func(i, j int) bool { return hitBefore(want[i], want[j]) })
		want = want[:min(tc.k, len(want))]
		got := topHits(slices.Clone(hits), tc.k)
		if len(got) != len(want) {
			t.Fatalf("n=%d k=%d: %d hits, want %d", tc.n, tc.k, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d k=%d: hit %d is %+v, want %+v", tc.n, tc.k, i, got[i], want[i])
			}
		}
	}
}

func TestSearchVectorSkipsMailsPendingRemoval(t *testing.T) {
	x := openTest(t)
	ctx := t.Context()
	if err := x.SaveFolder(ctx, Folder{MailboxID: "mb", Path: "INBOX", ServerMessages: -1, ServerUnseen: -1}); err != nil {
		t.Fatal(err)
	}
	var items []Incoming
	for i := range 10 {
		items = append(items, incoming(uint32(i+1), "k"+string(rune('a'+i)), "S", "a", "b", "text", day, Flags{}))
	}
	if err := x.AddBatch(ctx, "mb", "INBOX", items); err != nil {
		t.Fatal(err)
	}
	pend, err := x.PendingChunks(ctx, "mb", "m", 0, 100)
	if err != nil || len(pend) != 10 {
		t.Fatalf("pending %d (%v), want 10", len(pend), err)
	}
	// Chunk i points the more away from the query the larger i is.
	vecs := map[int64][]float32{}
	for i, p := range pend {
		vecs[p.ID] = []float32{1, float32(i) / 10}
	}
	if err := x.SetEmbeddings(ctx, "m", vecs); err != nil {
		t.Fatal(err)
	}
	// The eight closest lose their location: the best of the rest is the
	// ninth, beyond the few hits ranked first.
	if err := x.RemoveUIDs(ctx, "mb", "INBOX", []uint32{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 2, 5} {
		hits, err := x.SearchVector(ctx, "mb", Filter{}, "m", []float32{1, 0}, limit)
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{pend[8].ID, pend[9].ID}[:min(limit, 2)]
		if len(hits) != len(want) {
			t.Fatalf("limit %d: %+v, want chunks %v", limit, hits, want)
		}
		for i := range want {
			if hits[i].ChunkID != want[i] {
				t.Fatalf("limit %d: %+v, want chunks %v", limit, hits, want)
			}
		}
	}
}

// bruteVector is the reference search by meaning: every embedded chunk of
// a mail meeting f, scored by cosine, best chunk per mail.
func bruteVector(t *testing.T, x *Index, f Filter, model string, q []float32, limit int) []Hit {
	t.Helper()
	eligible, err := x.matchingMails(t.Context(), "mb", f)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := x.db.Query(`SELECT e.chunk_id, c.mail_id, e.vector FROM embeddings e JOIN chunks c ON c.id = e.chunk_id WHERE e.model = ?`, model)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	qn := slices.Clone(q)
	searchindex.Normalize(qn)
	best := map[string]Hit{}
	for rows.Next() {
		var id int64
		var mail string
		var blob []byte
		if err := rows.Scan(&id, &mail, &blob); err != nil {
			t.Fatal(err)
		}
		if !eligible[mail] {
			continue
		}
		v := DecodeVector(blob)
		searchindex.Normalize(v)
		h := Hit{MailID: mail, ChunkID: id, Score: float64(searchindex.Dot(qn, v))}
		if b, ok := best[mail]; !ok || hitBefore(h, b) {
			best[mail] = h
		}
	}
	var hits []Hit
	for _, h := range best {
		hits = append(hits, h)
	}
	return topHits(hits, limit)
}

func TestSearchVectorEqualsBruteForce(t *testing.T) {
	x := openTest(t)
	orderCorpus(t, x)
	ctx := t.Context()
	pend, err := x.PendingChunks(ctx, "mb", "m8", 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	vecs := map[int64][]float32{}
	for _, p := range pend {
		v := make([]float32, 8)
		for i := range v {
			v[i] = r.Float32() - 0.5
		}
		vecs[p.ID] = v
	}
	if err := x.SetEmbeddings(ctx, "m8", vecs); err != nil {
		t.Fatal(err)
	}
	q := []float32{1, -0.5, 0.25, 0, 0.75, -1, 0.5, 0.1}
	for _, checks := range []int{maxVectorChecks, 16} {
		x.maxVectorChecks = checks
		for _, f := range []Filter{
			{},
			{Folder: "Archive"},                  // a fifth of the mails: checked a window at a time
			{From: "s7@"},                        // few by the sender index: listed
			{Unread: ptr(true), Folder: "INBOX"}, // many
			{Flagged: ptr(true)},                 // none flagged: checked, then listed
			{After: day.Add(590 * time.Hour)},    // the last ten hours: few by date
			{Before: day.Add(30 * time.Hour), To: "me"}, // two conditions, short recipient
		} {
			for _, limit := range []int{1, 12, 40} {
				got, err := x.SearchVector(ctx, "mb", f, "m8", q, limit)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteVector(t, x, f, "m8", q, limit)
				if len(got) != len(want) {
					t.Fatalf("%+v limit %d: %d hits, want %d", f, limit, len(got), len(want))
				}
				for i := range got {
					if got[i].MailID != want[i].MailID || got[i].ChunkID != want[i].ChunkID || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
						t.Fatalf("%+v limit %d hit %d: %+v, want %+v", f, limit, i, got[i], want[i])
					}
				}
			}
		}
	}
}
