package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMailboxMaxAgeDays(t *testing.T) {
	root := t.TempDir()
	box := func(id, extra string) string {
		return `CONFIG["MAILBOXES"][#CONFIG["MAILBOXES"]+1] = { ["Id"] = "` + id + `", ["Name"] = "Box", ["Host"] = "imap.example.org", ["Username"] = "u"` + extra + ` }` + "\n"
	}
	file := writePlugin(t, root, "org", "boxes", `CONFIG["MAILBOXES"] = {}
`+box("ninety", `, ["MaxAgeDays"] = 90`)+box("none", "")+box("zero", `, ["MaxAgeDays"] = 0`)+
		box("negative", `, ["MaxAgeDays"] = -5`)+box("fraction", `, ["MaxAgeDays"] = 1.5`)+box("huge", `, ["MaxAgeDays"] = 40000`)+box("text", `, ["MaxAgeDays"] = "90"`))
	eff, err := Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range eff.Mailboxes {
		got[m.ID] = m.MaxAgeDays
	}
	if len(got) != 3 || got["ninety"] != 90 || got["none"] != 0 || got["zero"] != 0 {
		t.Errorf("mailboxes %v, want ninety 90, none 0, zero 0 and the bad ones left out", got)
	}
	var msgs []string
	for _, p := range problemsFor(eff, file) {
		msgs = append(msgs, p.String())
	}
	all := strings.Join(msgs, "\n")
	if len(msgs) != 4 || strings.Count(all, "MaxAgeDays must be a whole number of days from 0 (index every mail) to 36500") != 4 {
		t.Errorf("problems:\n%s", all)
	}

	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	os.WriteFile(p, []byte(`{"version":2,"mailboxes":[{"id":"w","name":"W","host":"h","port":993,"security":"tls","auth":"password","username":"u","required_provider_confidence":"HIGH","outbound_data_restriction":"","max_age_days":30}]}`), 0o600)
	s, err := LoadUserSettings(p)
	if err != nil || s.Mailboxes[0].MaxAgeDays != 30 {
		t.Fatalf("user mailbox: %+v %v", s, err)
	}
	for _, bad := range []string{"-1", "36501"} {
		os.WriteFile(p, []byte(`{"version":2,"mailboxes":[{"id":"w","name":"W","host":"h","port":993,"security":"tls","auth":"password","username":"u","required_provider_confidence":"HIGH","outbound_data_restriction":"","max_age_days":`+bad+`}]}`), 0o600)
		if _, err := LoadUserSettings(p); err == nil || !strings.Contains(err.Error(), "max_age_days "+bad) || !strings.Contains(err.Error(), "0 (index every mail) to 36500") {
			t.Errorf("max_age_days %s: %v", bad, err)
		}
	}
}
