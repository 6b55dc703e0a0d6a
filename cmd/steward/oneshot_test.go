package main

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/app"
)

// The commands that answer one query from the local indexes and exit open
// them with a small page cache; chat, serve, sync and indexing, which
// live long or write much, keep the large one.
func TestOneShotCommandsOpenTheIndexesWithASmallCache(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"mail", "search", "invoice"}, true},
		{[]string{"mail", "count"}, true},
		{[]string{"mail", "status"}, true},
		{[]string{"sources", "search", "invoice"}, true},
		{[]string{"mail", "sync"}, false},
		{[]string{"sources", "index"}, false},
		{[]string{"chats", "list"}, false},
		{[]string{"tools"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			opened, oneShot := 0, false
			tweak := func(o *app.Options) { opened++; oneShot = o.OneShot }
			_, stderr, _ := runInProcess(t, t.TempDir(), tweak, nil, tc.args...)
			if opened == 0 {
				t.Fatalf("the command did not open the app; stderr:\n%s", stderr)
			}
			if oneShot != tc.want {
				t.Errorf("OneShot = %v, want %v", oneShot, tc.want)
			}
		})
	}
}
