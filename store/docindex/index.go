package docindex

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stewardhq/steward/store/searchindex"
)

// Index is an open document index. It is safe for concurrent use, also by
// several processes (SQLite's locking).
type Index struct {
	db *sql.DB
	// gen counts committed write transactions; the vector cache is
	// rebuilt when it changed.
	gen     atomic.Uint64
	vectors vectorCache
	words   *searchindex.Words
	// write serializes this process's write transactions: SQLite allows
	// one writer, and a second one waiting in its busy handler sleeps in
	// growing steps.
	write sync.Mutex
	// counts caches the chunks of each source (sourceChunks).
	counts struct {
		mu  sync.Mutex
		gen uint64
		n   map[int64]int64
	}
}

// schemaVersion is the PRAGMA user_version of the current schema.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS sources(
	num INTEGER PRIMARY KEY,
	id TEXT NOT NULL UNIQUE,
	path TEXT NOT NULL,
	is_file INTEGER NOT NULL DEFAULT 0,
	-- How the chunks were cut (tokenizer, size, overlap); a change
	-- re-indexes every document.
	chunking TEXT NOT NULL DEFAULT '',
	-- The embedding model of the last run ('' for words only).
	model TEXT NOT NULL DEFAULT '',
	run_started INTEGER NOT NULL DEFAULT 0,
	run_ended INTEGER NOT NULL DEFAULT 0,
	-- 1 when the last run went through to its end.
	run_complete INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS documents(
	id INTEGER PRIMARY KEY,
	src INTEGER NOT NULL REFERENCES sources(num) ON DELETE CASCADE,
	path TEXT NOT NULL,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	hash TEXT NOT NULL,
	kind TEXT NOT NULL DEFAULT '',
	title TEXT NOT NULL DEFAULT '',
	chunks INTEGER NOT NULL DEFAULT 0,
	UNIQUE(src, path)
);
CREATE INDEX IF NOT EXISTS documents_hash ON documents(src, hash);
CREATE TABLE IF NOT EXISTS chunks(
	id INTEGER PRIMARY KEY,
	doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	src INTEGER NOT NULL,
	seq INTEGER NOT NULL,
	page INTEGER NOT NULL DEFAULT 0,
	-- The first 8 bytes of the SHA-256 of the text, so an unchanged chunk
	-- keeps its vector.
	hash INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, seq);
CREATE INDEX IF NOT EXISTS chunks_src_hash ON chunks(src, hash);
` + searchindex.VectorSchema + searchindex.WordsSchema + `
CREATE TABLE IF NOT EXISTS failures(
	src INTEGER NOT NULL REFERENCES sources(num) ON DELETE CASCADE,
	path TEXT NOT NULL,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	reason TEXT NOT NULL,
	PRIMARY KEY(src, path)
);
`

// Open opens (creating when needed) the index at path; the options are
// searchindex.Open's (its page cache).
func Open(ctx context.Context, path string, opts ...searchindex.Option) (*Index, error) {
	db, err := searchindex.Open(path, "docindex", opts...)
	if err != nil {
		return nil, err
	}
	if err := searchindex.Migrate(ctx, db, searchindex.Schema{Name: "docindex", Version: schemaVersion, Create: schema}); err != nil {
		db.Close()
		return nil, err
	}
	return &Index{db: db, words: &searchindex.Words{DB: db, Name: "docindex"}}, nil
}

// Close closes the index.
func (x *Index) Close() error { return x.db.Close() }

func (x *Index) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	// Bumped before and after: a search that loads vectors meanwhile
	// cannot keep a set that misses this write.
	x.write.Lock()
	defer x.write.Unlock()
	x.gen.Add(1)
	defer x.gen.Add(1)
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("docindex: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("docindex: commit: %w", err)
	}
	return nil
}

// Source is what the index keeps of a data source.
type Source struct {
	ID   string
	Path string
	File bool
	// Chunking describes how the chunks were cut; Model is the embedding
	// model of the last run.
	Chunking, Model string
	// RunStarted and RunEnded bound the last run; RunComplete tells
	// whether it went through.
	RunStarted, RunEnded time.Time
	RunComplete          bool
}

// ErrNoSource is returned for a source the index does not hold.
var ErrNoSource = errors.New("docindex: the data source is not indexed")

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Source returns the stored state of a source; ok is false when the index
// does not hold it.
func (x *Index) Source(ctx context.Context, id string) (s Source, ok bool, err error) {
	var file, complete int
	var started, ended int64
	err = x.db.QueryRowContext(ctx, `SELECT id, path, is_file, chunking, model, run_started, run_ended, run_complete FROM sources WHERE id = ?`, id).
		Scan(&s.ID, &s.Path, &file, &s.Chunking, &s.Model, &started, &ended, &complete)
	if errors.Is(err, sql.ErrNoRows) {
		return Source{}, false, nil
	}
	if err != nil {
		return Source{}, false, fmt.Errorf("docindex: read source: %w", err)
	}
	s.File, s.RunComplete = file == 1, complete == 1
	s.RunStarted, s.RunEnded = fromNano(started), fromNano(ended)
	return s, true, nil
}

// BeginRun records that a run of s starts at the given time: the source
// is created when new, its path and model are updated, and it is marked
// incomplete until EndRun. When the chunking differs from the stored one,
// every document of the source is removed first (they are cut anew), and
// reset reports it.
func (x *Index) BeginRun(ctx context.Context, s Source, at time.Time) (reset bool, err error) {
	err = x.withTx(ctx, func(tx *sql.Tx) error {
		var chunking string
		err := tx.QueryRowContext(ctx, `SELECT chunking FROM sources WHERE id = ?`, s.ID).Scan(&chunking)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, `INSERT INTO sources(id, path, is_file, chunking, model, run_started) VALUES(?,?,?,?,?,?)`,
				s.ID, s.Path, b2i(s.File), s.Chunking, s.Model, unixNano(at))
			return wrap("begin run", err)
		case err != nil:
			return wrap("begin run", err)
		}
		if chunking != s.Chunking {
			reset = true
			if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE src = (SELECT num FROM sources WHERE id = ?)`, s.ID); err != nil {
				return wrap("begin run", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM failures WHERE src = (SELECT num FROM sources WHERE id = ?)`, s.ID); err != nil {
				return wrap("begin run", err)
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE sources SET path = ?, is_file = ?, chunking = ?, model = ?, run_started = ?, run_complete = 0 WHERE id = ?`,
			s.Path, b2i(s.File), s.Chunking, s.Model, unixNano(at), s.ID)
		return wrap("begin run", err)
	})
	if reset {
		x.words.Forget()
	}
	return reset, err
}

// EndRun marks the run of a source as gone through at the given time.
func (x *Index) EndRun(ctx context.Context, sourceID string, at time.Time) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sources SET run_ended = ?, run_complete = 1 WHERE id = ?`, unixNano(at), sourceID)
		return wrap("end run", err)
	})
}

// RemoveSource deletes everything the index holds of a source; removing a
// source it does not hold is no error.
func (x *Index) RemoveSource(ctx context.Context, sourceID string) error {
	err := x.withTx(ctx, func(tx *sql.Tx) error {
		// Documents first, so their chunks' texts and vectors go by the
		// cascade and its triggers.
		if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE src = (SELECT num FROM sources WHERE id = ?)`, sourceID); err != nil {
			return wrap("remove source", err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM sources WHERE id = ?`, sourceID)
		return wrap("remove source", err)
	})
	x.words.Forget()
	x.vectors.drop(sourceID)
	return err
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("docindex: %s: %w", what, err)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Document is an indexed file of a source.
type Document struct {
	ID int64
	// Path is the file's path inside the source (slash-separated), or its
	// name for a file source.
	Path string
	Size int64
	// ModTime is the file's modification time (to the nanosecond the file
	// system keeps).
	ModTime time.Time
	// Hash is the hex SHA-256 of the file's content.
	Hash  string
	Kind  string
	Title string
	// Chunks is how many chunks the document has.
	Chunks int
}

// Documents returns the documents of a source by path.
func (x *Index) Documents(ctx context.Context, sourceID string) (map[string]Document, error) {
	rows, err := x.db.QueryContext(ctx, `SELECT d.id, d.path, d.size, d.mtime, d.hash, d.kind, d.title, d.chunks
		FROM documents d JOIN sources s ON s.num = d.src WHERE s.id = ?`, sourceID)
	if err != nil {
		return nil, wrap("documents", err)
	}
	defer rows.Close()
	out := map[string]Document{}
	for rows.Next() {
		var d Document
		var mt int64
		if err := rows.Scan(&d.ID, &d.Path, &d.Size, &mt, &d.Hash, &d.Kind, &d.Title, &d.Chunks); err != nil {
			return nil, wrap("documents", err)
		}
		d.ModTime = fromNano(mt)
		out[d.Path] = d
	}
	return out, wrap("documents", rows.Err())
}

// Chunk is a piece of a document's text.
type Chunk struct {
	Text string
	// Page is the page or slide the chunk starts on, from 1; 0 for none.
	Page int
}

// NewDocument is a document to store with its chunks.
type NewDocument struct {
	Document
	Chunks []Chunk
}

// textHash is the chunk hash: the first 8 bytes of the text's SHA-256.
func textHash(text string) int64 {
	h := sha256.Sum256([]byte(text))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// PutDocuments stores documents of a source in one transaction, each
// replacing the document at its path with its chunks; a chunk whose text
// a chunk of the source already has takes over that chunk's vectors.
// Document.ID and Chunks are ignored (Chunks is the count of the chunks
// given). The source must have begun a run.
func (x *Index) PutDocuments(ctx context.Context, sourceID string, docs []NewDocument) error {
	if len(docs) == 0 {
		return nil
	}
	return x.withTx(ctx, func(sqlTx *sql.Tx) error {
		tx := searchindex.NewStmtCache(sqlTx)
		defer tx.Close()
		src, err := sourceNum(ctx, tx, sourceID)
		if err != nil {
			return err
		}
		var old []int64
		var fts searchindex.FTSBatch
		var rows [][]any
		var nextChunk int64
		for i, d := range docs {
			// The old document steps aside (its path freed) and goes at
			// the end, after its vectors were passed on.
			var oldID int64
			err := tx.QueryRowContext(ctx, `SELECT id FROM documents WHERE src = ? AND path = ?`, src, d.Path).Scan(&oldID)
			switch {
			case err == nil:
				if _, err := tx.ExecContext(ctx, `UPDATE documents SET path = char(0) || id WHERE id = ?`, oldID); err != nil {
					return wrap("put documents", err)
				}
				old = append(old, oldID)
			case !errors.Is(err, sql.ErrNoRows):
				return wrap("put documents", err)
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO documents(src, path, size, mtime, hash, kind, title, chunks) VALUES(?,?,?,?,?,?,?,?)`,
				src, d.Path, d.Size, unixNano(d.ModTime), d.Hash, d.Kind, d.Title, len(d.Chunks))
			if err != nil {
				return wrap("put documents", err)
			}
			docID, err := res.LastInsertId()
			if err != nil {
				return wrap("put documents", err)
			}
			if i == 0 {
				// The write lock is held since the first write, so no other
				// writer takes these chunk IDs.
				if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM chunks`).Scan(&nextChunk); err != nil {
					return wrap("put documents", err)
				}
			}
			for seq, c := range d.Chunks {
				id := nextChunk
				nextChunk++
				rows = append(rows, []any{id, docID, src, seq, c.Page, textHash(c.Text)})
				fts.Add("chunks_fts", id, c.Text)
			}
		}
		if len(rows) > 0 {
			list, err := searchindex.JSONList(rows)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks(id, doc_id, src, seq, page, hash)
				SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5 FROM json_each(?)`, list); err != nil {
				return wrap("put chunks", err)
			}
			first := rows[0][0].(int64)
			// Chunks whose text the source already holds take its vectors.
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO embeddings(chunk_id, model, dim, vector)
				SELECT n.id, e.model, e.dim, e.vector FROM chunks n
				JOIN chunks o ON o.src = n.src AND o.hash = n.hash AND o.id < ?
				JOIN embeddings e ON e.chunk_id = o.id
				WHERE n.id >= ? GROUP BY n.id`, first, first); err != nil {
				return wrap("reuse vectors", err)
			}
		}
		if err := fts.Flush(ctx, sqlTx); err != nil {
			return wrap("put chunk texts", err)
		}
		for _, id := range old {
			if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id = ?`, id); err != nil {
				return wrap("put documents", err)
			}
		}
		// A document stored is no longer a failure.
		for _, d := range docs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM failures WHERE src = ? AND path = ?`, src, d.Path); err != nil {
				return wrap("put documents", err)
			}
		}
		return nil
	})
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func sourceNum(ctx context.Context, tx rowQuerier, sourceID string) (int64, error) {
	var src int64
	err := tx.QueryRowContext(ctx, `SELECT num FROM sources WHERE id = ?`, sourceID).Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: %s", ErrNoSource, sourceID)
	}
	return src, wrap("read source", err)
}

// Touch records a new size and modification time for a document whose
// content did not change.
func (x *Index) Touch(ctx context.Context, sourceID, path string, size int64, mtime time.Time) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE documents SET size = ?, mtime = ? WHERE path = ? AND src = (SELECT num FROM sources WHERE id = ?)`,
			size, unixNano(mtime), path, sourceID)
		return wrap("touch document", err)
	})
}

// Rename moves a document to another path of its source, keeping its
// chunks and vectors; a document already at the new path is replaced.
func (x *Index) Rename(ctx context.Context, sourceID, from, to string, size int64, mtime time.Time) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		src, err := sourceNum(ctx, tx, sourceID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE src = ? AND path = ?`, src, to); err != nil {
			return wrap("rename document", err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE documents SET path = ?, size = ?, mtime = ? WHERE src = ? AND path = ?`, to, size, unixNano(mtime), src, from)
		if err != nil {
			return wrap("rename document", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("docindex: rename document: %s is not indexed", from)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM failures WHERE src = ? AND path IN (?, ?)`, src, from, to)
		return wrap("rename document", err)
	})
}

// Copy stores a copy of a document under another path of its source, with
// copies of its chunks and vectors; a document already at the new path is
// replaced.
func (x *Index) Copy(ctx context.Context, sourceID, from, to string, size int64, mtime time.Time) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		src, err := sourceNum(ctx, tx, sourceID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE src = ? AND path = ?`, src, to); err != nil {
			return wrap("copy document", err)
		}
		var fromID int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM documents WHERE src = ? AND path = ?`, src, from).Scan(&fromID); err != nil {
			return fmt.Errorf("docindex: copy document: %s is not indexed: %w", from, err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO documents(src, path, size, mtime, hash, kind, title, chunks)
			SELECT src, ?, ?, ?, hash, kind, title, chunks FROM documents WHERE id = ?`, to, size, unixNano(mtime), fromID)
		if err != nil {
			return wrap("copy document", err)
		}
		toID, err := res.LastInsertId()
		if err != nil {
			return wrap("copy document", err)
		}
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM chunks`).Scan(&next); err != nil {
			return wrap("copy document", err)
		}
		// New chunk next+i copies the chunk of seq i of the original.
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO chunks(id, doc_id, src, seq, page, hash) SELECT ? + seq, ?, src, seq, page, hash FROM chunks WHERE doc_id = ?`, []any{next, toID, fromID}},
			{`INSERT INTO embeddings(chunk_id, model, dim, vector) SELECT ? + c.seq, e.model, e.dim, e.vector FROM chunks c JOIN embeddings e ON e.chunk_id = c.id WHERE c.doc_id = ?`, []any{next, fromID}},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
				return wrap("copy document", err)
			}
		}
		// The texts are read first and written after: an INSERT into
		// chunks_fts that reads chunks_fts in the same statement leaves
		// FTS5 reading the table it is changing.
		rows, err := tx.QueryContext(ctx, `SELECT c.seq, t.text FROM chunks c JOIN chunks_fts t ON t.rowid = c.id WHERE c.doc_id = ? ORDER BY c.seq`, fromID)
		if err != nil {
			return wrap("copy document", err)
		}
		type text struct {
			seq  int64
			text string
		}
		var texts []text
		for rows.Next() {
			var x text
			if err := rows.Scan(&x.seq, &x.text); err != nil {
				rows.Close()
				return wrap("copy document", err)
			}
			texts = append(texts, x)
		}
		if err := rows.Close(); err != nil {
			return wrap("copy document", err)
		}
		if err := rows.Err(); err != nil {
			return wrap("copy document", err)
		}
		for _, x := range texts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(rowid, text) VALUES(?, ?)`, next+x.seq, x.text); err != nil {
				return wrap("copy document", err)
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM failures WHERE src = ? AND path = ?`, src, to)
		return wrap("copy document", err)
	})
}

// DeleteDocuments removes documents of a source by path, with their
// chunks and vectors.
func (x *Index) DeleteDocuments(ctx context.Context, sourceID string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	return x.withTx(ctx, func(tx *sql.Tx) error {
		src, err := sourceNum(ctx, tx, sourceID)
		if err != nil {
			return err
		}
		list, err := searchindex.JSONList(paths)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM documents WHERE src = ? AND path IN (SELECT value FROM json_each(?))`,
			`DELETE FROM failures WHERE src = ? AND path IN (SELECT value FROM json_each(?))`,
		} {
			if _, err := tx.ExecContext(ctx, q, src, list); err != nil {
				return wrap("delete documents", err)
			}
		}
		return nil
	})
}

// Failure is a file that could not be indexed, with the size and
// modification time it had, so it is not read again until it changes.
type Failure struct {
	Path    string
	Size    int64
	ModTime time.Time
	Reason  string
}

// SetFailure records that a file of a source could not be indexed; a
// document stored at its path is removed.
func (x *Index) SetFailure(ctx context.Context, sourceID string, f Failure) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		src, err := sourceNum(ctx, tx, sourceID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE src = ? AND path = ?`, src, f.Path); err != nil {
			return wrap("record failure", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO failures(src, path, size, mtime, reason) VALUES(?,?,?,?,?)
			ON CONFLICT(src, path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, reason = excluded.reason`,
			src, f.Path, f.Size, unixNano(f.ModTime), f.Reason)
		return wrap("record failure", err)
	})
}

// Failures returns the recorded failures of a source by path.
func (x *Index) Failures(ctx context.Context, sourceID string) (map[string]Failure, error) {
	rows, err := x.db.QueryContext(ctx, `SELECT f.path, f.size, f.mtime, f.reason FROM failures f JOIN sources s ON s.num = f.src WHERE s.id = ?`, sourceID)
	if err != nil {
		return nil, wrap("failures", err)
	}
	defer rows.Close()
	out := map[string]Failure{}
	for rows.Next() {
		var f Failure
		var mt int64
		if err := rows.Scan(&f.Path, &f.Size, &mt, &f.Reason); err != nil {
			return nil, wrap("failures", err)
		}
		f.ModTime = fromNano(mt)
		out[f.Path] = f
	}
	return out, wrap("failures", rows.Err())
}

// DeleteFailures forgets recorded failures of a source by path.
func (x *Index) DeleteFailures(ctx context.Context, sourceID string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	list, err := searchindex.JSONList(paths)
	if err != nil {
		return err
	}
	return x.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM failures WHERE src = (SELECT num FROM sources WHERE id = ?) AND path IN (SELECT value FROM json_each(?))`, sourceID, list)
		return wrap("delete failures", err)
	})
}

// ChunkText is a chunk waiting for its vector.
type ChunkText struct {
	ID   int64
	Text string
}

// PendingChunks returns up to limit chunks of a source with an ID above
// after that have no vector of model, in ID order. Pass the last ID of one
// call to the next.
func (x *Index) PendingChunks(ctx context.Context, sourceID, model string, after int64, limit int) ([]ChunkText, error) {
	src, err := sourceNum(ctx, x.db, sourceID)
	if err != nil {
		return nil, err
	}
	// The unary plus keeps the planner on the rowid range from after (an
	// index on src would read the whole source for every call), and the
	// text is read for the rows returned only.
	rows, err := x.db.QueryContext(ctx, `SELECT c.id, (SELECT t.text FROM chunks_fts t WHERE t.rowid = c.id) FROM chunks c
		WHERE c.id > ? AND +c.src = ? AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id AND e.model = ?)
		ORDER BY c.id LIMIT ?`, after, src, model, limit)
	if err != nil {
		return nil, wrap("pending chunks", err)
	}
	defer rows.Close()
	var out []ChunkText
	for rows.Next() {
		var c ChunkText
		var text sql.NullString
		if err := rows.Scan(&c.ID, &text); err != nil {
			return nil, wrap("pending chunks", err)
		}
		c.Text = text.String
		out = append(out, c)
	}
	return out, wrap("pending chunks", rows.Err())
}

// SetEmbeddings stores vectors of chunks made with model, and passes each
// on to the chunks of the same source with the same text that still lack
// one. A chunk removed meanwhile gets none.
func (x *Index) SetEmbeddings(ctx context.Context, model string, vecs map[int64][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	return x.withTx(ctx, func(tx *sql.Tx) error {
		if err := searchindex.StoreVectors(ctx, tx, model, vecs); err != nil {
			return wrap("set embeddings", err)
		}
		ids := make([]int64, 0, len(vecs))
		for id := range vecs {
			ids = append(ids, id)
		}
		list, err := searchindex.JSONList(ids)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO embeddings(chunk_id, model, dim, vector)
			SELECT n.id, e.model, e.dim, e.vector FROM json_each(?) j
			CROSS JOIN chunks o ON o.id = j.value
			CROSS JOIN chunks n ON n.src = o.src AND n.hash = o.hash AND n.id <> o.id
			CROSS JOIN embeddings e ON e.chunk_id = o.id AND e.model = ?`, list, model)
		return wrap("set embeddings", err)
	})
}

// Coverage counts a source's documents and chunks, the chunks with a
// vector of model, and the bytes of its documents.
type Coverage struct {
	Documents, Chunks, Embedded int
	Bytes                       int64
}

// Coverage tells how much of a source is indexed.
func (x *Index) Coverage(ctx context.Context, sourceID, model string) (Coverage, error) {
	var c Coverage
	src, err := sourceNum(ctx, x.db, sourceID)
	if err != nil {
		return c, err
	}
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0), COALESCE(SUM(chunks), 0) FROM documents WHERE src = ?`, src).
		Scan(&c.Documents, &c.Bytes, &c.Chunks); err != nil {
		return c, wrap("coverage", err)
	}
	if model != "" {
		if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunks c JOIN embeddings e ON e.chunk_id = c.id AND e.model = ? WHERE c.src = ?`, model, src).
			Scan(&c.Embedded); err != nil {
			return c, wrap("coverage", err)
		}
	}
	return c, nil
}

// RefreshWordStats counts the word statistics anew when the chunks grew
// by more than a tenth since they were last counted; the indexer calls it
// at the end of a run, so searches seldom have to.
func (x *Index) RefreshWordStats(ctx context.Context) error {
	_, err := x.words.Stats(ctx)
	return err
}

// Check runs SQLite's integrity check and the index's own: every chunk
// belongs to a document, every chunk has its text, every text a chunk,
// every document as many chunks as it says. It returns what it found
// wrong, nil when nothing.
func (x *Index) Check(ctx context.Context) ([]string, error) {
	problems, err := searchindex.CheckIntegrity(ctx, x.db, "chunks_fts")
	if err != nil {
		return nil, wrap("check", err)
	}
	for i, p := range problems {
		if rest, ok := strings.CutPrefix(p, "chunks_fts: "); ok {
			problems[i] = "the word index: " + rest
		}
	}
	for _, c := range []struct{ what, q string }{
		{"chunks without a document", `SELECT COUNT(*) FROM chunks c LEFT JOIN documents d ON d.id = c.doc_id WHERE d.id IS NULL`},
		{"chunks without text", `SELECT COUNT(*) FROM chunks c LEFT JOIN chunks_fts t ON t.rowid = c.id WHERE t.rowid IS NULL`},
		{"texts without a chunk", `SELECT COUNT(*) FROM chunks_fts t LEFT JOIN chunks c ON c.id = t.rowid WHERE c.id IS NULL`},
		{"vectors without a chunk", `SELECT COUNT(*) FROM embeddings e LEFT JOIN chunks c ON c.id = e.chunk_id WHERE c.id IS NULL`},
		{"documents with a wrong chunk count", `SELECT COUNT(*) FROM documents d WHERE d.chunks <> (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.id)`},
		{"documents without a source", `SELECT COUNT(*) FROM documents d LEFT JOIN sources s ON s.num = d.src WHERE s.num IS NULL`},
	} {
		var n int
		if err := x.db.QueryRowContext(ctx, c.q).Scan(&n); err != nil {
			return nil, wrap("check", err)
		}
		if n > 0 {
			problems = append(problems, fmt.Sprintf("%d %s", n, c.what))
		}
	}
	return problems, nil
}
