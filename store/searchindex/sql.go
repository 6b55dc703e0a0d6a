package searchindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ncruces/go-sqlite3/driver"
)

// DefaultCacheKiB is the page cache per connection that Open gives a
// database unless told otherwise: 16 MiB, since SQLite's default 2 MiB
// made a search in a long-running process at 100,000 chunks read most of
// its pages from the file again.
const DefaultCacheKiB = 16384

// OneShotCacheKiB is the page cache for a process that answers one query
// and exits (steward mail search): 1 MiB. Such a process never reuses what
// a large cache keeps, and each page of it is fresh memory to allocate
// and fault in; measured on 100,000 mails a one-query process was 15-30%
// faster with it than with DefaultCacheKiB.
const OneShotCacheKiB = 1024

// Option changes how Open opens a database.
type Option func(*openOptions)

type openOptions struct{ cacheKiB int }

// CacheKiB sets the page cache per connection, in KiB (at least 64).
func CacheKiB(n int) Option {
	return func(o *openOptions) { o.cacheKiB = max(n, 64) }
}

// Open opens (creating it and its directory when needed) the SQLite
// database at path in WAL mode, with foreign keys, FTS5 and the steward
// tokenizer, and a page cache of DefaultCacheKiB per connection unless an
// option says otherwise; name prefixes errors.
func Open(path, name string, opts ...Option) (*sql.DB, error) {
	o := openOptions{cacheKiB: DefaultCacheKiB}
	for _, opt := range opts {
		opt(&o)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%s: create directory: %w", name, err)
	}
	dsn := "file:" + filepath.ToSlash(path) +
		"?_pragma=journal_mode(wal)&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=synchronous(normal)" +
		fmt.Sprintf("&_pragma=cache_size(-%d)", o.cacheKiB)
	db, err := driver.Open(dsn, RegisterFTS)
	if err != nil {
		return nil, fmt.Errorf("%s: open %s: %w", name, path, err)
	}
	return db, nil
}

// Migration brings a schema from the version before Version to Version.
type Migration struct {
	Version int
	Up      func(ctx context.Context, tx *sql.Tx) error
}

// Schema describes an index's schema for Migrate.
type Schema struct {
	// Name prefixes errors, e.g. "mailindex".
	Name string
	// Version is the current PRAGMA user_version. An index already at
	// Version is opened without running Create and After, so a change to
	// either needs a new Version.
	Version int
	// Create creates the current schema's tables (IF NOT EXISTS).
	Create string
	// Migrations run, in order, those whose Version is above the
	// database's.
	Migrations []Migration
	// After runs after the migrations (statements naming columns they
	// add).
	After string
}

// Migrate creates the schema and brings an index made by an older version
// up to s.Version in one transaction; it refuses an index made by a newer
// version.
func Migrate(ctx context.Context, db *sql.DB, s Schema) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s: open schema: %w", s.Name, err)
	}
	defer conn.Close()
	var version int
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return fmt.Errorf("%s: read schema version: %w", s.Name, err)
	}
	if version > s.Version {
		return fmt.Errorf("%s: the index has schema version %d, newer than this program's %d: use a newer program", s.Name, version, s.Version)
	}
	if version == s.Version && version > 0 {
		// Made by this version: nothing to create, and no write lock to
		// take, which every process that only reads would otherwise pay.
		return nil
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: create schema: %w", s.Name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.Create); err != nil {
		return fmt.Errorf("%s: create schema: %w", s.Name, err)
	}
	for _, m := range s.Migrations {
		if version < m.Version {
			if err := m.Up(ctx, tx); err != nil {
				return fmt.Errorf("%s: migrate to schema %d: %w", s.Name, m.Version, err)
			}
		}
	}
	if s.After != "" {
		if _, err := tx.ExecContext(ctx, s.After); err != nil {
			return fmt.Errorf("%s: create schema: %w", s.Name, err)
		}
	}
	if version != s.Version {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, s.Version)); err != nil {
			return fmt.Errorf("%s: set schema version: %w", s.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: create schema: %w", s.Name, err)
	}
	return nil
}

// HasColumn tells whether table has a column named col.
func HasColumn(ctx context.Context, tx *sql.Tx, table, col string) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, table, col).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// Querier is what the readers need: *sql.DB, *sql.Tx and *sql.Conn.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// IDSet runs q, which selects one text column, and returns its values as
// a set; what prefixes an error.
func IDSet(ctx context.Context, db Querier, what, q string, args ...any) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Int64s runs q, which selects one integer column, and returns its values
// in order; what prefixes an error.
func Int64s(ctx context.Context, db Querier, what, q string, args ...any) ([]int64, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return ids, nil
}

// TextsByID runs q, which selects an ID and a text for the IDs of its one
// parameter, a JSON list (use `IN (SELECT value FROM json_each(?))`), and
// maps one to the other; what prefixes an error.
func TextsByID(ctx context.Context, db Querier, what, q string, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := jsonList(ids)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, q, list)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out[id] = v
	}
	return out, rows.Err()
}

func jsonList[T any](v []T) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// JSONList encodes a list as the JSON text a json_each(?) parameter reads.
func JSONList[T any](v []T) (string, error) { return jsonList(v) }

// StmtCache prepares each statement of a transaction once: a batch runs
// the same few statements for every item, and preparing them anew each
// time cost a quarter of the mail indexing time.
type StmtCache struct {
	Tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

// NewStmtCache returns the cache of a transaction; Close it before the
// transaction ends.
func NewStmtCache(tx *sql.Tx) *StmtCache {
	return &StmtCache{Tx: tx, stmts: map[string]*sql.Stmt{}}
}

func (c *StmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := c.Tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = st
	return st, nil
}

// ExecContext runs query as a statement prepared once per transaction.
func (c *StmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryRowContext is ExecContext for a query of one row.
func (c *StmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		// A Row carrying the error: QueryRowContext on the transaction
		// prepares again and reports the same error at Scan.
		return c.Tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// QueryContext is ExecContext for a query of rows.
func (c *StmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// Close closes the prepared statements.
func (c *StmtCache) Close() {
	for _, st := range c.stmts {
		st.Close()
	}
}

// FTSBatch collects a transaction's rows of FTS5 tables. FTS5 writes what
// it holds to disk at the start of every statement of the transaction, so
// rows inserted one statement at a time each became a segment to merge
// (half the mail indexing time); written by one statement per table at the
// end of the batch, they become one.
type FTSBatch struct {
	tables []string
	rows   map[string][][]any
	insert map[string]string
}

// Add queues a row for the FTS5 table; its values are the table's rowid
// and then its columns, in order.
func (f *FTSBatch) Add(table string, row ...any) {
	if f.rows == nil {
		f.rows = map[string][][]any{}
		f.insert = map[string]string{}
	}
	if _, ok := f.rows[table]; !ok {
		f.tables = append(f.tables, table)
	}
	f.rows[table] = append(f.rows[table], row)
}

// Columns names the columns of a table (after its rowid) for Flush; a
// table not named has one column, text.
func (f *FTSBatch) Columns(table string, cols ...string) {
	if f.insert == nil {
		f.rows = map[string][][]any{}
		f.insert = map[string]string{}
	}
	q := `INSERT INTO ` + table + `(rowid`
	sel := ` SELECT value->>0`
	for i, c := range cols {
		q += ", " + c
		sel += fmt.Sprintf(", value->>%d", i+1)
	}
	f.insert[table] = q + `)` + sel + ` FROM json_each(?)`
}

// Len is how many rows are queued.
func (f *FTSBatch) Len() int {
	n := 0
	for _, r := range f.rows {
		n += len(r)
	}
	return n
}

// Flush writes the queued rows, one statement per table, in the order the
// tables were first added to.
func (f *FTSBatch) Flush(ctx context.Context, tx *sql.Tx) error {
	for _, t := range f.tables {
		rows := f.rows[t]
		if len(rows) == 0 {
			continue
		}
		b, err := json.Marshal(rows)
		if err != nil {
			return err
		}
		q, ok := f.insert[t]
		if !ok {
			q = `INSERT INTO ` + t + `(rowid, text) SELECT value->>0, value->>1 FROM json_each(?)`
		}
		if _, err := tx.ExecContext(ctx, q, string(b)); err != nil {
			return fmt.Errorf("insert into %s: %w", t, err)
		}
		f.rows[t] = nil
	}
	return nil
}

// StoreVectors stores, in the table of VectorSchema and within tx, the
// vector of each chunk in vecs, made with model, in place of one it had. A
// chunk removed meanwhile gets none. Vectors live in their own table, so
// storing one appends a row there instead of growing (and moving) the
// chunk's row.
func StoreVectors(ctx context.Context, tx *sql.Tx, model string, vecs map[int64][]float32) error {
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO embeddings(chunk_id, model, dim, vector)
		SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for id, v := range vecs {
		if _, err := st.ExecContext(ctx, id, model, len(v), EncodeVector(v), id); err != nil {
			return err
		}
	}
	return nil
}
