package searchindex

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// Every connection of the pool gets the page cache Open was given: the
// default for long-running processes, a small one when asked for.
func TestOpenPageCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want int
	}{
		{"default", nil, -DefaultCacheKiB},
		{"one shot", []Option{CacheKiB(OneShotCacheKiB)}, -OneShotCacheKiB},
		{"too small", []Option{CacheKiB(1)}, -64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(filepath.Join(t.TempDir(), "x.db"), "test", tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// Two connections held at once: both are new connections of
			// the pool, and both must carry the setting.
			ctx := t.Context()
			c1, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c1.Close()
			c2, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			for i, got := range []int{cacheSize(t, c1), cacheSize(t, c2)} {
				if got != tc.want {
					t.Errorf("connection %d: cache_size %d, want %d", i+1, got, tc.want)
				}
			}
		})
	}
}

func cacheSize(t *testing.T, c *sql.Conn) int {
	t.Helper()
	var n int
	if err := c.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
