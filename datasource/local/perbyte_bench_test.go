package local

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/internal/dovetest"
	"github.com/stewardhq/steward/internal/embedtest"
	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
)

// benchVocab makes the pronounceable pseudo-words of the benchmarks.
func benchVocab(r *rand.Rand, n int) []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "ba", "do", "fe", "gi", "ha", "ju", "pe", "qui", "wo", "xa", "yu"}
	vocab := make([]string, n)
	for i := range vocab {
		var w strings.Builder
		for j := 0; j < 2+r.IntN(3); j++ {
			w.WriteString(syl[r.IntN(len(syl))])
		}
		vocab[i] = w.String()
	}
	return vocab
}

// writeMails writes mails of the same kind of text as writeCorpus (one to
// four paragraphs of 20 to 80 words, as the mailbox benchmark makes them)
// into a Maildir until they hold at least bytes bytes; it returns their
// number and total size.
func writeMails(b *testing.B, dir string, bytes int64, vocab []string, r *rand.Rand) (int, int64) {
	for _, d := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
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
	var total int64
	n := 0
	for ; total < bytes; n++ {
		date := start.Add(time.Duration(r.IntN(2*365*24)) * time.Hour)
		var body strings.Builder
		for p := 0; p < 1+r.IntN(4); p++ {
			body.WriteString(words(20 + r.IntN(60)))
			body.WriteString(".\r\n\r\n")
		}
		msg := fmt.Sprintf("From: Sender %d <sender%d@example.org>\r\nTo: me@example.org\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <bench-%d@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s",
			n%300, n%300, words(3+r.IntN(5)), date.Format(time.RFC1123Z), n, body.String())
		path := filepath.Join(dir, "cur", fmt.Sprintf("%d.M%dP1.bench:2,S", date.Unix(), n))
		if err := os.WriteFile(path, []byte(msg), 0o644); err != nil {
			b.Fatal(err)
		}
		total += int64(len(msg))
	}
	return n, total
}

// chownToNobody hands the Maildir to the user Dovecot serves it as when
// the benchmark runs as root.
func chownToNobody(b *testing.B, root string) {
	if os.Geteuid() != 0 {
		return
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		b.Fatal(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	_ = filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			_ = os.Chown(p, uid, gid)
		}
		return nil
	})
}

// usage is what one indexing run cost.
type usage struct {
	wall      time.Duration
	cpu       time.Duration // this process's user and system time
	serverCPU time.Duration // Dovecot's, for the mail
	peakRSS   int64         // bytes; -1 when the kernel cannot tell
	peakHeap  uint64
	bytes     int64
	chunks    int
	embedded  int
	itemsDone int
}

// add sums the costs of two runs (peaks are the higher of the two).
func (u *usage) add(v usage) {
	u.wall += v.wall
	u.cpu += v.cpu
	u.serverCPU += v.serverCPU
	u.peakRSS = max(u.peakRSS, v.peakRSS)
	u.peakHeap = max(u.peakHeap, v.peakHeap)
	u.bytes += v.bytes
	u.chunks += v.chunks
	u.embedded += v.embedded
	u.itemsDone += v.itemsDone
}

// groupCPU is the CPU time spent so far by the processes of the process
// group whose leader's command line holds marker (Dovecot runs in its own
// group, its master started with its configuration under the test's
// directory), their waited-for children included; 0 when not found.
func groupCPU(marker string) time.Duration {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	leader := -1
	type proc struct {
		pgrp  int
		ticks int64
	}
	var procs []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && leader < 0 && bytes.Contains(cmd, []byte(marker)) {
			leader = pid
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command name (in parentheses): state is
		// field 3, pgrp 5, utime 14, stime 15, cutime 16, cstime 17.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 15 {
			continue
		}
		pgrp, _ := strconv.Atoi(f[2])
		var ticks int64
		for _, k := range f[11:15] {
			v, _ := strconv.ParseInt(k, 10, 64)
			ticks += v
		}
		procs = append(procs, proc{pgrp, ticks})
	}
	if leader < 0 {
		return 0
	}
	var ticks int64
	for _, p := range procs {
		if p.pgrp == leader {
			ticks += p.ticks
		}
	}
	// The kernel counts in clock ticks of 1/100 s (USER_HZ).
	return time.Duration(ticks) * 10 * time.Millisecond
}

// resetPeakRSS starts the kernel's resident-set high-water mark anew
// (Linux: "5" to /proc/self/clear_refs); peakRSS reads it (VmHWM).
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// measureRun runs f with the peak heap sampled every 20 ms and the peak
// RSS reset before.
func measureRun(f func(u *usage) error) (usage, error) {
	runtime.GC()
	reset := resetPeakRSS()
	stopHeap := testenv.SampleHeapInUse(20 * time.Millisecond)
	var u usage
	c0, t0 := testenv.ProcessCPU(), time.Now()
	err := f(&u)
	u.wall, u.cpu = time.Since(t0), testenv.ProcessCPU()-c0
	peakHeap := stopHeap()
	u.peakHeap = peakHeap
	u.peakRSS = -1
	if reset {
		u.peakRSS = peakRSS()
	}
	return u, err
}

// BenchmarkIndexPerByte indexes, side by side in one run, a folder of
// STEWARD_BENCH_DOCS generated documents (default 500; about 20 KB of
// text each, mixed Markdown, text, HTML, Go, CSV, DOCX and PDF, see
// writeCorpus) through the document indexer (Sync: walk, read, extract,
// chunk, store, embed) and as many bytes of mail of the same kind of text
// through the mail indexer (mailbox.Indexer.Sync from a private Dovecot
// over IMAP on loopback: fetch, parse, chunk, store, embed), both with the
// same embedding server stand-in on loopback (OpenAI /v1/embeddings, 256
// dimensions, words hashed to buckets) and the same client, package embed.
// Each runs twice (mail, documents, documents, mail). It reports each
// pipeline's MB/s of input, the ratio, this process's CPU
// seconds per MB and Dovecot's (for the mail), the peak heap and the
// peak RSS of the process during each run. Run it once:
//
//	STEWARD_BENCH_DOCS=10000 go test -run '^$' -bench IndexPerByte -benchtime=1x -timeout 2h ./datasource/local/
func BenchmarkIndexPerByte(b *testing.B) {
	n := 500
	if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_DOCS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	vocab := benchVocab(r, 30000)
	docDir := filepath.Join(b.TempDir(), "corpus")
	docBytes := writeCorpus(b, docDir, n, 20_000, vocab, r)

	s := dovetest.Start(b, dovetest.User{Name: "bench", Password: "pw"})
	maildir := filepath.Join(s.Dir, "mail", "bench", "Maildir")
	mails, mailBytes := writeMails(b, maildir, docBytes, vocab, r)
	chownToNobody(b, filepath.Join(s.Dir, "mail"))
	b.Logf("generated %d documents (%.1f MB) and %d mails (%.1f MB)", n, float64(docBytes)/1e6, mails, float64(mailBytes)/1e6)

	srv := embedtest.Start(b, hashModel(256))
	emb, err := embed.New(embed.Config{Kind: embed.OpenAI, BaseURL: srv.URL + "/v1/", Model: "hash256", Provider: "SELF_HOSTED", BatchSize: 64}, "key-1", srv.Client())
	if err != nil {
		b.Fatal(err)
	}

	runMail := func(u *usage) error {
		dove0 := groupCPU(s.Dir)
		x, err := mailindex.Open(ctx, filepath.Join(b.TempDir(), "mail.db"))
		if err != nil {
			return err
		}
		defer x.Close()
		cfg := mailbox.Config{ID: "bench", Name: "Bench", Host: s.Host, Port: s.Port, Security: mailbox.SecurityPlainLoopback, Auth: mailbox.AuthPassword,
			Username: "bench", SecretRef: "r", RequiredConfidence: policy.Low, Outbound: policy.OnlyLinksFromChat}
		ix := mailbox.NewIndexer(mailbox.IndexerOptions{Index: x, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Secrets:   mailbox.SecretFunc(func(context.Context, string) (string, error) { return "pw", nil }),
			Embedders: func(context.Context, mailbox.Config) (mailbox.Embedder, error) { return emb, nil }})
		rep, err := ix.Sync(ctx, cfg, mailbox.SyncOptions{})
		if err != nil {
			return err
		}
		if rep.Added != mails || rep.EmbeddingError != "" {
			return fmt.Errorf("mail sync added %d of %d mails, embedding error %q", rep.Added, mails, rep.EmbeddingError)
		}
		u.bytes, u.embedded, u.chunks, u.itemsDone = mailBytes, rep.Embedded, rep.Embedded, rep.Added
		// Dovecot's imap process has ended with the logout and was
		// waited for by the master.
		time.Sleep(200 * time.Millisecond)
		u.serverCPU = groupCPU(s.Dir) - dove0
		return nil
	}
	runDocs := func(u *usage) error {
		ix, err := Open(ctx, filepath.Join(b.TempDir(), "docs.db"))
		if err != nil {
			return err
		}
		defer ix.Close()
		st, err := ix.Sync(ctx, Spec{ID: "bench", Path: docDir, Embedder: emb, MaxChunkTokens: 512, OverlapTokens: 64}, nil)
		if err != nil {
			return err
		}
		if st.Added != n || st.Embedded != st.Chunks || len(st.Skipped) != 0 || st.EmbeddingError != "" {
			return fmt.Errorf("document sync: %+v", st)
		}
		u.bytes, u.embedded, u.chunks, u.itemsDone = docBytes, st.Embedded, st.Chunks, st.Added
		return nil
	}
	// Each pipeline runs twice, in the order mail, documents, documents,
	// mail, so neither always runs on a warmer machine; the figures are
	// of the two runs together.
	b.ResetTimer()
	var mail, docs usage
	for _, step := range []struct {
		run func(*usage) error
		to  *usage
	}{{runMail, &mail}, {runDocs, &docs}, {runDocs, &docs}, {runMail, &mail}} {
		u, err := measureRun(step.run)
		if err != nil {
			b.Fatal(err)
		}
		step.to.add(u)
	}
	b.StopTimer()
	mbps := func(u usage) float64 { return float64(u.bytes) / 1e6 / u.wall.Seconds() }
	cpuPerMB := func(u usage) float64 { return u.cpu.Seconds() / (float64(u.bytes) / 1e6) }
	b.ReportMetric(mbps(mail), "mail_MB/s")
	b.ReportMetric(mbps(docs), "docs_MB/s")
	b.ReportMetric(mbps(docs)/mbps(mail), "docs/mail_per_byte")
	b.ReportMetric(cpuPerMB(mail), "mail_cpu_s/MB")
	b.ReportMetric(mail.serverCPU.Seconds()/(float64(mail.bytes)/1e6), "dovecot_cpu_s/MB")
	b.ReportMetric(cpuPerMB(docs), "docs_cpu_s/MB")
	b.ReportMetric(float64(mail.peakHeap)/1e6, "mail_peak_heap_MB")
	b.ReportMetric(float64(docs.peakHeap)/1e6, "docs_peak_heap_MB")
	if docs.peakRSS > 0 {
		b.ReportMetric(float64(mail.peakRSS)/1e6, "mail_peak_rss_MB")
		b.ReportMetric(float64(docs.peakRSS)/1e6, "docs_peak_rss_MB")
	}
	for _, x := range []struct {
		name string
		u    usage
		unit string
	}{{"mail", mail, "mails"}, {"docs", docs, "documents"}} {
		b.Logf("%s: %d %s, %.1f MB in %v (%.2f MB/s), %d chunks embedded, CPU %v (server %v), peak heap %.0f MB, peak RSS %.0f MB",
			x.name, x.u.itemsDone, x.unit, float64(x.u.bytes)/1e6, x.u.wall.Round(time.Millisecond), mbps(x.u), x.u.embedded,
			x.u.cpu.Round(time.Millisecond), x.u.serverCPU, float64(x.u.peakHeap)/1e6, float64(x.u.peakRSS)/1e6)
	}
}
