package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/store/mailindex"
)

// corpus is a generated mailbox: the same mails as a Maildir for notmuch
// and in Steward's mail index, with the words to query.
type corpus struct {
	dir     string // root: home/, Maildir/, notmuch config
	home    string
	maildir string
	// queries are words of a range of frequencies: rare to common.
	queries []string
}

// mailCount is STEWARD_BENCH_MAILS, 100,000 by default.
func mailCount() int {
	if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_MAILS")); err == nil && v > 0 {
		return v
	}
	return 100_000
}

// vocabulary makes n pronounceable pseudo-words.
func vocabulary(r *rand.Rand, n int) []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "ba", "do", "fe", "gi", "ha", "ju", "pe", "qui", "wo", "xa", "yu"}
	seen := map[string]bool{}
	var words []string
	for len(words) < n {
		var b strings.Builder
		for j := 0; j < 2+r.IntN(3); j++ {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// buildCorpus generates the mails once into STEWARD_BENCH_DIR (or a
// temporary directory) and reuses them when the directory holds a corpus
// of the same size.
func buildCorpus(b *testing.B, steward string) *corpus {
	b.Helper()
	n := mailCount()
	dir := os.Getenv("STEWARD_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	dir = filepath.Join(dir, fmt.Sprintf("corpus-%d", n))
	c := &corpus{dir: dir, home: filepath.Join(dir, "home"), maildir: filepath.Join(dir, "Maildir")}
	r := rand.New(rand.NewPCG(7, 11))
	vocab := vocabulary(r, 20000)
	// Zipf: vocab[0] is the most common word. Queries from rare to common.
	for _, rank := range []int{15000, 5000, 1000, 200, 20, 2} {
		c.queries = append(c.queries, vocab[rank])
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return c
	}
	os.RemoveAll(dir)
	for _, d := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(c.maildir, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	// The mailbox as a user adds it (no server is ever contacted here).
	run(b, c, steward, "pw-bench-secret\n", "mail", "add", "--id", "bench", "--name", "Bench", "--host", "127.0.0.1", "--username", "bench", "--level", "LOW")
	ctx := context.Background()
	x, err := mailindex.Open(ctx, filepath.Join(c.home, "data", "mail.db"))
	if err != nil {
		b.Fatal(err)
	}
	if err := x.SaveFolder(ctx, mailindex.Folder{MailboxID: "bench", Path: "INBOX", UIDValidity: 1, UIDNext: uint32(n + 1), ServerMessages: int64(n), LastCompleteSync: time.Now()}); err != nil {
		b.Fatal(err)
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var batch []mailindex.Incoming
	t0 := time.Now()
	for i := 0; i < n; i++ {
		date := start.Add(time.Duration(r.IntN(2*365*24)) * time.Hour)
		var body strings.Builder
		for p := 0; p < 1+r.IntN(4); p++ {
			body.WriteString(words(20 + r.IntN(60)))
			body.WriteString(".\r\n\r\n")
		}
		raw := fmt.Sprintf("From: Sender %d <sender%d@example.org>\r\nTo: me@example.org\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <bench-%d@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s",
			i%300, i%300, words(3+r.IntN(5)), date.Format(time.RFC1123Z), i, body.String())
		if err := os.WriteFile(filepath.Join(c.maildir, "cur", fmt.Sprintf("%d.M%dP1.bench:2,S", date.Unix(), i)), []byte(raw), 0o644); err != nil {
			b.Fatal(err)
		}
		p, err := mailbox.ParseMail([]byte(raw), date, mailbox.ParseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, mailindex.Incoming{UID: uint32(i + 1), Flags: mailindex.Flags{Seen: true}, Mail: p.Mail, Chunks: p.Chunks})
		if len(batch) == 500 || i == n-1 {
			if err := x.AddBatch(ctx, "bench", "INBOX", batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	x.Close()
	b.Logf("generated and indexed %d mails for Steward in %s", n, time.Since(t0).Round(time.Second))
	t0 = time.Now()
	cfg := fmt.Sprintf("[database]\npath=%s\n[user]\nname=Bench\nprimary_email=me@example.org\n[new]\ntags=inbox;\n[search]\nexclude_tags=\n[maildir]\nsynchronize_flags=false\n", c.maildir)
	if err := os.WriteFile(filepath.Join(dir, "notmuch-config"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	notmuch(b, c, "new", "--quiet")
	b.Logf("notmuch new on the same %d mails: %s", n, time.Since(t0).Round(time.Second))
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return c
}
