package mailindex

import (
	"path/filepath"
	"testing"

	"github.com/stewardhq/steward/store/searchindex"
)

// Open hands its options to searchindex.Open: a one-shot process gets the
// small page cache it asked for, everything else the default.
func TestOpenPassesThePageCache(t *testing.T) {
	for _, tc := range []struct {
		opts []searchindex.Option
		want int
	}{
		{nil, -searchindex.DefaultCacheKiB},
		{[]searchindex.Option{searchindex.CacheKiB(searchindex.OneShotCacheKiB)}, -searchindex.OneShotCacheKiB},
	} {
		x, err := Open(t.Context(), filepath.Join(t.TempDir(), "mail.db"), tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := x.db.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&got); err != nil {
			t.Fatal(err)
		}
		x.Close()
		if got != tc.want {
			t.Errorf("cache_size %d, want %d", got, tc.want)
		}
	}
}
