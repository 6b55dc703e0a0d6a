package mailindex

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
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
