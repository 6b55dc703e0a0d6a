package mailindex

import (
	"context"
	"github.com/stewardhq/steward/store/searchindex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3/driver"
)

// schemaV0Chunks is how version 0 declared chunks: the vector in the row.
const schemaV0Chunks = `CREATE TABLE chunks(
	id INTEGER PRIMARY KEY,
	mail_id TEXT NOT NULL REFERENCES mails(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	embedding BLOB,
	model TEXT NOT NULL DEFAULT '',
	dim INTEGER NOT NULL DEFAULT 0
);`

// writeV0 makes a version 0 index at path: two mails, the first chunk
// embedded with model "m", the second not.
func writeV0(t *testing.T, path string) {
	t.Helper()
	db, err := driver.Open("file:"+filepath.ToSlash(path), searchindex.RegisterFTS)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := strings.Index(schema, "CREATE TABLE IF NOT EXISTS chunks(")
	end := strings.Index(schema, "CREATE INDEX IF NOT EXISTS chunks_mail")
	emb := strings.Index(schema, "CREATE TABLE IF NOT EXISTS embeddings(")
	embEnd := emb + strings.Index(schema[emb:], ");") + 2
	if start < 0 || end < start || emb < end || embEnd < emb {
		t.Fatal("schema layout changed; update writeV0")
	}
	v0 := schema[:start] + schemaV0Chunks + "\n" + schema[end:emb] + schema[embEnd:]
	// Before schema 4, folders had no scope columns.
	for _, col := range []string{"scope_since", "highest_modseq", "modseq_uid_validity"} {
		line := "\t" + col + " INTEGER NOT NULL DEFAULT 0,\n"
		if !strings.Contains(v0, line) {
			t.Fatalf("schema layout changed: no %q", line)
		}
		v0 = strings.Replace(v0, line, "", 1)
	}
	// Before schema 3, chunks were tokenized by unicode61.
	v0 = strings.Replace(v0, "tokenize='"+searchindex.TokenizerName+"'", "tokenize='unicode61 remove_diacritics 2'", 1)
	ctx := context.Background()
	for _, q := range []string{
		v0,
		`INSERT INTO folders(id, mailbox_id, path) VALUES(1, 'mb', 'INBOX')`,
		`INSERT INTO mails(id, mailbox_id, content_key, received, subject, from_text) VALUES('a', 'mb', 'ka', 1, 'A', 'anna <anna@north.example>'), ('b', 'mb', 'kb', 2, 'B', 'bo <bo@south.example>')`,
		`INSERT INTO locations(folder_id, uid, mail_id) VALUES(1, 1, 'a'), (1, 2, 'b')`,
		`INSERT INTO chunks(id, mail_id, seq) VALUES(1, 'a', 0), (2, 'b', 0)`,
		`INSERT INTO chunks_fts(rowid, text) VALUES(1, 'first delivery'), (2, 'second delivery')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, `UPDATE chunks SET embedding = ?, model = 'm', dim = 2 WHERE id = 1`, EncodeVector([]float32{1, 0})); err != nil {
		t.Fatal(err)
	}
}

func TestMigrateV0MovesEmbeddings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mail.db")
	writeV0(t, path)
	ctx := context.Background()
	for round := range 2 { // the second open finds the current version and changes nothing
		x, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", round, err)
		}
		var version, oldCols int
		if err := x.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
			t.Fatal(err)
		}
		if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('chunks') WHERE name IN ('embedding','model','dim')`).Scan(&oldCols); err != nil {
			t.Fatal(err)
		}
		if version != schemaVersion || oldCols != 0 {
			t.Fatalf("open %d: version %d, %d old columns; want %d and 0", round, version, oldCols, schemaVersion)
		}
		hits, err := x.SearchVector(ctx, "mb", Filter{}, "m", []float32{2, 0}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].MailID != "a" || hits[0].ChunkID != 1 {
			t.Fatalf("open %d: vector hits %+v, want chunk 1 of mail a", round, hits)
		}
		pend, err := x.PendingChunks(ctx, "mb", "m", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(pend) != 1 || pend[0].ID != 2 || pend[0].Text != "second delivery" {
			t.Fatalf("open %d: pending %+v, want chunk 2", round, pend)
		}
		chunks, embedded, err := x.EmbeddingCoverage(ctx, "mb", "m")
		if err != nil || chunks != 2 || embedded != 1 {
			t.Fatalf("open %d: coverage %d/%d (%v), want 1/2", round, embedded, chunks, err)
		}
		words, err := x.SearchWords(ctx, "mb", Filter{}, "delivery", 5)
		if err != nil || len(words) != 2 {
			t.Fatalf("open %d: word hits %+v (%v), want 2", round, words, err)
		}
		// Schema 4 added the folders' scope state.
		scopes, err := x.FolderScopes(ctx, "mb")
		if err != nil || len(scopes) != 1 || scopes["INBOX"].HighestModSeq != 0 {
			t.Fatalf("open %d: folder scopes %+v (%v), want INBOX with no state", round, scopes, err)
		}
		// Schema 2 filled the sender index from the mails already there.
		words, err = x.SearchWords(ctx, "mb", Filter{From: "South.Ex"}, "delivery", 5)
		if err != nil || len(words) != 1 || words[0].MailID != "b" {
			t.Fatalf("open %d: word hits from south %+v (%v), want mail b", round, words, err)
		}
		x.Close()
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mail.db")
	x, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("open of a version 99 index: %v, want a refusal naming a newer version", err)
	}
}

func TestEmbeddingsFollowChunks(t *testing.T) {
	x := openTest(t)
	seed(t, x)
	ctx := context.Background()
	pend, err := x.PendingChunks(ctx, "mb", "m", 0, 100)
	if err != nil || len(pend) == 0 {
		t.Fatalf("pending %d (%v)", len(pend), err)
	}
	vecs := map[int64][]float32{}
	for _, p := range pend {
		vecs[p.ID] = []float32{1, 2}
	}
	vecs[9999] = []float32{1, 1} // no such chunk: ignored
	if err := x.SetEmbeddings(ctx, "m", vecs); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM embeddings`).Scan(&n); err != nil || n != len(pend) {
		t.Fatalf("%d embeddings (%v), want %d", n, err, len(pend))
	}
	// Re-embedding with another model replaces the vector.
	if err := x.SetEmbeddings(ctx, "m2", map[int64][]float32{pend[0].ID: {3, 4, 5}}); err != nil {
		t.Fatal(err)
	}
	var model string
	var dim int
	if err := x.db.QueryRowContext(ctx, `SELECT model, dim FROM embeddings WHERE chunk_id = ?`, pend[0].ID).Scan(&model, &dim); err != nil || model != "m2" || dim != 3 {
		t.Fatalf("after re-embedding: %q/%d (%v), want m2/3", model, dim, err)
	}
	// Removing mails removes their chunks' vectors.
	if err := x.ResetFolder(ctx, "mb", "INBOX", 2); err != nil {
		t.Fatal(err)
	}
	if err := x.ResetFolder(ctx, "mb", "Sent", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := x.RemoveOrphans(ctx, "mb"); err != nil {
		t.Fatal(err)
	}
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM embeddings e LEFT JOIN chunks c ON c.id = e.chunk_id WHERE c.id IS NULL`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d embeddings without chunk (%v), want 0", n, err)
	}
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM embeddings`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d embeddings left after removing every mailbox mail (%v), want 0", n, err)
	}
}
