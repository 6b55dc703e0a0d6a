package mailbox

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/dovetest"
	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
)

// hashEmbedder is an in-process embedding model for benchmarks: words are
// hashed into dim buckets. It costs little, so the figures show the index.
type hashEmbedder struct{ dim int }

func (h hashEmbedder) Model() string { return "hash-" + strconv.Itoa(h.dim) }

func (h hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dim)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			f := fnv.New32a()
			_, _ = f.Write([]byte(w))
			v[f.Sum32()%uint32(h.dim)]++
		}
		out[i] = v
	}
	return out, nil
}

// benchVocabulary makes n pronounceable pseudo-words.
func benchVocabulary(r *rand.Rand, n int) []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "ba", "do", "fe", "gi", "ha", "ju", "pe", "qui", "wo", "xa", "yu"}
	words := make([]string, n)
	for i := range words {
		var b strings.Builder
		for j := 0; j < 2+r.IntN(3); j++ {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		words[i] = b.String()
	}
	return words
}

// writeMaildir generates n mails straight into a Maildir's cur directory.
func writeMaildir(b *testing.B, dir string, n int, vocab []string, r *rand.Rand) int64 {
	for _, d := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	// Zipf-like word choice, so some words are common and most are rare.
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
	for i := 0; i < n; i++ {
		date := start.Add(time.Duration(r.IntN(2*365*24)) * time.Hour)
		var body strings.Builder
		for p := 0; p < 1+r.IntN(4); p++ {
			body.WriteString(words(20 + r.IntN(60)))
			body.WriteString(".\r\n\r\n")
		}
		msg := fmt.Sprintf("From: Sender %d <sender%d@example.org>\r\nTo: me@example.org\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <bench-%d@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s",
			i%300, i%300, words(3+r.IntN(5)), date.Format(time.RFC1123Z), i, body.String())
		name := fmt.Sprintf("%d.M%dP1.bench:2,S", date.Unix(), i)
		path := filepath.Join(dir, "cur", name)
		if err := os.WriteFile(path, []byte(msg), 0o644); err != nil {
			b.Fatal(err)
		}
		_ = os.Chtimes(path, date, date)
		total += int64(len(msg))
	}
	return total
}

func chownTree(b *testing.B, root string) {
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

func percentile(ds []time.Duration, p float64) float64 {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	idx := int(math.Ceil(p*float64(len(ds)))) - 1
	return float64(ds[max(0, idx)]) / float64(time.Millisecond)
}

// BenchmarkMailboxPipeline generates STEWARD_BENCH_MAILS mails (default
// 2,000) into a Maildir served by a private Dovecot, syncs them, embeds
// them with an in-process model, and measures word and hybrid search
// latency, index size and peak heap; with notmuch installed it times
// `notmuch new` on the same Maildir. Run it with -benchtime=1x:
//
//	STEWARD_BENCH_MAILS=100000 go test -run '^$' -bench Pipeline -benchtime=1x ./mailbox/
func BenchmarkMailboxPipeline(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_MAILS")); err == nil && v > 0 {
		n = v
	}
	s := dovetest.Start(b, dovetest.User{Name: "bench", Password: "pw"})
	r := rand.New(rand.NewPCG(1, 2))
	vocab := benchVocabulary(r, 20000)
	maildir := filepath.Join(s.Dir, "mail", "bench", "Maildir")
	bytes := writeMaildir(b, maildir, n, vocab, r)
	chownTree(b, filepath.Join(s.Dir, "mail"))
	b.Logf("generated %d mails, %.1f MB", n, float64(bytes)/1e6)

	ctx := context.Background()
	dbPath := filepath.Join(b.TempDir(), "mail.db")
	x, err := mailindex.Open(ctx, dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	emb := hashEmbedder{dim: 256}
	cfg := Config{ID: "bench", Name: "Bench", Host: s.Host, Port: s.Port, Security: SecurityPlainLoopback, Auth: AuthPassword,
		Username: "bench", SecretRef: "r", RequiredConfidence: policy.Low, Outbound: policy.OnlyLinksFromChat}
	ix := NewIndexer(IndexerOptions{Index: x, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Secrets: SecretFunc(func(context.Context, string) (string, error) { return "pw", nil })})

	stopHeap := testenv.SampleHeapInUse(50 * time.Millisecond)

	b.ResetTimer()
	t0 := time.Now()
	rep, err := ix.Sync(ctx, cfg, SyncOptions{})
	syncDur := time.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	if rep.Added != n {
		b.Fatalf("synced %d of %d mails", rep.Added, n)
	}
	t0 = time.Now()
	embedded, err := ix.embedPending(ctx, cfg.ID, emb)
	embedDur := time.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	peakHeap := stopHeap()
	b.StopTimer()

	svc := NewService(ServiceOptions{Index: x, Mailboxes: func() []Config { return []Config{cfg} },
		Embedders: func(context.Context, Config) (Embedder, error) { return emb, nil }})
	words := Readable{Config: cfg, WordsOnly: true}
	hybrid := Readable{Config: cfg}
	queries := make([]string, 100)
	for i := range queries {
		var q []string
		for j := 0; j < 1+r.IntN(3); j++ {
			q = append(q, vocab[r.IntN(2000)])
		}
		queries[i] = strings.Join(q, " ")
	}
	measure := func(rd Readable) []time.Duration {
		var ds []time.Duration
		for _, q := range queries {
			t := time.Now()
			if _, err := svc.Search(ctx, rd, SearchRequest{Query: q, Page: 1, PerPage: 10}); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t))
		}
		return ds
	}
	wd := measure(words)
	hd := measure(hybrid)
	var size int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(dbPath + suffix); err == nil {
			size += fi.Size()
		}
	}
	rate := float64(n) / syncDur.Seconds()
	b.ReportMetric(rate, "mails/s")
	b.ReportMetric(float64(embedded)/embedDur.Seconds(), "chunks_embedded/s")
	b.ReportMetric(percentile(wd, 0.5), "words_p50_ms")
	b.ReportMetric(percentile(wd, 0.95), "words_p95_ms")
	b.ReportMetric(percentile(hd, 0.5), "hybrid_p50_ms")
	b.ReportMetric(percentile(hd, 0.95), "hybrid_p95_ms")
	b.ReportMetric(float64(size)/1e6, "index_MB")
	b.ReportMetric(float64(peakHeap)/1e6, "peak_heap_MB")
	b.Logf("sync %v (%.0f mails/s), embed %d chunks in %v, index %.1f MB", syncDur, rate, embedded, embedDur, float64(size)/1e6)

	if nm, err := exec.LookPath("notmuch"); err == nil {
		// notmuch indexes a copy, so its database does not land in the
		// Maildir Dovecot serves.
		root := filepath.Join(b.TempDir(), "nm")
		if out, err := exec.Command("cp", "-r", maildir, root).CombinedOutput(); err != nil {
			b.Fatalf("copy maildir: %v %s", err, out)
		}
		conf := filepath.Join(b.TempDir(), "notmuch-config")
		if err := os.WriteFile(conf, []byte("[database]\npath="+root+"\n[user]\nname=Bench\nprimary_email=me@example.org\n[new]\ntags=inbox;\n[maildir]\nsynchronize_flags=false\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(nm, "new")
		cmd.Env = append(os.Environ(), "NOTMUCH_CONFIG="+conf)
		t := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("notmuch new: %v %s", err, out)
		}
		nmDur := time.Since(t)
		b.ReportMetric(nmDur.Seconds(), "notmuch_new_s")
		b.ReportMetric(syncDur.Seconds()/nmDur.Seconds(), "steward/notmuch_time_ratio")
		b.Logf("notmuch new: %v; Steward's sync took %.2fx its time", nmDur, syncDur.Seconds()/nmDur.Seconds())
	} else {
		b.Log("notmuch is not installed; the comparison is left out")
	}
}
