package mailindex

// This file holds the part of a folder's sync state that limits what is
// indexed (the first day of a max-age window) and how flag changes are
// read (the server's HIGHESTMODSEQ, RFC 7162 CONDSTORE), in three columns
// of the folders table (schema 4).

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// FolderScope is a folder's scope and flag-change state.
type FolderScope struct {
	Path string
	// Since is the first day (midnight UTC) of the max-age window the last
	// complete sync of the folder applied; zero when it indexed every mail.
	Since time.Time
	// HighestModSeq is the server's HIGHESTMODSEQ when the folder's flags
	// were last read; it is only valid for ModSeqUIDValidity. Zero means
	// unknown: flags have to be read in full.
	HighestModSeq     uint64
	ModSeqUIDValidity uint32
}

// FolderScopes returns the scope state of a mailbox's folders by path.
func (x *Index) FolderScopes(ctx context.Context, mailboxID string) (map[string]FolderScope, error) {
	rows, err := x.db.QueryContext(ctx, `SELECT path, scope_since, highest_modseq, modseq_uid_validity FROM folders WHERE mailbox_id = ?`, mailboxID)
	if err != nil {
		return nil, fmt.Errorf("mailindex: folder scopes: %w", err)
	}
	defer rows.Close()
	out := map[string]FolderScope{}
	for rows.Next() {
		var s FolderScope
		var since, modseq int64
		if err := rows.Scan(&s.Path, &since, &modseq, &s.ModSeqUIDValidity); err != nil {
			return nil, fmt.Errorf("mailindex: folder scopes: %w", err)
		}
		if since != 0 {
			s.Since = time.Unix(since, 0).UTC()
		}
		s.HighestModSeq = uint64(modseq)
		out[s.Path] = s
	}
	return out, rows.Err()
}

// SaveFolderModSeq records the HIGHESTMODSEQ up to which a folder's flags
// are in the index, for the folder's UIDVALIDITY; 0 forgets it.
func (x *Index) SaveFolderModSeq(ctx context.Context, mailboxID, path string, uidValidity uint32, modseq uint64) error {
	if modseq > 1<<63-1 {
		modseq = 0 // SQLite cannot hold it; flags are then read in full
	}
	return x.updateScope(ctx, `UPDATE folders SET highest_modseq=?, modseq_uid_validity=? WHERE mailbox_id=? AND path=?`,
		int64(modseq), uidValidity, mailboxID, path)
}

// SaveFolderSince records the first day of the window a complete sync of
// the folder applied; zero for every mail.
func (x *Index) SaveFolderSince(ctx context.Context, mailboxID, path string, since time.Time) error {
	var s int64
	if !since.IsZero() {
		s = since.Unix()
	}
	return x.updateScope(ctx, `UPDATE folders SET scope_since=? WHERE mailbox_id=? AND path=?`, s, mailboxID, path)
}

func (x *Index) updateScope(ctx context.Context, q string, args ...any) error {
	return x.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("mailindex: save folder scope: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("mailindex: save folder scope: folder not saved")
		}
		return nil
	})
}
