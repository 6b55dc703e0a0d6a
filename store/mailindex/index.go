package mailindex

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stewardhq/steward/store/searchindex"
)

// ErrNotFound is returned when a mail is not in the index.
var ErrNotFound = errors.New("mailindex: not found")

// Index is an open mail index. It is safe for concurrent use.
type Index struct {
	db *sql.DB
	// gen counts committed write transactions; the vector cache is
	// rebuilt when it changed.
	gen     atomic.Uint64
	vectors vectorCache
	// fewChunks is how many chunks a filter may leave for a word search
	// to rank them one by one (tests lower it to force the other path).
	fewChunks int
	// commonDocs is how many chunks must hold the words of a filtered
	// word search before it considers ranking the filtered chunks alone.
	commonDocs int
	// fewMatches is how many matches of a filtered word search are ranked
	// at once (tests lower it to force the other paths).
	fewMatches int
	// maxVectorChecks: see the constant (tests lower it).
	maxVectorChecks int
	// words keeps the word statistics (tests lower its CommonMin).
	words *searchindex.Words
}

const schema = `
CREATE TABLE IF NOT EXISTS folders(
	id INTEGER PRIMARY KEY,
	mailbox_id TEXT NOT NULL,
	path TEXT NOT NULL,
	special_use TEXT NOT NULL DEFAULT '',
	uid_validity INTEGER NOT NULL DEFAULT 0,
	uid_next INTEGER NOT NULL DEFAULT 0,
	server_messages INTEGER NOT NULL DEFAULT -1,
	server_unseen INTEGER NOT NULL DEFAULT -1,
	last_complete_sync INTEGER NOT NULL DEFAULT 0,
	-- Scope and flag-change state (schema 4; see scope.go).
	scope_since INTEGER NOT NULL DEFAULT 0,
	highest_modseq INTEGER NOT NULL DEFAULT 0,
	modseq_uid_validity INTEGER NOT NULL DEFAULT 0,
	UNIQUE(mailbox_id, path)
);
CREATE TABLE IF NOT EXISTS mails(
	id TEXT PRIMARY KEY,
	mailbox_id TEXT NOT NULL,
	content_key TEXT NOT NULL,
	message_id TEXT NOT NULL DEFAULT '',
	in_reply_to TEXT NOT NULL DEFAULT '',
	refs TEXT NOT NULL DEFAULT '',
	sent INTEGER NOT NULL DEFAULT 0,
	received INTEGER NOT NULL,
	from_addr TEXT NOT NULL DEFAULT '',
	from_text TEXT NOT NULL DEFAULT '',
	to_text TEXT NOT NULL DEFAULT '',
	addresses TEXT NOT NULL DEFAULT '{}',
	subject TEXT NOT NULL DEFAULT '',
	importance TEXT NOT NULL DEFAULT 'normal',
	encryption TEXT NOT NULL DEFAULT '',
	has_attachments INTEGER NOT NULL DEFAULT 0,
	size INTEGER NOT NULL DEFAULT 0,
	-- Kept by the location triggers, so filters need no subquery.
	loc_count INTEGER NOT NULL DEFAULT 0,
	any_seen INTEGER NOT NULL DEFAULT 0,
	any_flagged INTEGER NOT NULL DEFAULT 0,
	-- The mail's row in mails_people (schema 2).
	people_row INTEGER NOT NULL DEFAULT 0,
	UNIQUE(mailbox_id, content_key)
);
CREATE INDEX IF NOT EXISTS mails_received ON mails(mailbox_id, received DESC);
CREATE INDEX IF NOT EXISTS mails_message_id ON mails(mailbox_id, message_id);
CREATE TABLE IF NOT EXISTS locations(
	folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
	uid INTEGER NOT NULL,
	mail_id TEXT NOT NULL REFERENCES mails(id) ON DELETE CASCADE,
	seen INTEGER NOT NULL DEFAULT 0,
	flagged INTEGER NOT NULL DEFAULT 0,
	answered INTEGER NOT NULL DEFAULT 0,
	draft INTEGER NOT NULL DEFAULT 0,
	deleted INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY(folder_id, uid)
);
-- Covers the folder test of a search filter (schema 2; 1 had locations_mail).
DROP INDEX IF EXISTS locations_mail;
CREATE INDEX IF NOT EXISTS locations_mail_folder ON locations(mail_id, folder_id);
CREATE TRIGGER IF NOT EXISTS locations_insert AFTER INSERT ON locations BEGIN
	UPDATE mails SET loc_count = (SELECT COUNT(*) FROM locations WHERE mail_id = NEW.mail_id),
		any_seen = EXISTS(SELECT 1 FROM locations WHERE mail_id = NEW.mail_id AND seen = 1),
		any_flagged = EXISTS(SELECT 1 FROM locations WHERE mail_id = NEW.mail_id AND flagged = 1)
	WHERE id = NEW.mail_id;
END;
CREATE TRIGGER IF NOT EXISTS locations_update AFTER UPDATE ON locations BEGIN
	UPDATE mails SET loc_count = (SELECT COUNT(*) FROM locations WHERE mail_id = mails.id),
		any_seen = EXISTS(SELECT 1 FROM locations WHERE mail_id = mails.id AND seen = 1),
		any_flagged = EXISTS(SELECT 1 FROM locations WHERE mail_id = mails.id AND flagged = 1)
	WHERE id IN (NEW.mail_id, OLD.mail_id);
END;
CREATE TRIGGER IF NOT EXISTS locations_delete AFTER DELETE ON locations BEGIN
	UPDATE mails SET loc_count = (SELECT COUNT(*) FROM locations WHERE mail_id = OLD.mail_id),
		any_seen = EXISTS(SELECT 1 FROM locations WHERE mail_id = OLD.mail_id AND seen = 1),
		any_flagged = EXISTS(SELECT 1 FROM locations WHERE mail_id = OLD.mail_id AND flagged = 1)
	WHERE id = OLD.mail_id;
END;
CREATE TABLE IF NOT EXISTS parts(
	mail_id TEXT NOT NULL REFERENCES mails(id) ON DELETE CASCADE,
	kind TEXT NOT NULL,
	number INTEGER NOT NULL,
	name TEXT NOT NULL DEFAULT '',
	type TEXT NOT NULL DEFAULT '',
	size INTEGER NOT NULL DEFAULT 0,
	state TEXT NOT NULL DEFAULT '',
	text TEXT NOT NULL DEFAULT '',
	PRIMARY KEY(mail_id, kind, number)
);
CREATE TABLE IF NOT EXISTS chunks(
	id INTEGER PRIMARY KEY,
	mail_id TEXT NOT NULL REFERENCES mails(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_mail ON chunks(mail_id);
` + searchindex.VectorSchema + searchindex.WordsSchema + `
-- Sender and recipient texts by trigrams, so a sender or recipient
-- filter of three or more characters is a lookup, not a scan (schema 2).
CREATE VIRTUAL TABLE IF NOT EXISTS mails_people USING fts5(from_text, to_text, tokenize='trigram');
CREATE TABLE IF NOT EXISTS orphan_watch(
	mailbox_id TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS signin(
	mailbox_id TEXT PRIMARY KEY,
	refused_at INTEGER NOT NULL,
	reason TEXT NOT NULL DEFAULT ''
);
`

// Open opens (creating when needed) the index at path; the options are
// searchindex.Open's (its page cache).
func Open(ctx context.Context, path string, opts ...searchindex.Option) (*Index, error) {
	db, err := searchindex.Open(path, "mailindex", opts...)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return &Index{db: db, fewChunks: fewChunks, commonDocs: commonDocs, fewMatches: fewMatches, maxVectorChecks: maxVectorChecks,
		words: &searchindex.Words{DB: db, Name: "mailindex"}}, nil
}

// schemaVersion is the PRAGMA user_version of the current schema:
// 0 kept each chunk's vector in the chunk's row, 1 keeps vectors in the
// embeddings table, 2 adds the trigram table of senders and recipients,
// 3 indexes chunks with the steward tokenizer (CJK in pairs) instead of
// unicode61, 4 keeps each folder's max-age window and HIGHESTMODSEQ.
const schemaVersion = 4

// schemaAfter is run after the migrations, since it names columns they
// add.
const schemaAfter = `
CREATE INDEX IF NOT EXISTS mails_people_row ON mails(people_row);
CREATE TRIGGER IF NOT EXISTS mails_people_delete AFTER DELETE ON mails BEGIN
	DELETE FROM mails_people WHERE rowid = OLD.people_row;
END;
`

// retokenize rebuilds a chunks_fts made with unicode61 with the steward
// tokenizer: every chunk is indexed anew (about a minute at 100,000
// chunks), and the word counts are counted anew at the next search.
func retokenize(ctx context.Context, tx *sql.Tx) error {
	var def string
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'`).Scan(&def); err != nil {
		return err
	}
	if !strings.Contains(def, "unicode61") {
		return nil // created by this version
	}
	for _, q := range []string{
		`DROP TABLE IF EXISTS chunks_fts_new`,
		`CREATE VIRTUAL TABLE chunks_fts_new USING fts5(text, tokenize='` + searchindex.TokenizerName + `')`,
		`INSERT INTO chunks_fts_new(rowid, text) SELECT rowid, text FROM chunks_fts`,
		`DROP TABLE chunks_vocab`,
		`DROP TRIGGER chunks_fts_delete`,
		`DROP TABLE chunks_fts`,
		`ALTER TABLE chunks_fts_new RENAME TO chunks_fts`,
		`CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, row)`,
		`CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN DELETE FROM chunks_fts WHERE rowid = old.id; END`,
		`DELETE FROM term_stats`,
		`DELETE FROM term_stats_meta`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// addScopeColumns adds the folder columns of schema 4 to an older index.
func addScopeColumns(ctx context.Context, tx *sql.Tx) error {
	for _, col := range []string{"scope_since", "highest_modseq", "modseq_uid_validity"} {
		has, err := searchindex.HasColumn(ctx, tx, "folders", col)
		if err != nil {
			return err
		}
		if !has {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE folders ADD COLUMN `+col+` INTEGER NOT NULL DEFAULT 0`); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillPeople adds the people_row column to an index of schema 1 or older
// and fills mails_people from its mails.
func fillPeople(ctx context.Context, tx *sql.Tx) error {
	has, err := searchindex.HasColumn(ctx, tx, "mails", "people_row")
	if err != nil {
		return err
	}
	if !has {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE mails ADD COLUMN people_row INTEGER NOT NULL DEFAULT 0`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mails_people(rowid, from_text, to_text)
		SELECT rowid, from_text, to_text FROM mails WHERE people_row = 0`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE mails SET people_row = rowid WHERE people_row = 0`)
	return err
}

// migrate creates the schema and brings an index made by an older version
// up to schemaVersion in one transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	return searchindex.Migrate(ctx, db, searchindex.Schema{
		Name: "mailindex", Version: schemaVersion, Create: schema, After: schemaAfter,
		Migrations: []searchindex.Migration{
			{Version: 1, Up: moveEmbeddings}, {Version: 2, Up: fillPeople}, {Version: 3, Up: retokenize}, {Version: 4, Up: addScopeColumns},
		},
	})
}

// moveEmbeddings moves vectors of a version 0 index from the chunks'
// rows into the embeddings table and drops the old columns.
func moveEmbeddings(ctx context.Context, tx *sql.Tx) error {
	old, err := searchindex.HasColumn(ctx, tx, "chunks", "embedding")
	if err != nil {
		return err
	}
	if !old {
		return nil // created by this version
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO embeddings(chunk_id, model, dim, vector)
		SELECT id, model, dim, embedding FROM chunks WHERE embedding IS NOT NULL`); err != nil {
		return err
	}
	for _, col := range []string{"embedding", "model", "dim"} {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE chunks DROP COLUMN `+col); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the index.
func (x *Index) Close() error { return x.db.Close() }

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func fromUnix(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (x *Index) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	// Bumped before and after: a search that loads vectors meanwhile
	// cannot keep a set that misses this write.
	x.gen.Add(1)
	defer x.gen.Add(1)
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("mailindex: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("mailindex: commit: %w", err)
	}
	return nil
}

// Folders returns the folders of a mailbox with their sync state and how
// many locations each holds, ordered by path.
func (x *Index) Folders(ctx context.Context, mailboxID string) ([]Folder, error) {
	return x.folders(ctx, mailboxID, true)
}

// FolderStates returns the folders of a mailbox with their sync state but
// without counting their locations (Indexed is -1); cheap enough for every
// search.
func (x *Index) FolderStates(ctx context.Context, mailboxID string) ([]Folder, error) {
	return x.folders(ctx, mailboxID, false)
}

func (x *Index) folders(ctx context.Context, mailboxID string, count bool) ([]Folder, error) {
	indexed := "-1"
	if count {
		indexed = "(SELECT COUNT(*) FROM locations l WHERE l.folder_id = f.id)"
	}
	rows, err := x.db.QueryContext(ctx, `
		SELECT f.path, f.special_use, f.uid_validity, f.uid_next, f.server_messages, f.server_unseen,
		       f.last_complete_sync, `+indexed+`
		FROM folders f WHERE f.mailbox_id = ? ORDER BY f.path`, mailboxID)
	if err != nil {
		return nil, fmt.Errorf("mailindex: folders: %w", err)
	}
	defer rows.Close()
	var out []Folder
	for rows.Next() {
		f := Folder{MailboxID: mailboxID}
		var last int64
		if err := rows.Scan(&f.Path, &f.SpecialUse, &f.UIDValidity, &f.UIDNext, &f.ServerMessages, &f.ServerUnseen, &last, &f.Indexed); err != nil {
			return nil, fmt.Errorf("mailindex: folders: %w", err)
		}
		f.LastCompleteSync = fromUnix(last)
		out = append(out, f)
	}
	return out, rows.Err()
}

// Folder returns one folder's state; ok is false when the index does not
// know it.
func (x *Index) Folder(ctx context.Context, mailboxID, path string) (Folder, bool, error) {
	fs, err := x.FolderStates(ctx, mailboxID)
	if err != nil {
		return Folder{}, false, err
	}
	for _, f := range fs {
		if f.Path == path {
			return f, true, nil
		}
	}
	return Folder{}, false, nil
}

// SaveFolder creates or updates a folder's state. Indexed is ignored.
func (x *Index) SaveFolder(ctx context.Context, f Folder) error {
	_, err := x.db.ExecContext(ctx, `
		INSERT INTO folders(mailbox_id, path, special_use, uid_validity, uid_next, server_messages, server_unseen, last_complete_sync)
		VALUES(?,?,?,?,?,?,?,?)
		ON CONFLICT(mailbox_id, path) DO UPDATE SET special_use=excluded.special_use, uid_validity=excluded.uid_validity,
			uid_next=excluded.uid_next, server_messages=excluded.server_messages, server_unseen=excluded.server_unseen,
			last_complete_sync=excluded.last_complete_sync`,
		f.MailboxID, f.Path, f.SpecialUse, f.UIDValidity, f.UIDNext, f.ServerMessages, f.ServerUnseen, unix(f.LastCompleteSync))
	if err != nil {
		return fmt.Errorf("mailindex: save folder: %w", err)
	}
	return nil
}

// ResetFolder forgets every location of a folder and records its new
// UIDVALIDITY. The mails stay until RemoveOrphans, so a mail found again
// by its content key is relinked rather than indexed anew.
func (x *Index) ResetFolder(ctx context.Context, mailboxID, path string, uidValidity uint32) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM locations WHERE folder_id = (SELECT id FROM folders WHERE mailbox_id=? AND path=?)`, mailboxID, path); err != nil {
			return fmt.Errorf("mailindex: reset folder: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE folders SET uid_validity=?, uid_next=0, last_complete_sync=0 WHERE mailbox_id=? AND path=?`, uidValidity, mailboxID, path); err != nil {
			return fmt.Errorf("mailindex: reset folder: %w", err)
		}
		return watchOrphans(ctx, tx, mailboxID)
	})
}

// DeleteFolder removes a folder and its locations (not its mails; see
// RemoveOrphans).
func (x *Index) DeleteFolder(ctx context.Context, mailboxID, path string) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM folders WHERE mailbox_id=? AND path=?`, mailboxID, path); err != nil {
			return fmt.Errorf("mailindex: delete folder: %w", err)
		}
		return watchOrphans(ctx, tx, mailboxID)
	})
}

// watchOrphans notes that mails of the mailbox may have lost their last
// location, so PendingRemovals has to count.
func watchOrphans(ctx context.Context, tx *sql.Tx, mailboxID string) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO orphan_watch(mailbox_id) VALUES(?)`, mailboxID); err != nil {
		return fmt.Errorf("mailindex: note possible orphans: %w", err)
	}
	return nil
}

// UIDs returns the indexed UIDs of a folder with their flags.
func (x *Index) UIDs(ctx context.Context, mailboxID, path string) (map[uint32]Flags, error) {
	rows, err := x.db.QueryContext(ctx, `
		SELECT l.uid, l.seen, l.flagged, l.answered, l.draft, l.deleted FROM locations l
		JOIN folders f ON f.id = l.folder_id WHERE f.mailbox_id=? AND f.path=?`, mailboxID, path)
	if err != nil {
		return nil, fmt.Errorf("mailindex: uids: %w", err)
	}
	defer rows.Close()
	out := map[uint32]Flags{}
	for rows.Next() {
		var uid uint32
		var fl Flags
		if err := rows.Scan(&uid, &fl.Seen, &fl.Flagged, &fl.Answered, &fl.Draft, &fl.Deleted); err != nil {
			return nil, fmt.Errorf("mailindex: uids: %w", err)
		}
		out[uid] = fl
	}
	return out, rows.Err()
}

// UpdateFlags sets the flags of indexed locations of a folder.
func (x *Index) UpdateFlags(ctx context.Context, mailboxID, path string, flags map[uint32]Flags) error {
	if len(flags) == 0 {
		return nil
	}
	return x.withTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `UPDATE locations SET seen=?, flagged=?, answered=?, draft=?, deleted=?
			WHERE uid=? AND folder_id=(SELECT id FROM folders WHERE mailbox_id=? AND path=?)`)
		if err != nil {
			return fmt.Errorf("mailindex: update flags: %w", err)
		}
		defer st.Close()
		for uid, f := range flags {
			if _, err := st.ExecContext(ctx, b2i(f.Seen), b2i(f.Flagged), b2i(f.Answered), b2i(f.Draft), b2i(f.Deleted), uid, mailboxID, path); err != nil {
				return fmt.Errorf("mailindex: update flags: %w", err)
			}
		}
		return nil
	})
}

// RemoveUIDs removes locations of a folder, e.g. mails deleted on the
// server. Mails left without a location go with RemoveOrphans.
func (x *Index) RemoveUIDs(ctx context.Context, mailboxID, path string, uids []uint32) error {
	if len(uids) == 0 {
		return nil
	}
	return x.withTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `DELETE FROM locations WHERE uid=? AND folder_id=(SELECT id FROM folders WHERE mailbox_id=? AND path=?)`)
		if err != nil {
			return fmt.Errorf("mailindex: remove uids: %w", err)
		}
		defer st.Close()
		for _, u := range uids {
			if _, err := st.ExecContext(ctx, u, mailboxID, path); err != nil {
				return fmt.Errorf("mailindex: remove uids: %w", err)
			}
		}
		return watchOrphans(ctx, tx, mailboxID)
	})
}

// RemoveOrphans deletes the mails of a mailbox which no longer lie in any
// folder, with their parts and chunks, and returns how many went.
func (x *Index) RemoveOrphans(ctx context.Context, mailboxID string) (int64, error) {
	var n int64
	err := x.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM mails WHERE mailbox_id=? AND loc_count = 0`, mailboxID)
		if err != nil {
			return fmt.Errorf("mailindex: remove orphans: %w", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM orphan_watch WHERE mailbox_id=?`, mailboxID); err != nil {
			return fmt.Errorf("mailindex: remove orphans: %w", err)
		}
		return nil
	})
	return n, err
}

// PendingRemovals counts mails of a mailbox without any location. It only
// counts when a removal since the last RemoveOrphans may have left some.
func (x *Index) PendingRemovals(ctx context.Context, mailboxID string) (int64, error) {
	var watched int
	err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM orphan_watch WHERE mailbox_id=?`, mailboxID).Scan(&watched)
	if err != nil || watched == 0 {
		return 0, err
	}
	var n int64
	err = x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM mails WHERE mailbox_id=? AND loc_count = 0`, mailboxID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("mailindex: pending removals: %w", err)
	}
	return n, nil
}

// KnownContentKeys returns which of keys the mailbox already holds.
func (x *Index) KnownContentKeys(ctx context.Context, mailboxID string, keys []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	b, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := x.db.QueryContext(ctx, `SELECT content_key FROM mails WHERE mailbox_id=? AND content_key IN (SELECT value FROM json_each(?))`, mailboxID, string(b))
	if err != nil {
		return nil, fmt.Errorf("mailindex: content keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("mailindex: content keys: %w", err)
		}
		out[k] = true
	}
	return out, rows.Err()
}

// AddBatch records fetched messages of one folder in one transaction: a
// message whose content key is known gains a location (or has its flags
// updated), a new one is stored with its parts and chunks. Repeating a
// batch changes nothing, so a killed sync can simply fetch again.
func (x *Index) AddBatch(ctx context.Context, mailboxID, path string, items []Incoming) error {
	return x.withTx(ctx, func(sqlTx *sql.Tx) error {
		tx := newStmtCache(sqlTx)
		defer tx.close()
		var folderID int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM folders WHERE mailbox_id=? AND path=?`, mailboxID, path).Scan(&folderID); err != nil {
			return fmt.Errorf("mailindex: add batch: folder not saved: %w", err)
		}
		for _, it := range items {
			if it.Mail.ContentKey == "" {
				return fmt.Errorf("mailindex: add batch: UID %d has no content key", it.UID)
			}
			var mailID string
			err := tx.QueryRowContext(ctx, `SELECT id FROM mails WHERE mailbox_id=? AND content_key=?`, mailboxID, it.Mail.ContentKey).Scan(&mailID)
			if errors.Is(err, sql.ErrNoRows) {
				mailID, err = insertMail(ctx, tx, mailboxID, it)
			}
			if err != nil {
				return fmt.Errorf("mailindex: add batch: %w", err)
			}
			f := it.Flags
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO locations(folder_id, uid, mail_id, seen, flagged, answered, draft, deleted) VALUES(?,?,?,?,?,?,?,?)
				ON CONFLICT(folder_id, uid) DO UPDATE SET mail_id=excluded.mail_id, seen=excluded.seen, flagged=excluded.flagged,
					answered=excluded.answered, draft=excluded.draft, deleted=excluded.deleted`,
				folderID, it.UID, mailID, b2i(f.Seen), b2i(f.Flagged), b2i(f.Answered), b2i(f.Draft), b2i(f.Deleted)); err != nil {
				return fmt.Errorf("mailindex: add location: %w", err)
			}
		}
		if err := tx.fts.flush(ctx, sqlTx); err != nil {
			return fmt.Errorf("mailindex: add batch: %w", err)
		}
		return nil
	})
}

// stmtCache is a batch's transaction: its statements prepared once and
// its rows of the FTS5 tables written at the end (see searchindex).
type stmtCache struct {
	*searchindex.StmtCache
	tx  *sql.Tx
	fts ftsRows
}

// ftsRows collects a batch's rows of the FTS5 tables (chunks_fts and
// mails_people), written by one statement per table at the end.
type ftsRows struct {
	searchindex.FTSBatch
	nextPerson int64
}

func (f *ftsRows) chunk(id int64, text string) { f.Add("chunks_fts", id, text) }

// person reserves the mails_people row of a new mail.
func (f *ftsRows) person(ctx context.Context, tx *stmtCache, from, to string) (int64, error) {
	if f.nextPerson == 0 {
		if err := tx.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(rowid), 0) + 1 FROM mails_people`).Scan(&f.nextPerson); err != nil {
			return 0, err
		}
		f.Columns("mails_people", "from_text", "to_text")
	}
	row := f.nextPerson
	f.nextPerson++
	f.Add("mails_people", row, from, to)
	return row, nil
}

// flush writes the collected rows.
func (f *ftsRows) flush(ctx context.Context, tx *sql.Tx) error {
	if err := f.Flush(ctx, tx); err != nil {
		return fmt.Errorf("insert chunk text: %w", err)
	}
	return nil
}

func newStmtCache(tx *sql.Tx) *stmtCache {
	return &stmtCache{StmtCache: searchindex.NewStmtCache(tx), tx: tx}
}

func (c *stmtCache) close() { c.StmtCache.Close() }

func insertMail(ctx context.Context, tx *stmtCache, mailboxID string, it Incoming) (string, error) {
	m := it.Mail
	id := newID()
	addrs, err := json.Marshal(m.Addresses)
	if err != nil {
		return "", err
	}
	var fromAddr string
	if len(m.Addresses.From) > 0 {
		fromAddr = strings.ToLower(m.Addresses.From[0].Addr)
	}
	imp := m.Importance
	if imp == "" {
		imp = ImportanceNormal
	}
	received := m.Received
	if received.IsZero() {
		received = time.Now()
	}
	fromText := searchText(m.Addresses.From, m.Addresses.Sender)
	toText := searchText(m.Addresses.To, m.Addresses.Cc, m.Addresses.Bcc)
	peopleRow, err := tx.fts.person(ctx, tx, fromText, toText)
	if err != nil {
		return "", fmt.Errorf("insert mail: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO mails(id, mailbox_id, content_key, message_id, in_reply_to, refs, sent, received, from_addr, from_text, to_text,
			addresses, subject, importance, encryption, has_attachments, size, people_row)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		id, mailboxID, m.ContentKey, m.MessageID, m.InReplyTo, strings.Join(m.References, " "), unix(m.Sent), received.Unix(),
		fromAddr, fromText, toText,
		string(addrs), m.Subject, imp, m.Encryption, b2i(m.HasAttachments || len(m.Attachments) > 0), m.Size, peopleRow); err != nil {
		return "", fmt.Errorf("insert mail: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO parts(mail_id, kind, number, type, text) VALUES(?, 'HEADERS', 0, 'text/rfc822-headers', ?)`, id, m.Headers); err != nil {
		return "", fmt.Errorf("insert headers: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO parts(mail_id, kind, number, type, text) VALUES(?, 'BODY', 0, 'text/plain', ?)`, id, m.Body); err != nil {
		return "", fmt.Errorf("insert body: %w", err)
	}
	for _, a := range m.Attachments {
		if _, err := tx.ExecContext(ctx, `INSERT INTO parts(mail_id, kind, number, name, type, size, state, text) VALUES(?, 'ATTACHMENT', ?, ?, ?, ?, ?, ?)`,
			id, a.Number, a.Name, a.Type, a.Size, a.State, a.Text); err != nil {
			return "", fmt.Errorf("insert attachment: %w", err)
		}
	}
	for i, c := range it.Chunks {
		res, err := tx.ExecContext(ctx, `INSERT INTO chunks(mail_id, seq) VALUES(?, ?)`, id, i)
		if err != nil {
			return "", fmt.Errorf("insert chunk: %w", err)
		}
		cid, err := res.LastInsertId()
		if err != nil {
			return "", fmt.Errorf("insert chunk: %w", err)
		}
		tx.fts.chunk(cid, c)
	}
	return id, nil
}

// searchText is the lower-cased names and addresses a substring filter
// looks through, one per line so a match cannot span two addresses.
func searchText(lists ...[]Address) string {
	var b strings.Builder
	for _, l := range lists {
		for _, a := range l {
			b.WriteString(strings.ToLower(a.Name))
			b.WriteString(" <")
			b.WriteString(strings.ToLower(a.Addr))
			b.WriteString(">\n")
		}
	}
	return b.String()
}

// RecordSignInRefused remembers that the server refused the sign-in, so no
// further attempt is made until ClearSignInRefusal.
func (x *Index) RecordSignInRefused(ctx context.Context, mailboxID string, at time.Time, reason string) error {
	_, err := x.db.ExecContext(ctx, `INSERT INTO signin(mailbox_id, refused_at, reason) VALUES(?,?,?)
		ON CONFLICT(mailbox_id) DO UPDATE SET refused_at=excluded.refused_at, reason=excluded.reason`, mailboxID, at.Unix(), reason)
	if err != nil {
		return fmt.Errorf("mailindex: record sign-in refusal: %w", err)
	}
	return nil
}

// SignInRefused returns when the server last refused the sign-in; ok is
// false when no refusal is recorded.
func (x *Index) SignInRefused(ctx context.Context, mailboxID string) (at time.Time, reason string, ok bool, err error) {
	var s int64
	err = x.db.QueryRowContext(ctx, `SELECT refused_at, reason FROM signin WHERE mailbox_id=?`, mailboxID).Scan(&s, &reason)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, "", false, nil
	}
	if err != nil {
		return time.Time{}, "", false, fmt.Errorf("mailindex: sign-in state: %w", err)
	}
	return fromUnix(s), reason, true, nil
}

// ClearSignInRefusal allows sign-in again (the user saved a new secret or
// retries by hand).
func (x *Index) ClearSignInRefusal(ctx context.Context, mailboxID string) error {
	if _, err := x.db.ExecContext(ctx, `DELETE FROM signin WHERE mailbox_id=?`, mailboxID); err != nil {
		return fmt.Errorf("mailindex: clear sign-in refusal: %w", err)
	}
	return nil
}

// DeleteMailbox removes everything the index holds for a mailbox.
func (x *Index) DeleteMailbox(ctx context.Context, mailboxID string) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM folders WHERE mailbox_id=?`, `DELETE FROM mails WHERE mailbox_id=?`, `DELETE FROM signin WHERE mailbox_id=?`} {
			if _, err := tx.ExecContext(ctx, q, mailboxID); err != nil {
				return fmt.Errorf("mailindex: delete mailbox: %w", err)
			}
		}
		return nil
	})
}
