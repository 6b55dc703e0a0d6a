package mailindex

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTest(t *testing.T) *Index {
	t.Helper()
	x, err := Open(context.Background(), filepath.Join(t.TempDir(), "mail.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func ptr(b bool) *bool { return &b }

var day = time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)

func incoming(uid uint32, key, subject, from, to, body string, received time.Time, fl Flags, atts ...Attachment) Incoming {
	return Incoming{UID: uid, Flags: fl, Mail: Mail{
		ContentKey: key, MessageID: "<" + key + "@x>", Subject: subject, Received: received,
		Addresses: Addresses{From: []Address{{Name: from, Addr: from + "@example.org"}}, To: []Address{{Addr: to + "@example.org"}}},
		Body:      body, Headers: "Subject: " + subject, Attachments: atts,
	}, Chunks: []string{"Subject: " + subject + "\n" + body}}
}

func seed(t *testing.T, x *Index) {
	t.Helper()
	ctx := context.Background()
	for _, f := range []Folder{
		{MailboxID: "mb", Path: "INBOX", UIDValidity: 1, ServerMessages: 3, ServerUnseen: 1},
		{MailboxID: "mb", Path: "Sent", SpecialUse: SpecialSent, UIDValidity: 1, ServerMessages: 1, ServerUnseen: 0},
		{MailboxID: "other", Path: "INBOX", UIDValidity: 1, ServerMessages: -1, ServerUnseen: -1},
	} {
		if err := x.SaveFolder(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.AddBatch(ctx, "mb", "INBOX", []Incoming{
		incoming(1, "k1", "Delivery date", "supplier", "me", "The delivery moves to Friday.", day, Flags{Seen: true}),
		incoming(2, "k2", "Contract draft", "legal", "me", "Please review the contract clause.", day.Add(24*time.Hour), Flags{Flagged: true},
			Attachment{Number: 1, Name: "contract.txt", Type: "text/plain", Size: 10, State: AttachmentExtracted, Text: "clause 7"}),
		incoming(3, "k3", "Lunch", "friend", "boss", "Lunch on Friday?", day.Add(48*time.Hour), Flags{}),
	}); err != nil {
		t.Fatal(err)
	}
	if err := x.AddBatch(ctx, "mb", "Sent", []Incoming{
		incoming(7, "k4", "Re: Delivery date", "me", "supplier", "Friday works.", day.Add(72*time.Hour), Flags{Seen: true}),
	}); err != nil {
		t.Fatal(err)
	}
	if err := x.AddBatch(ctx, "other", "INBOX", []Incoming{
		incoming(1, "k1", "Delivery date", "supplier", "me", "The delivery moves to Friday.", day, Flags{}),
	}); err != nil {
		t.Fatal(err)
	}
}

func TestFilters(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	tests := []struct {
		name string
		f    Filter
		want []string // subjects, newest first
	}{
		{"all", Filter{}, []string{"Re: Delivery date", "Lunch", "Contract draft", "Delivery date"}},
		{"folder", Filter{Folder: "INBOX"}, []string{"Lunch", "Contract draft", "Delivery date"}},
		{"special sent", Filter{SpecialUse: SpecialSent}, []string{"Re: Delivery date"}},
		{"unknown folder", Filter{Folder: "inbox"}, nil},
		{"from substring", Filter{From: "LEGAL"}, []string{"Contract draft"}},
		{"from percent is literal", Filter{From: "%"}, nil},
		{"to", Filter{To: "boss"}, []string{"Lunch"}},
		{"after inclusive", Filter{After: day.Add(48 * time.Hour)}, []string{"Re: Delivery date", "Lunch"}},
		{"before exclusive", Filter{Before: day.Add(24 * time.Hour)}, []string{"Delivery date"}},
		{"unread", Filter{Unread: ptr(true)}, []string{"Lunch", "Contract draft"}},
		{"read", Filter{Unread: ptr(false)}, []string{"Re: Delivery date", "Delivery date"}},
		{"flagged", Filter{Flagged: ptr(true)}, []string{"Contract draft"}},
		{"attachments", Filter{HasAttachments: ptr(true)}, []string{"Contract draft"}},
		{"importance normal", Filter{Importance: ImportanceNormal}, []string{"Re: Delivery date", "Lunch", "Contract draft", "Delivery date"}},
		{"importance high", Filter{Importance: ImportanceHigh}, nil},
		{"not encrypted", Filter{Encrypted: ptr(false)}, []string{"Re: Delivery date", "Lunch", "Contract draft", "Delivery date"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids, more, err := x.List(ctx, "mb", tc.f, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if more {
				t.Error("more = true for a short list")
			}
			ss, err := x.Summaries(ctx, "mb", ids)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range ss {
				got = append(got, s.Subject)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	ids, more, err := x.List(ctx, "mb", Filter{}, 1, 2)
	if err != nil || len(ids) != 2 || !more {
		t.Errorf("paged list: %v %v %v", ids, more, err)
	}
}

func TestIdempotentBatchesAndRelink(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	seed(t, x) // a resumed sync writes the same batches again
	ctx := context.Background()
	st, err := x.Stats(ctx, "mb")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mails != 4 || st.Chunks != 4 {
		t.Fatalf("after repeating the batches: %+v, want 4 mails and 4 chunks", st)
	}
	// A copy of k1 into Sent only gains a location.
	if err := x.AddBatch(ctx, "mb", "Sent", []Incoming{{UID: 9, Mail: Mail{ContentKey: "k1"}}}); err != nil {
		t.Fatal(err)
	}
	c, err := x.Count(ctx, "mb", Filter{}, GroupNone, 20)
	if err != nil || c.Mails != 4 {
		t.Fatalf("count after copy = %+v, %v; want 4 mails", c, err)
	}
	// UIDVALIDITY changed: locations go, mails stay until orphans go.
	if err := x.ResetFolder(ctx, "mb", "INBOX", 2); err != nil {
		t.Fatal(err)
	}
	uids, _ := x.UIDs(ctx, "mb", "INBOX")
	if len(uids) != 0 {
		t.Fatalf("uids after reset: %v", uids)
	}
	if n, _ := x.PendingRemovals(ctx, "mb"); n != 2 {
		t.Errorf("pending removals = %d, want 2 (k2, k3; k1 is also in Sent)", n)
	}
	// Relink k2 under its new UID, then remove orphans.
	if err := x.AddBatch(ctx, "mb", "INBOX", []Incoming{{UID: 1, Mail: Mail{ContentKey: "k2"}}}); err != nil {
		t.Fatal(err)
	}
	n, err := x.RemoveOrphans(ctx, "mb")
	if err != nil || n != 1 {
		t.Fatalf("removed %d orphans (%v), want 1", n, err)
	}
	hits, err := x.SearchWords(ctx, "mb", Filter{}, "lunch", 10)
	if err != nil || len(hits) != 0 {
		t.Errorf("removed mail still found by words: %v %v", hits, err)
	}
	var fts int
	if err := x.db.QueryRow(`SELECT COUNT(*) FROM chunks_fts`).Scan(&fts); err != nil || fts != 4 {
		t.Errorf("fts rows = %d (%v), want 4 (3 in mb + 1 in other)", fts, err)
	}
	hits, err = x.SearchWords(ctx, "mb", Filter{}, "contract", 10)
	if err != nil || len(hits) != 1 {
		t.Errorf("relinked mail not found: %v %v", hits, err)
	}
}

func TestRemoveUIDs(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	if err := x.RemoveUIDs(ctx, "mb", "INBOX", []uint32{3}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := x.SearchWords(ctx, "mb", Filter{}, "lunch", 10); len(hits) != 0 {
		t.Errorf("a mail without location is still found: %v", hits)
	}
	if _, err := x.RemoveOrphans(ctx, "mb"); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Mail(ctx, "mb", "nope"); err != ErrNotFound {
		t.Errorf("unknown mail: %v", err)
	}
}

func TestSearchWordsAndFuse(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	for _, q := range []string{`"`, `AND OR NOT`, `NEAR(a b)`, `*`, `delivery"`, `col:friday`, ``} {
		if _, err := x.SearchWords(ctx, "mb", Filter{}, q, 5); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
	hits, err := x.SearchWords(ctx, "mb", Filter{Folder: "INBOX"}, "friday", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("friday in INBOX: %d hits, want 2", len(hits))
	}
	// Diacritics are removed on both sides.
	if hits, _ := x.SearchWords(ctx, "mb", Filter{}, "Frïday", 10); len(hits) != 3 {
		t.Errorf("diacritics: %d hits, want 3", len(hits))
	}
	texts, err := x.ChunkTexts(ctx, []int64{hits[0].ChunkID})
	if err != nil || texts[hits[0].ChunkID] == "" {
		t.Errorf("chunk text: %v %v", texts, err)
	}

	a := []Hit{{MailID: "x", ChunkID: 1}, {MailID: "y", ChunkID: 2}, {MailID: "x", ChunkID: 3}}
	b := []Hit{{MailID: "y", ChunkID: 4}, {MailID: "z", ChunkID: 5}}
	f := Fuse(a, b)
	if len(f) != 3 || f[0].MailID != "y" || f[1].MailID != "x" || f[2].MailID != "z" {
		t.Fatalf("fuse order: %+v", f)
	}
	if want := 1.0/62 + 1.0/61; math.Abs(f[0].Score-want) > 1e-12 || f[0].ChunkID != 2 {
		t.Errorf("y: score %v chunk %d, want %v and the first list's chunk 2", f[0].Score, f[0].ChunkID, want)
	}
	// A tie keeps the first list's mail first.
	f = Fuse([]Hit{{MailID: "v"}}, []Hit{{MailID: "w"}})
	if f[0].MailID != "v" {
		t.Errorf("tie: %+v", f)
	}
}

func TestVectors(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	pend, err := x.PendingChunks(ctx, "mb", "m1", 0, 100)
	if err != nil || len(pend) != 4 {
		t.Fatalf("pending: %d %v", len(pend), err)
	}
	vecs := map[int64][]float32{}
	for i, c := range pend {
		v := make([]float32, 3)
		v[i%3] = 1
		vecs[c.ID] = v
	}
	if err := x.SetEmbeddings(ctx, "m1", vecs); err != nil {
		t.Fatal(err)
	}
	if p, _ := x.PendingChunks(ctx, "mb", "m1", 0, 100); len(p) != 0 {
		t.Errorf("still pending: %v", p)
	}
	if p, _ := x.PendingChunks(ctx, "mb", "m2", 0, 100); len(p) != 4 {
		t.Errorf("a model change re-embeds: %d pending", len(p))
	}
	hits, err := x.SearchVector(ctx, "mb", Filter{}, "m1", []float32{0, 1, 0}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 4 || hits[0].ChunkID != pend[1].ID || math.Abs(hits[0].Score-1) > 1e-9 {
		t.Errorf("vector hits: %+v", hits)
	}
	if hits, _ := x.SearchVector(ctx, "mb", Filter{Flagged: ptr(true)}, "m1", []float32{0, 1, 0}, 10); len(hits) != 1 {
		t.Errorf("filtered vector hits: %+v", hits)
	}
	if hits, _ := x.SearchVector(ctx, "mb", Filter{}, "m1", []float32{0, 1}, 10); len(hits) != 0 {
		t.Errorf("other dimension matched: %+v", hits)
	}
	if c, e, _ := x.EmbeddingCoverage(ctx, "mb", "m1"); c != 4 || e != 4 {
		t.Errorf("coverage %d/%d", e, c)
	}
	if Cosine([]float32{1, 0}, []float32{0, 0}) != 0 {
		t.Error("cosine with a zero vector")
	}
	v := []float32{1.5, -2, 0.25}
	if got := DecodeVector(EncodeVector(v)); fmt.Sprint(got) != fmt.Sprint(v) {
		t.Errorf("round trip %v", got)
	}
}

func TestCount(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	c, err := x.Count(ctx, "mb", Filter{}, GroupFolder, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mails != 4 || c.ServerMessages != 4 || c.ServerUnseen != 1 || len(c.Groups) != 1 || !c.MoreGroups ||
		c.Groups[0].Key != "INBOX" || c.Groups[0].Mails != 3 || c.Groups[0].ServerMessages != 3 {
		t.Errorf("by folder: %+v", c)
	}
	c, err = x.Count(ctx, "mb", Filter{To: "me"}, GroupSender, 20)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mails != 2 || len(c.Groups) != 2 || c.MoreGroups {
		t.Errorf("by sender: %+v", c)
	}
	c, _ = x.Count(ctx, "other", Filter{}, GroupNone, 20)
	if c.Mails != 1 || c.ServerMessages != -1 {
		t.Errorf("unknown server counts must stay unknown: %+v", c)
	}
	if _, err := x.Count(ctx, "mb", Filter{}, "subject", 20); err == nil {
		t.Error("unknown grouping accepted")
	}
}

func TestMailAndMessageID(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	id, ok, err := x.MailIDByMessageID(ctx, "mb", "<k2@x>")
	if err != nil || !ok {
		t.Fatalf("by message id: %v %v", ok, err)
	}
	m, err := x.Mail(ctx, "mb", id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Contract draft" || m.Body == "" || m.Headers == "" || len(m.Attachments) != 1 || m.Attachments[0].Text != "clause 7" ||
		len(m.Locations) != 1 || !m.Locations[0].Flags.Flagged {
		t.Errorf("mail: %+v", m)
	}
	if _, err := x.Mail(ctx, "other", id); err != ErrNotFound {
		t.Errorf("a mail of another mailbox was found: %v", err)
	}
}

func TestSignIn(t *testing.T) {
	x := openTest(t)
	ctx := context.Background()
	if _, _, ok, err := x.SignInRefused(ctx, "mb"); ok || err != nil {
		t.Fatalf("fresh index: %v %v", ok, err)
	}
	if err := x.RecordSignInRefused(ctx, "mb", day, "AUTHENTICATIONFAILED"); err != nil {
		t.Fatal(err)
	}
	at, reason, ok, err := x.SignInRefused(ctx, "mb")
	if !ok || err != nil || !at.Equal(day) || reason != "AUTHENTICATIONFAILED" {
		t.Errorf("refusal: %v %q %v %v", at, reason, ok, err)
	}
	if err := x.ClearSignInRefusal(ctx, "mb"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := x.SignInRefused(ctx, "mb"); ok {
		t.Error("refusal not cleared")
	}
}

func FuzzMatchQuery(f *testing.F) {
	for _, s := range []string{"delivery date", `"quoted" AND x`, "NEAR(a b)", "日本語のメール", "a*", "-x +y", "\x00"} {
		f.Add(s)
	}
	x, err := Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer x.Close()
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := x.SearchWords(context.Background(), "mb", Filter{}, q, 3); err != nil {
			t.Errorf("query %q (match %q): %v", q, MatchQuery(q), err)
		}
	})
}

func TestSearchKeepsBestChunkPerMail(t *testing.T) {
	x := openTest(t)
	ctx := context.Background()
	if err := x.SaveFolder(ctx, Folder{MailboxID: "mb", Path: "INBOX", ServerMessages: -1, ServerUnseen: -1}); err != nil {
		t.Fatal(err)
	}
	long := incoming(1, "long", "Chairs", "a", "b", "", day, Flags{})
	long.Chunks = []string{"chairs", "chairs chairs", "chairs and more chairs chairs", "tables"}
	short := incoming(2, "short", "Other", "a", "b", "", day, Flags{})
	short.Chunks = []string{"one chair: chairs"}
	if err := x.AddBatch(ctx, "mb", "INBOX", []Incoming{long, short}); err != nil {
		t.Fatal(err)
	}
	hits, err := x.SearchWords(ctx, "mb", Filter{}, "chairs", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].MailID == hits[1].MailID {
		t.Fatalf("hits %+v, want one per mail", hits)
	}
	texts, _ := x.ChunkTexts(ctx, []int64{hits[0].ChunkID, hits[1].ChunkID})
	for _, h := range hits {
		if texts[h.ChunkID] == "tables" {
			t.Errorf("a chunk without the word was chosen: %+v", h)
		}
	}
	if hits, _ := x.SearchWords(ctx, "mb", Filter{}, "chairs", 1); len(hits) != 1 {
		t.Errorf("limit counts mails: %d hits", len(hits))
	}
	if n, _ := x.PendingRemovals(ctx, "mb"); n != 0 {
		t.Errorf("pending removals without any removal: %d", n)
	}
}

func TestVectorCacheFollowsWrites(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	pend, _ := x.PendingChunks(ctx, "mb", "m", 0, 100)
	vecs := map[int64][]float32{}
	for _, c := range pend {
		vecs[c.ID] = []float32{1, 0}
	}
	vecs[pend[2].ID] = []float32{0, 1}
	if err := x.SetEmbeddings(ctx, "m", vecs); err != nil {
		t.Fatal(err)
	}
	hits, _ := x.SearchVector(ctx, "mb", Filter{}, "m", []float32{0, 1}, 1)
	if len(hits) != 1 || hits[0].ChunkID != pend[2].ID {
		t.Fatalf("first search %+v", hits)
	}
	// A new embedding is seen by the next search.
	if err := x.SetEmbeddings(ctx, "m", map[int64][]float32{pend[0].ID: {0, 2}, pend[2].ID: {1, 0}}); err != nil {
		t.Fatal(err)
	}
	hits, _ = x.SearchVector(ctx, "mb", Filter{}, "m", []float32{0, 1}, 1)
	if len(hits) != 1 || hits[0].ChunkID != pend[0].ID {
		t.Fatalf("after the write %+v, want chunk %d", hits, pend[0].ID)
	}
	// A mail whose last location went is not found, filter or not.
	s, _ := x.Summaries(ctx, "mb", []string{hits[0].MailID})
	if err := x.RemoveUIDs(ctx, "mb", s[0].Locations[0].Folder, []uint32{s[0].Locations[0].UID}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{}, {Unread: ptr(false)}} {
		hits, _ = x.SearchVector(ctx, "mb", f, "m", []float32{0, 1}, 10)
		for _, h := range hits {
			if h.MailID == s[0].ID {
				t.Errorf("filter %+v: a mail pending removal was found", f)
			}
		}
		if len(hits) == 0 {
			t.Errorf("filter %+v: nothing found", f)
		}
	}
}

func TestWordPathsAgree(t *testing.T) {
	x := openTest(t)
	ctx := context.Background()
	if err := x.SaveFolder(ctx, Folder{MailboxID: "mb", Path: "INBOX", ServerMessages: -1, ServerUnseen: -1}); err != nil {
		t.Fatal(err)
	}
	if err := x.SaveFolder(ctx, Folder{MailboxID: "other", Path: "INBOX", ServerMessages: -1, ServerUnseen: -1}); err != nil {
		t.Fatal(err)
	}
	var mb, other []Incoming
	for i := 0; i < 120; i++ {
		body := strings.Repeat("alpha ", 1+i%7) + strings.Repeat("beta ", 1+i%5)
		it := incoming(uint32(i+1), fmt.Sprint("k", i), fmt.Sprint("S", i), "a", "b", body, day.Add(time.Duration(i)*time.Hour), Flags{Seen: i%2 == 0})
		it.Chunks = []string{body, "gamma " + body}
		mb = append(mb, it)
		other = append(other, incoming(uint32(i+1), fmt.Sprint("o", i), "O", "a", "b", "alpha alpha alpha alpha alpha alpha alpha alpha", day, Flags{}))
	}
	if err := x.AddBatch(ctx, "mb", "INBOX", mb); err != nil {
		t.Fatal(err)
	}
	if err := x.AddBatch(ctx, "other", "INBOX", other); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q     string
		f     Filter
		limit int
	}{{"alpha", Filter{}, 10}, {"alpha beta", Filter{Unread: ptr(true)}, 25}, {"gamma", Filter{}, 200}, {"beta", Filter{Before: day.Add(10 * time.Hour)}, 5}} {
		fast, err := x.SearchWords(ctx, "mb", tc.f, tc.q, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := x.searchWordsExhaustive(ctx, "mb", tc.f, MatchQuery(tc.q), tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: fast %d hits, exhaustive %d", tc.q, len(fast), len(slow))
		}
		for i := range fast {
			if math.Abs(fast[i].Score-slow[i].Score) > 1e-9 {
				t.Errorf("%q hit %d: fast %+v, exhaustive %+v", tc.q, i, fast[i], slow[i])
			}
		}
	}
}
