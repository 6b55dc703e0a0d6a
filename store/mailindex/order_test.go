package mailindex

import (
	"context"
	"fmt"
	"github.com/stewardhq/steward/store/searchindex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// orderCorpus fills x with a fixed generated mailbox: 600 mails of
// Zipf-distributed words in INBOX and Archive (every seventh mail in
// both), from 40 senders over 600 hours, some with two chunks.
func orderCorpus(t *testing.T, x *Index) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []string{"INBOX", "Archive"} {
		if err := x.SaveFolder(ctx, Folder{MailboxID: "mb", Path: p, ServerMessages: -1, ServerUnseen: -1}); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(31, 32))
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("v%d", i)
	}
	zipf := rand.NewZipf(r, 1.2, 1, uint64(len(vocab)-1))
	batches := map[string][]Incoming{}
	for i := 0; i < 600; i++ {
		ws := make([]string, 20+r.IntN(60))
		for j := range ws {
			ws[j] = vocab[zipf.Uint64()]
		}
		body := strings.Join(ws, " ")
		m := incoming(uint32(i+1), fmt.Sprint("k", i), fmt.Sprint("subject ", i), fmt.Sprint("s", i%40), "me", body,
			day.Add(time.Duration(i)*time.Hour), Flags{Seen: i%3 == 0})
		if i%4 == 0 {
			m.Chunks = append(m.Chunks, strings.Join(ws[len(ws)/2:], " "))
		}
		folder := "INBOX"
		if i%5 == 0 {
			folder = "Archive"
		}
		batches[folder] = append(batches[folder], m)
		if i%7 == 0 {
			other := "Archive"
			if folder == "Archive" {
				other = "INBOX"
			}
			batches[other] = append(batches[other], m)
		}
	}
	for _, f := range []string{"INBOX", "Archive"} {
		if err := x.AddBatch(ctx, "mb", f, batches[f]); err != nil {
			t.Fatal(err)
		}
	}
}

// orderReport lists, for a fixed set of queries and filters, the top
// word hits by content key, chunk position and score.
func orderReport(t *testing.T, x *Index) string {
	t.Helper()
	ctx := context.Background()
	filters := []struct {
		name string
		f    Filter
	}{
		{"none", Filter{}},
		{"folder", Filter{Folder: "Archive"}},
		{"from", Filter{From: "s7@"}},
		{"after", Filter{After: day.Add(450 * time.Hour)}},
		{"unread+folder", Filter{Unread: ptr(true), Folder: "INBOX"}},
	}
	var b strings.Builder
	for _, q := range []string{"v0", "v1 v2", "v40", "v150", "v7 v90 v200"} {
		for _, f := range filters {
			hits, err := x.SearchWords(ctx, "mb", f.f, q, 12)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s | %s | %d hits\n", q, f.name, len(hits))
			for _, h := range hits {
				var key string
				var seq int
				if err := x.db.QueryRowContext(ctx, `SELECT m.content_key, c.seq FROM chunks c JOIN mails m ON m.id = c.mail_id WHERE c.id = ?`,
					h.ChunkID).Scan(&key, &seq); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "  %s#%d %.9g\n", key, seq, h.Score)
			}
		}
	}
	return b.String()
}

// TestWordOrderUnchanged compares the word results on a fixed generated
// corpus with those recorded from the implementation before the query
// path was reworked (testdata/word_order.golden). Set
// STEWARD_UPDATE_GOLDEN=1 to record anew.
func TestWordOrderUnchanged(t *testing.T) {
	x := openTest(t)
	orderCorpus(t, x)
	x.fewMatches = 0
	got := orderReport(t, x)
	// The same with every filtered search ranking the filtered chunks
	// alone, and with every one ranking the whole table.
	x.commonDocs = 0
	if few := orderReport(t, x); few != got {
		t.Fatal("filtered searches ranking the filtered chunks alone answer otherwise than by default")
	}
	x.commonDocs, x.fewChunks = commonDocs, 0
	if whole := orderReport(t, x); whole != got {
		t.Fatal("filtered searches ranking the whole table answer otherwise than by default")
	}
	golden := filepath.Join("testdata", "word_order.golden")
	if os.Getenv("STEWARD_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("results differ from %s at line %d: got %q, want %q", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("results differ from %s in length: %d lines, want %d", golden, len(gl), len(wl))
	}
}

// TestWordPathsAgreeOnGeneratedCorpus checks the candidate path against
// the exhaustive query under every filter kind.
func TestWordPathsAgreeOnGeneratedCorpus(t *testing.T) {
	x := openTest(t)
	orderCorpus(t, x)
	ctx := context.Background()
	for _, knobs := range [][3]int{{fewChunks, commonDocs, 0}, {fewChunks, 0, 0}, {0, commonDocs, 0}, {fewChunks, commonDocs, fewMatches}} {
		x.fewChunks, x.commonDocs, x.fewMatches = knobs[0], knobs[1], knobs[2]
		for _, tc := range []struct {
			q string
			f Filter
		}{
			{"v0", Filter{Folder: "Archive"}},
			{"v1 v3", Filter{From: "s7@"}},
			{"v0", Filter{After: day.Add(500 * time.Hour), Unread: ptr(false)}},
			{"v12", Filter{Folder: "INBOX", Before: day.Add(100 * time.Hour)}},
		} {
			fast, err := x.SearchWords(ctx, "mb", tc.f, tc.q, 15)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := x.searchWordsExhaustive(ctx, "mb", tc.f, MatchQuery(tc.q), 15)
			if err != nil {
				t.Fatal(err)
			}
			if len(fast) != len(slow) || len(fast) == 0 {
				t.Fatalf("%q %+v: fast %d hits, exhaustive %d", tc.q, tc.f, len(fast), len(slow))
			}
			for i := range fast {
				if fast[i].Score != slow[i].Score {
					t.Errorf("%q %+v hit %d: fast %+v, exhaustive %+v", tc.q, tc.f, i, fast[i], slow[i])
				}
			}
		}
	}
}

func TestWordDocs(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	for _, tc := range []struct {
		query string
		want  int64
	}{
		{"friday", 4}, // three chunks of mb, one of other
		{"FRIDAY", 4}, // case does not matter
		{"lunch clause", 2},
		{"lunch", 1},
		{"nothingsuch", 0},
		{"", 0},
	} {
		got, err := x.words.Docs(ctx, searchindex.QueryWords(tc.query))
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("wordDocs(%q) = %d, want %d", tc.query, got, tc.want)
		}
	}
}
