package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/stewardhq/steward/internal/dovetest"
)

// appendMailAt puts a raw mail with the given INTERNALDATE into a folder.
func appendMailAt(t *testing.T, addr, user, pass, folder, raw string, at time.Time) {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, pass).Wait(); err != nil {
		t.Fatal(err)
	}
	cmd := c.Append(folder, int64(len(raw)), &imap.AppendOptions{Time: at})
	if _, err := cmd.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestMailAddMaxAgeDays: `mail add --max-age-days` is kept in the
// settings, the sync indexes only the window, and the tools' JSON says
// from which day the index holds every mail.
func TestMailAddMaxAgeDays(t *testing.T) {
	srv := dovetest.Start(t)
	now := time.Now()
	appendMailAt(t, srv.Addr(), "testuser", "testpass", "INBOX", "From: a@example.org\r\nSubject: Recent\r\nMessage-ID: <recent@x>\r\n\r\nNew.\r\n", now.Add(-24*time.Hour))
	appendMailAt(t, srv.Addr(), "testuser", "testpass", "INBOX", "From: a@example.org\r\nSubject: Ancient\r\nMessage-ID: <ancient@x>\r\n\r\nOld.\r\n", now.AddDate(-2, 0, 0))

	home := t.TempDir()
	cfg := filepath.Join(home, "config")
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(`{"version":2,"enabled_preview_features":["PRE_RAG_2024","PRE_MAILBOXES_2026"]}`), 0o600)
	add := func(days string) result {
		return steward(t, home, "testpass", nil, "mail", "add", "--id", "office", "--host", srv.Host, "--port", fmt.Sprint(srv.Port),
			"--security", "plain-loopback", "--username", "testuser", "--level", "MEDIUM", "--max-age-days", days)
	}
	for _, bad := range []string{"-1", "36501", "ten"} {
		if r := add(bad); r.code != 2 || !strings.Contains(r.stderr, "max-age-days") {
			t.Errorf("--max-age-days %s: exit %d, %s", bad, r.code, r.stderr)
		}
	}
	if r := add("30"); r.code != 0 {
		t.Fatalf("mail add: %d %s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(filepath.Join(cfg, "settings.json"))
	if !strings.Contains(string(b), `"max_age_days": 30`) {
		t.Fatalf("settings.json lacks max_age_days: %s", b)
	}
	if r := steward(t, home, "", nil, "mail", "sync"); r.code != 0 || !strings.Contains(r.stderr, "1 new") {
		t.Fatalf("mail sync: %d %s", r.code, r.stderr)
	}
	r := steward(t, home, "", nil, "mail", "count", "--json")
	var out struct {
		Mailboxes []map[string]any `json:"mailboxes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Mailboxes) != 1 {
		t.Fatalf("mail count --json: %v %s %s", err, r.stdout, r.stderr)
	}
	box := out.Mailboxes[0]
	y, m, d := now.UTC().AddDate(0, 0, -30).Date()
	wantSince := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	if box["mail_count"] != 1.0 || box["indexes_all_mails"] != false || box["indexed_since"] != wantSince {
		t.Errorf("count: %v, want 1 mail indexed since %s", box, wantSince)
	}
	if r := steward(t, home, "", nil, "mail", "status"); r.code != 0 ||
		!strings.Contains(r.stdout, "indexes the mails delivered since "+wantSince+" (max age 30 days)") {
		t.Errorf("mail status: %d %s %s", r.code, r.stdout, r.stderr)
	}
}
