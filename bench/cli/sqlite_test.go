package cli

import (
	"context"

	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// BenchmarkSQLiteStartup measures what a process pays to open a SQLite
// database and answer one FTS5 query, with Steward's driver
// (github.com/ncruces/go-sqlite3, SQLite translated from Wasm to Go) and
// with modernc.org/sqlite (SQLite translated from C to Go), one process per
// query, side by side, over the same 100,000-row FTS5 table:
//
//	cd bench && go test -run '^$' -bench SQLiteStartup -benchtime 20x ./cli/
func BenchmarkSQLiteStartup(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, "fts.db")
	conn, err := driver.Open("file:"+db+"?_pragma=journal_mode(wal)", fts5.Register)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 5))
	vocab := vocabulary(r, 20000)
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE t USING fts5(body)`); err != nil {
		b.Fatal(err)
	}
	tx, _ := conn.BeginTx(ctx, nil)
	for i := 0; i < 100_000; i++ {
		ws := make([]string, 80)
		for j := range ws {
			ws[j] = vocab[zipf.Uint64()]
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO t(body) VALUES(?)`, strings.Join(ws, " ")); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	conn.Close()
	bins := map[string]string{}
	for _, d := range []string{"ncruces", "modernc"} {
		bins[d] = filepath.Join(dir, d)
		if out, err := exec.Command("go", "build", "-o", bins[d], "./sqlitestart/"+d).CombinedOutput(); err != nil {
			b.Fatalf("building %s: %v\n%s", d, err, out)
		}
	}
	queries := []string{vocab[5000], vocab[200], vocab[2]}
	for _, d := range []string{"ncruces", "modernc"} {
		b.Run("driver="+d, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				for _, q := range queries {
					t0 := time.Now()
					if out, err := exec.Command(bins[d], db, q).CombinedOutput(); err != nil {
						b.Fatalf("%s: %v %s", d, err, out)
					}
					times = append(times, time.Since(t0))
				}
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/process")
			b.ReportMetric(0, "ns/op")
		})
	}
}
