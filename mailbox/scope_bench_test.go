package mailbox

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/stewardhq/steward/internal/dovetest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
)

// countingConn counts the bytes the server sent.
type countingConn struct {
	net.Conn
	rx *int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	*c.rx += int64(n)
	return n, err
}

// BenchmarkFlagResync times a sync of an indexed folder of
// STEWARD_BENCH_MAILS mails (default 10,000) in which nothing or one flag
// changed, reading changes by CONDSTORE and, with the capability hidden,
// every flag; the figures are medians of seven syncs. Run it with
// -benchtime=1x:
//
//	STEWARD_BENCH_MAILS=50000 go test -run '^$' -bench FlagResync -benchtime=1x ./mailbox/
func BenchmarkFlagResync(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_MAILS")); err == nil && v > 0 {
		n = v
	}
	s := dovetest.Start(b, dovetest.User{Name: "bench", Password: "pw"})
	r := rand.New(rand.NewPCG(3, 4))
	writeMaildir(b, filepath.Join(s.Dir, "mail", "bench", "Maildir"), n, benchVocabulary(r, 2000), r)
	chownTree(b, filepath.Join(s.Dir, "mail"))

	ctx := context.Background()
	x, err := mailindex.Open(ctx, filepath.Join(b.TempDir(), "mail.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	cfg := Config{ID: "bench", Name: "Bench", Host: s.Host, Port: s.Port, Security: SecurityPlainLoopback, Auth: AuthPassword,
		Username: "bench", SecretRef: "r", RequiredConfidence: policy.Low, Outbound: policy.OnlyLinksFromChat}
	var rx int64
	indexer := func(hide bool) *Indexer {
		return NewIndexer(IndexerOptions{Index: x, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Secrets: SecretFunc(func(context.Context, string) (string, error) { return "pw", nil }),
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				var conn net.Conn = countingConn{Conn: c, rx: &rx}
				if hide {
					conn = &hidingConn{Conn: conn}
				}
				return conn, nil
			}})
	}
	admin, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	if err := admin.Login("bench", "pw").Wait(); err != nil {
		b.Fatal(err)
	}
	if _, err := admin.Select("INBOX", nil).Wait(); err != nil {
		b.Fatal(err)
	}
	changed := map[imap.UID]bool{}
	changeOne := func() {
		uid := imap.UID(1 + r.IntN(n))
		op := imap.StoreFlagsAdd
		if changed[uid] {
			op = imap.StoreFlagsDel
		}
		changed[uid] = !changed[uid]
		if err := admin.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: op, Silent: true, Flags: []imap.Flag{imap.FlagFlagged}}, nil).Close(); err != nil {
			b.Fatal(err)
		}
		if err := admin.Noop().Wait(); err != nil {
			b.Fatal(err)
		}
	}
	sync := func(ix *Indexer, wantFlagged int) (time.Duration, int64) {
		rx = 0
		t0 := time.Now()
		rep, err := ix.Sync(ctx, cfg, SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Folders[0].Flagged != wantFlagged {
			b.Fatalf("%d flag changes, want %d", rep.Folders[0].Flagged, wantFlagged)
		}
		return time.Since(t0), rx
	}
	cond, full := indexer(false), indexer(true)
	if _, err := cond.Sync(ctx, cfg, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	// Each case runs reps times; the median counts.
	const reps = 7
	median := func(ix *Indexer, change bool) (time.Duration, int64) {
		var ds []time.Duration
		var bytes int64
		for range reps {
			want := 0
			if change {
				changeOne()
				want = 1
			}
			d, n := sync(ix, want)
			ds = append(ds, d)
			bytes = n
		}
		slices.Sort(ds)
		return ds[reps/2], bytes
	}
	b.ResetTimer()
	_, _ = sync(full, 0) // forgets the mod-sequence
	fullSame, fullSameRx := median(full, false)
	fullOne, fullOneRx := median(full, true)
	_, _ = sync(cond, 0) // keeps a mod-sequence again
	condSame, condSameRx := median(cond, false)
	condOne, condOneRx := median(cond, true)
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(condSame), "condstore_unchanged_ms")
	b.ReportMetric(ms(condOne), "condstore_one_flag_ms")
	b.ReportMetric(ms(fullSame), "full_unchanged_ms")
	b.ReportMetric(ms(fullOne), "full_one_flag_ms")
	b.ReportMetric(float64(condOneRx)/1e3, "condstore_one_flag_rx_kB")
	b.ReportMetric(float64(fullOneRx)/1e3, "full_one_flag_rx_kB")
	b.Logf("%d mails: unchanged %v (%d B) with CONDSTORE, %v (%d B) reading every flag; one flag changed %v (%d B) vs %v (%d B)",
		n, condSame, condSameRx, fullSame, fullSameRx, condOne, condOneRx, fullOne, fullOneRx)
}
