package mail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
	"github.com/stewardhq/steward/tool"
)

// countingGuard wraps a filter and records the batches it got.
type countingGuard struct {
	mu      sync.Mutex
	inner   Filter
	batches [][]guard.Text
}

func (g *countingGuard) FilterBatch(ctx context.Context, texts []guard.Text) []guard.Outcome {
	g.mu.Lock()
	g.batches = append(g.batches, append([]guard.Text(nil), texts...))
	g.mu.Unlock()
	return g.inner.FilterBatch(ctx, texts)
}

type fakeChat struct{}

func (fakeChat) IsWebAddressGiven(string) bool                   { return false }
func (fakeChat) OutboundRequirement() policy.OutboundRequirement { return policy.OutboundRequirement{} }
func (fakeChat) RequiredConfidence() policy.Confidence           { return policy.None }

type testMail struct {
	folder, subject, from, to, body, extra string
	flags                                  mailindex.Flags
	received                               time.Time
}

func rawMail(m testMail, n int) []byte {
	return []byte(fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <m%d-%s>\r\n%sContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		m.from, m.to, m.subject, m.received.Format(time.RFC1123Z), n, strings.ReplaceAll(m.folder, "/", "-")+"@test", m.extra, m.body))
}

// seed stores mails in a mailbox as a finished sync would.
func seed(t testing.TB, x *mailindex.Index, mailboxID string, synced time.Time, mails []testMail) {
	t.Helper()
	ctx := context.Background()
	folders := map[string]bool{}
	for _, m := range mails {
		if !folders[m.folder] {
			folders[m.folder] = true
			special := ""
			if m.folder == "Drafts" {
				special = mailindex.SpecialDrafts
			}
			if m.folder == "Sent" {
				special = mailindex.SpecialSent
			}
			if err := x.SaveFolder(ctx, mailindex.Folder{MailboxID: mailboxID, Path: m.folder, SpecialUse: special, UIDValidity: 1,
				ServerMessages: 100, ServerUnseen: 3, LastCompleteSync: synced}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, m := range mails {
		p, err := mailbox.ParseMail(rawMail(m, i), m.received, mailbox.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.AddBatch(ctx, mailboxID, m.folder, []mailindex.Incoming{{UID: uint32(i + 1), Flags: m.flags, Mail: p.Mail, Chunks: p.Chunks}}); err != nil {
			t.Fatal(err)
		}
	}
}

type env struct {
	x     *mailindex.Index
	svc   *mailbox.Service
	g     *countingGuard
	logs  *bytes.Buffer
	opts  Options
	boxes []mailbox.Config
}

var now = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

func boxConfig(id string, number int, required policy.Confidence, out policy.Restriction) mailbox.Config {
	return mailbox.Config{ID: id, Name: "Box " + id, Number: number, Host: "imap.example.org", Port: 993, Security: mailbox.SecurityTLS,
		Auth: mailbox.AuthPassword, Username: "u", SecretRef: "r", RequiredConfidence: required, Outbound: out}
}

func newEnv(t *testing.T, org mailbox.OrgPolicy, boxes ...mailbox.Config) *env {
	t.Helper()
	x, err := mailindex.Open(context.Background(), filepath.Join(t.TempDir(), "mail.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	logs := &bytes.Buffer{}
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc := mailbox.NewService(mailbox.ServiceOptions{Index: x, Mailboxes: func() []mailbox.Config { return boxes }, Policy: org,
		Logger: logger, Now: func() time.Time { return now }})
	g := &countingGuard{inner: guard.New(guard.Options{Logger: logger})}
	return &env{x: x, svc: svc, g: g, logs: logs, boxes: boxes,
		opts: Options{Service: svc, Guard: g, Location: time.FixedZone("CET", 3600), Logger: logger}}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func exec(t *testing.T, tl tool.Tool, conf policy.Confidence, args string) (tool.Result, error) {
	t.Helper()
	return tl.Execute(context.Background(), json.RawMessage(args), tool.ExecContext{Definition: tl.Definition(), ProviderConfidence: conf, Chat: fakeChat{}})
}

// decode turns a result's JSON into a generic map.
func decode(t *testing.T, r tool.Result) map[string]any {
	t.Helper()
	s := r.ModelContent()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, s)
	}
	return m
}
