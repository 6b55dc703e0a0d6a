// Command modernc does the same with modernc.org/sqlite.
package main

import (
	"database/sql"
	"fmt"
	"os"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	t0 := time.Now()
	db, err := sql.Open("sqlite", "file:"+os.Args[1]+"?_pragma=journal_mode(wal)")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t WHERE t MATCH ?`, os.Args[2]).Scan(&n); err != nil {
		panic(err)
	}
	fmt.Println(n, time.Since(t0).Microseconds())
}
