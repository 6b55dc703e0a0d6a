package searchindex

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A connection that read an FTS5 table before another connection changed
// it must not make a sound index look damaged.
func TestCheckIntegrityAfterAnotherConnectionWrote(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := a.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE chunks(id INTEGER PRIMARY KEY)`)
	exec(WordsSchema)
	for i := 1; i <= 3; i++ {
		exec(`INSERT INTO chunks(id) VALUES(?)`, i)
		exec(`INSERT INTO chunks_fts(rowid, text) VALUES(?, 'The canteen opens at noon.')`, i)
	}
	var r string
	// b reads the table and caches its structure.
	if err := b.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&r); err != nil || r != "ok" {
		t.Fatalf("before: %q %v", r, err)
	}
	exec(`INSERT INTO chunks(id) VALUES(4)`)
	exec(`INSERT INTO chunks_fts(rowid, text) VALUES(4, 'Travel expenses are paid within thirty days.')`)
	exec(`DELETE FROM chunks WHERE id = 2`)
	if err := b.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&r); err != nil {
		t.Fatal(err)
	}
	// What SQLite itself says on b; the check below must not depend on it.
	t.Logf("PRAGMA integrity_check on the connection that read first: %s", r)
	stale := strings.Contains(r, "checksum mismatch")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Both connections are idle in the pool now; whichever Check takes,
	// the index is reported sound.
	for i := 0; i < 4; i++ {
		problems, err := CheckIntegrity(ctx, db, "chunks_fts")
		if err != nil || len(problems) != 0 {
			t.Fatalf("run %d: %v %v (stale pragma seen: %v)", i, problems, err, stale)
		}
	}
	// A real mismatch is still found: the stored text changes under the
	// index.
	if _, err := db.ExecContext(ctx, `UPDATE chunks_fts_content SET c0 = 'something else entirely' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	problems, err := CheckIntegrity(ctx, db, "chunks_fts")
	if err != nil || len(problems) == 0 || !strings.HasPrefix(problems[0], "chunks_fts: ") {
		t.Fatalf("damaged index: %v %v", problems, err)
	}
}
