// Command ncruces opens a SQLite database with github.com/ncruces/go-sqlite3
// (Steward's driver, with FTS5) and runs one FTS5 query: what a Steward
// process pays before its first answer from the mail index.
package main

import (
	"database/sql"
	"fmt"
	"os"
	"time"

	"github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

func main() {
	t0 := time.Now()
	db, err := driver.Open("file:"+os.Args[1]+"?_pragma=journal_mode(wal)", fts5.Register)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t WHERE t MATCH ?`, os.Args[2]).Scan(&n); err != nil {
		panic(err)
	}
	fmt.Println(n, time.Since(t0).Microseconds())
	_ = sql.ErrNoRows
}
