package searchindex

import (
	"context"
	"database/sql"
	"fmt"
)

// CheckIntegrity runs, on one connection, FTS5's own check of each table
// in fts (with rank 1, so the index is also compared with the stored
// texts) and then SQLite's PRAGMA integrity_check. It returns what they
// found wrong; problems with the FTS5 tables are named "<table>: ...".
//
// The FTS5 checks come first for a reason: PRAGMA integrity_check checks
// an FTS5 table with the index structure its connection cached when it
// last read the table, without asking whether another connection wrote
// since. On a pooled connection that read the table before such a write,
// it reports `fts5: checksum mismatch` for an index that is sound (and
// keeps reporting it until the connection uses the table again). The
// explicit check reloads the structure, so the pragma after it sees the
// current index.
func CheckIntegrity(ctx context.Context, db *sql.DB, fts ...string) ([]string, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var problems []string
	for _, t := range fts {
		if _, err := conn.ExecContext(ctx, `INSERT INTO `+t+`(`+t+`, rank) VALUES('integrity-check', 1)`); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", t, err))
		}
	}
	rows, err := conn.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	return problems, rows.Err()
}
