package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stewardhq/steward/policy"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "steward.db")
	s, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

func sampleChat(id string) *Chat {
	return &Chat{
		ID: id, Title: "Delivery dates", SystemPrompt: "Be brief.", Provider: "openai", Model: "gpt-4o",
		RequiredConfidence: policy.Medium,
		DataSecurity:       policy.SelfHosted,
		Outbound:           policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat, MailboxID: "mb-1", MailboxName: "Work"},
		Messages: []Message{
			{Role: "user", Text: "What did the supplier say? Grüße", Documents: []Document{{Name: "a.txt", Text: "https://example.org/x"}}},
			{Role: "assistant", Text: "They promised Friday.", Traces: []Trace{{Order: 1, ToolID: "search_mails", ToolName: "search_mails", CallID: "c1", Status: "SUCCESS", Arguments: `{"query":"delivery"}`}},
				Sources: []Source{{Title: "Mail: Delivery — a@b.c, 2026-11-30", URL: "mailbox://mb-1/m-1"}}},
		},
	}
}

func TestRoundTripKeepsRequirementsExactly(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	c := sampleChat("0f3a9c1e-aaaa-bbbb-cccc-000000000001")
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RequiredConfidence != policy.Medium || got.DataSecurity != policy.SelfHosted {
		t.Fatalf("requirements changed on load: %v %v", got.RequiredConfidence, got.DataSecurity)
	}
	if got.Outbound != c.Outbound {
		t.Fatalf("outbound requirement changed on load: got %+v want %+v", got.Outbound, c.Outbound)
	}
	if len(got.Messages) != 2 || got.Messages[0].Text != c.Messages[0].Text || got.Messages[1].Traces[0].CallID != "c1" {
		t.Fatalf("messages not kept: %+v", got.Messages)
	}
	if got.Messages[0].Documents[0].Text != "https://example.org/x" || got.Messages[1].Sources[0].URL != "mailbox://mb-1/m-1" {
		t.Fatalf("documents or sources not kept: %+v", got.Messages)
	}
}

func TestPrefixListDelete(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	for _, id := range []string{"abc-1", "abd-2", "xyz-3"} {
		if err := s.Save(ctx, sampleChat(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Load(ctx, "ab"); err == nil || !strings.Contains(err.Error(), "several") {
		t.Fatalf("an ambiguous prefix must be refused, got %v", err)
	}
	c, err := s.Load(ctx, "xy")
	if err != nil || c.ID != "xyz-3" {
		t.Fatalf("prefix lookup: %v %v", c, err)
	}
	if _, err := s.Load(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown ID: %v", err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 3 || list[0].Messages != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if id, err := s.Delete(ctx, "abd"); err != nil || id != "abd-2" {
		t.Fatalf("delete: %v %v", id, err)
	}
	if list, _ := s.List(ctx); len(list) != 2 {
		t.Fatalf("after delete: %+v", list)
	}
}

func TestUnreadableStoredLevelsCountAsStrictest(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	if err := s.Save(ctx, sampleChat("c1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE chats SET required_confidence='SOMETHING', data_security='???', outbound_restriction='???'`); err != nil {
		t.Fatal(err)
	}
	c, err := s.Load(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if c.RequiredConfidence != policy.High || c.DataSecurity != policy.SelfHosted || c.Outbound.Restriction != policy.OnlyConfiguredServices {
		t.Fatalf("unreadable values must load as the strictest: %+v", c)
	}
}

func TestSaveReplacesMessagesAtomically(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	c := sampleChat("c1")
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	c.Messages = append(c.Messages, Message{Role: "user", Text: "never stored"})
	if err := s.Save(cctx, c); err == nil {
		t.Fatal("a cancelled save must fail")
	}
	got, err := s.Load(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 2 {
		t.Fatalf("a failed save changed the stored chat: %d messages", len(got.Messages))
	}
}

// TestCrashMidWriteNeverCorrupts kills a writer process with SIGKILL while it
// saves a growing chat over and over, then checks that the database is
// intact and holds one complete earlier version.
func TestCrashMidWriteNeverCorrupts(t *testing.T) {
	if os.Getenv("STEWARD_STORE_CRASH_WRITER") != "" {
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "crash.db")
	seen := 0
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriter$")
		cmd.Env = append(os.Environ(), "STEWARD_STORE_CRASH_WRITER="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it write for a while, then kill it without warning.
		time.Sleep(time.Duration(300+200*round) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()

		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("round %d: reopening after a crash: %v", round, err)
		}
		var check string
		if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("round %d: integrity_check = %q, %v", round, check, err)
		}
		c, err := s.Load(context.Background(), "crash")
		if err == nil {
			// Every stored version is whole: message i says "message i".
			for i, m := range c.Messages {
				if m.Text != "message "+strconv.Itoa(i) {
					t.Fatalf("round %d: message %d is %q: a partial write was stored", round, i, m.Text)
				}
			}
			seen = len(c.Messages)
			if n, _ := strconv.Atoi(strings.TrimPrefix(c.Title, "n=")); n != len(c.Messages) {
				t.Fatalf("round %d: title says %s but %d messages are stored", round, c.Title, len(c.Messages))
			}
		} else if !errors.Is(err, ErrNotFound) {
			t.Fatalf("round %d: %v", round, err)
		}
		s.Close()
	}
	if seen == 0 {
		t.Fatal("the writer never stored a chat before it was killed; the test proved nothing")
	}
	t.Logf("after 3 kills the store holds a whole chat of %d messages", seen)
}

// TestCrashWriter is the child process of TestCrashMidWriteNeverCorrupts.
func TestCrashWriter(t *testing.T) {
	path := os.Getenv("STEWARD_STORE_CRASH_WRITER")
	if path == "" {
		t.Skip("only runs as the child of TestCrashMidWriteNeverCorrupts")
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c := &Chat{ID: "crash"}
	if old, err := s.Load(context.Background(), "crash"); err == nil {
		c = old
	}
	for i := len(c.Messages); ; i++ {
		c.Messages = append(c.Messages, Message{Role: "user", Text: "message " + strconv.Itoa(i)})
		c.Title = "n=" + strconv.Itoa(len(c.Messages))
		if err := s.Save(context.Background(), c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// An answer that was cut off is stored as such, with the provider's base
// URL, and a database of schema version 1 is brought up to date on open
// without losing its chats.
func TestIncompleteAnswersAndMigrationFromVersion1(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "steward.db")
	v1 := strings.NewReplacer(",\n\tbase_url TEXT NOT NULL DEFAULT ''", "", ",\n\tincomplete INTEGER NOT NULL DEFAULT 0", "").Replace(schema)
	if v1 == schema {
		t.Fatal("could not write the version 1 schema")
	}
	db, err := sql.Open("sqlite3", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{v1, `INSERT INTO meta(key,value) VALUES('schema_version','1')`,
		`INSERT INTO chats VALUES('c-old','Old','S','openai','gpt-4o','2026-01-01T00:00:00Z','2026-01-01T00:00:00Z','HIGH','NONE',0,'UNRESTRICTED','','')`,
		`INSERT INTO messages VALUES('c-old',0,'user','hi',0,'2026-01-01T00:00:00Z','[]','[]','[]')`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(ctx, p)
	if err != nil {
		t.Fatalf("opening a version 1 store: %v", err)
	}
	defer s.Close()
	old, err := s.Load(ctx, "c-old")
	if err != nil || len(old.Messages) != 1 || old.Messages[0].Incomplete || old.BaseURL != "" {
		t.Fatalf("the old chat after migration: %+v, %v", old, err)
	}
	c := sampleChat("c-new")
	c.BaseURL = "http://127.0.0.1:8080/v1/"
	c.Messages[1].Incomplete = true
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "c-new")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Messages[1].Incomplete || got.Messages[0].Incomplete || got.BaseURL != c.BaseURL {
		t.Fatalf("stored %+v, want the answer marked incomplete and the base URL kept", got)
	}
	var v string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema_version'`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("schema version %q, %v", v, err)
	}
}

// A chat's data-source options are stored with it, and a chat without its
// own keeps none; deleting the chat deletes them.
func TestDataSourceOptionsAreStoredWithTheChat(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "chats.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &Chat{ID: "c1", Title: "t", DataSources: &DataSourceOptions{Selected: []string{"docs", "hr"}, Retrieval: "EVERY_MESSAGE"}}
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "c1")
	if err != nil || got.DataSources == nil || got.DataSources.Retrieval != "EVERY_MESSAGE" || strings.Join(got.DataSources.Selected, ",") != "docs,hr" {
		t.Fatalf("%+v %v", got, err)
	}
	c.DataSources = nil
	s.Save(ctx, c)
	if got, _ := s.Load(ctx, "c1"); got.DataSources != nil {
		t.Fatal("options removed from the chat are gone")
	}
	c.DataSources = &DataSourceOptions{Disabled: true}
	s.Save(ctx, c)
	if _, err := s.Delete(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM chat_data_sources`).Scan(&n)
	if n != 0 {
		t.Fatal("deleting a chat leaves its options behind")
	}
}
