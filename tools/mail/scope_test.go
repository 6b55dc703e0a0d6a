package mail

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
)

// The coverage by age: indexes_all_mails only without any max age, else
// indexed_since, the later of the window the last sync applied and the one
// the setting asks for now.
func TestCoverageByAge(t *testing.T) {
	all := boxConfig("all", 1, policy.Low, policy.Unrestricted)
	window := boxConfig("window", 2, policy.Low, policy.Unrestricted)
	window.MaxAgeDays = 30
	widened := boxConfig("widened", 3, policy.Low, policy.Unrestricted) // max age removed, not yet synced
	fresh := boxConfig("fresh", 4, policy.Low, policy.Unrestricted)     // max age set, synced without one
	fresh.MaxAgeDays = 10
	e := newEnv(t, mailbox.OrgPolicy{}, all, window, widened, fresh)
	ctx := context.Background()
	mails := []testMail{{folder: "INBOX", subject: "Hello", from: "a@example.org", to: "me@example.org", body: "Hi.", received: now.Add(-24 * time.Hour)},
		{folder: "Drafts", subject: "Draft", from: "me@example.org", to: "b@example.org", body: "Unsent.", received: now.AddDate(-1, 0, 0)}}
	for _, id := range []string{"all", "window", "widened", "fresh"} {
		seed(t, e.x, id, now.Add(-time.Hour), mails)
	}
	// What the last syncs applied: window 30 days back from yesterday;
	// widened had 7 days; the drafts folder is never limited.
	if err := e.x.SaveFolderSince(ctx, "window", "INBOX", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := e.x.SaveFolderSince(ctx, "widened", "INBOX", time.Date(2026, 3, 24, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		all   bool
		since string
	}{
		"all":     {true, ""},
		"window":  {false, "2026-03-02"}, // now is 2026-04-01: the setting's window starts a day later than the applied one
		"widened": {false, "2026-03-24"},
		"fresh":   {false, "2026-03-22"},
	}
	check := func(tool string, boxes []any) {
		t.Helper()
		if len(boxes) != len(want) {
			t.Fatalf("%s: %d mailboxes", tool, len(boxes))
		}
		for _, b := range boxes {
			m := b.(map[string]any)
			w := want[m["id"].(string)]
			since, _ := m["indexed_since"].(string)
			if m["indexes_all_mails"] != w.all || since != w.since {
				t.Errorf("%s %s: indexes_all_mails %v, indexed_since %q; want %v, %q", tool, m["id"], m["indexes_all_mails"], since, w.all, w.since)
			}
			if _, ok := m["indexed_since"]; ok && w.all {
				t.Errorf("%s %s: indexed_since given with indexes_all_mails", tool, m["id"])
			}
			// Without a start date the conditions reach before the
			// window: the result says older mails were not looked at.
			issues := fmt.Sprint(m["issues"])
			if said := strings.Contains(issues, "indexes only the mails delivered since "+w.since); said == w.all {
				t.Errorf("%s %s: issues %s", tool, m["id"], issues)
			}
		}
	}
	res, err := exec(t, NewSearch(e.opts), policy.High, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	check("search_mails", decode(t, res)["mailboxes"].([]any))
	res, err = exec(t, NewCount(e.opts), policy.High, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	check("count_mails", decode(t, res)["mailboxes"].([]any))
	// Conditions starting inside a window need no such word; widened
	// (since 2026-03-24) still gets it.
	res, err = exec(t, NewCount(e.opts), policy.High, `{"after": "2026-03-23"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range decode(t, res)["mailboxes"].([]any) {
		m := b.(map[string]any)
		issues := fmt.Sprint(m["issues"])
		if said := strings.Contains(issues, "indexes only the mails"); said != (m["id"] == "widened") {
			t.Errorf("after 2026-03-23, %s: issues %s", m["id"], issues)
		}
	}
}
