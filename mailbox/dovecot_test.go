package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/stewardhq/steward/internal/dovetest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
)

// admin is a second IMAP connection the test uses to shape the server.
type admin struct {
	t *testing.T
	c *imapclient.Client
}

func dialAdmin(t *testing.T, s *dovetest.Server, user, pass string) *admin {
	t.Helper()
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(user, pass).Wait(); err != nil {
		t.Fatalf("admin login: %v", err)
	}
	return &admin{t: t, c: c}
}

func (a *admin) append(folder string, raw []byte, flags ...imap.Flag) {
	a.t.Helper()
	cmd := a.c.Append(folder, int64(len(raw)), &imap.AppendOptions{Flags: flags})
	if _, err := cmd.Write(raw); err != nil {
		a.t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		a.t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		a.t.Fatalf("append to %s: %v", folder, err)
	}
}

func (a *admin) create(folder string) {
	a.t.Helper()
	if err := a.c.Create(folder, nil).Wait(); err != nil {
		a.t.Fatalf("create %s: %v", folder, err)
	}
}

func (a *admin) delete(folder string) {
	a.t.Helper()
	if err := a.c.Unselect().Wait(); err != nil && a.c.Mailbox() != nil {
		a.t.Logf("unselect: %v", err)
	}
	if err := a.c.Delete(folder).Wait(); err != nil {
		a.t.Fatalf("delete %s: %v", folder, err)
	}
}

// selectUIDs selects a folder and returns the UIDs of the mails with the
// given Message-IDs, failing the test when there are none.
func (a *admin) selectUIDs(folder string, messageIDs ...string) imap.UIDSet {
	a.t.Helper()
	state := a.state(folder)
	if _, err := a.c.Select(folder, nil).Wait(); err != nil {
		a.t.Fatal(err)
	}
	set := imap.UIDSet{}
	for uid, m := range state {
		for _, id := range messageIDs {
			if m.messageID == id {
				set.AddNum(imap.UID(uid))
			}
		}
	}
	if len(set) == 0 {
		a.t.Fatalf("no mail %v in %s", messageIDs, folder)
	}
	return set
}

// expunge deletes the mails with the given Message-IDs from a folder.
func (a *admin) expunge(folder string, messageIDs ...string) {
	a.t.Helper()
	set := a.selectUIDs(folder, messageIDs...)
	if err := a.c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.c.Expunge().Collect(); err != nil {
		a.t.Fatal(err)
	}
	if err := a.c.Unselect().Wait(); err != nil {
		a.t.Fatal(err)
	}
}

type serverMail struct {
	messageID string
	flags     string
}

// state reads a folder read-only: UID → Message-ID and flags.
func (a *admin) state(folder string) map[uint32]serverMail {
	a.t.Helper()
	sel, err := a.c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		a.t.Fatalf("examine %s: %v", folder, err)
	}
	out := map[uint32]serverMail{}
	if sel.NumMessages == 0 {
		return out
	}
	hdr := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-ID"}, Peek: true}
	msgs, err := a.c.Fetch(imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Flags: true,
		BodySection: []*imap.FetchItemBodySection{hdr}}).Collect()
	if err != nil {
		a.t.Fatal(err)
	}
	for _, m := range msgs {
		id := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(m.FindBodySection(hdr))), "Message-ID:"))
		fl := make([]string, len(m.Flags))
		for i, f := range m.Flags {
			fl[i] = string(f)
		}
		sort.Strings(fl)
		out[uint32(m.UID)] = serverMail{messageID: strings.Trim(id, "<>"), flags: strings.Join(fl, " ")}
	}
	return out
}

func loopbackDial(t *testing.T) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil || !IsLoopbackHost(host) {
			t.Errorf("dial to non-loopback address %q", addr)
			return nil, errors.New("test dialer: only loopback")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

func testConfig(s *dovetest.Server, user string) Config {
	return Config{ID: "mb-" + user, Name: "Test " + user, Host: s.Host, Port: s.Port, Security: SecurityPlainLoopback,
		Auth: AuthPassword, Username: user, SecretRef: "ref-" + user, Folders: []string{"INBOX", "Projects"},
		IncludeSent: true, IncludeDrafts: true, RequiredConfidence: policy.Low, Outbound: policy.OnlyLinksFromChat}
}

func newTestIndexer(t *testing.T, x *mailindex.Index, password string) *Indexer {
	return NewIndexer(IndexerOptions{
		Index:       x,
		Secrets:     SecretFunc(func(context.Context, string) (string, error) { return password, nil }),
		DialContext: loopbackDial(t),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		BatchSize:   3,
	})
}

func openIndex(t *testing.T) *mailindex.Index {
	t.Helper()
	x, err := mailindex.Open(context.Background(), filepath.Join(t.TempDir(), "mail.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// indexState reads the index the way assertions need it: folder → set of
// Message-IDs, and the number of locations per folder.
func indexState(t *testing.T, x *mailindex.Index, mailboxID string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	ids, _, err := x.List(ctx, mailboxID, mailindex.Filter{}, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := x.Summaries(ctx, mailboxID, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		for _, l := range s.Locations {
			out[l.Folder] = append(out[l.Folder], s.MessageID)
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

func serverState(a *admin, folders ...string) map[string][]string {
	out := map[string][]string{}
	for _, f := range folders {
		for _, m := range a.state(f) {
			out[f] = append(out[f], m.messageID)
		}
		sort.Strings(out[f])
		if len(out[f]) == 0 {
			delete(out, f)
		}
	}
	return out
}

func flagSnapshot(a *admin, folders ...string) string {
	var b strings.Builder
	for _, f := range folders {
		st := a.state(f)
		uids := make([]int, 0, len(st))
		for u := range st {
			uids = append(uids, int(u))
		}
		sort.Ints(uids)
		for _, u := range uids {
			fmt.Fprintf(&b, "%s/%d:%s;", f, u, st[uint32(u)].flags)
		}
	}
	return b.String()
}

var allFolders = []string{"INBOX", "Projects", "Sent", "Drafts"}

func TestDovecotSync(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := dovetest.Start(t, dovetest.User{Name: "anna", Password: "pw-anna"})
	a := dialAdmin(t, s, "anna", "pw-anna")
	for _, f := range []string{"alternative.eml", "html-only.eml", "latin1.eml", "sjis.eml", "smime.eml", "pgpmime.eml", "signed.eml", "inline-pgp.eml", "thread-1.eml"} {
		a.append("INBOX", readFixture(t, f))
	}
	a.append("INBOX", readFixture(t, "attachments.eml"), imap.FlagFlagged)
	a.append("Sent", readFixture(t, "thread-2.eml"), imap.FlagSeen)
	a.append("Drafts", readFixture(t, "draft.eml"), imap.FlagDraft)
	a.create("Projects")
	a.append("Projects", readFixture(t, "alternative.eml")) // the same mail in two folders
	a.append("Projects", []byte("From: p@example.org\r\nSubject: Project kickoff\r\nMessage-ID: <proj-1@example.org>\r\n\r\nKickoff on Tuesday.\r\n"))

	before := flagSnapshot(a, allFolders...)
	x := openIndex(t)
	cfg := testConfig(s, "anna")
	ix := newTestIndexer(t, x, "pw-anna")
	ctx := context.Background()
	var progress []Progress
	rep, err := ix.Sync(ctx, cfg, SyncOptions{Progress: func(p Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 14 || len(rep.Folders) != 4 {
		t.Errorf("report %+v, want 14 mails in 4 folders", rep)
	}
	if len(progress) == 0 || progress[len(progress)-1].Done != 14 || progress[len(progress)-1].Total != 14 || progress[0].Rate <= 0 {
		t.Errorf("progress %+v", progress)
	}
	if got, want := indexState(t, x, cfg.ID), serverState(a, allFolders...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("index %v\nserver %v", got, want)
	}
	st, _ := x.Stats(ctx, cfg.ID)
	if st.Mails != 13 {
		t.Errorf("%d distinct mails, want 13 (one mail lies in two folders)", st.Mails)
	}

	// What is stored.
	find := func(msgID string) *mailindex.Mail {
		t.Helper()
		id, ok, err := x.MailIDByMessageID(ctx, cfg.ID, msgID)
		if err != nil || !ok {
			t.Fatalf("mail %s not indexed: %v", msgID, err)
		}
		m, err := x.Mail(ctx, cfg.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := find("smime-1@bank.example"); m.Encryption != mailindex.EncryptionSMIME || m.Body != "" || m.Headers == "" {
		t.Errorf("S/MIME: %q %q", m.Encryption, m.Body)
	}
	if m := find("pgp-1@example.net"); m.Encryption != mailindex.EncryptionPGP || m.Body != "" {
		t.Errorf("PGP/MIME: %q %q", m.Encryption, m.Body)
	}
	if m := find("signed-1@example.org"); m.Encryption != "" || !strings.Contains(m.Body, "approved") {
		t.Errorf("signed mail must not count as encrypted: %q %q", m.Encryption, m.Body)
	}
	if m := find("latin1-1@lieferant.example"); !strings.Contains(m.Body, "Stühle") || m.Addresses.From[0].Name != "Jürgen Müller" {
		t.Errorf("ISO-8859-1: %q %+v", m.Body, m.Addresses.From)
	}
	if m := find("sjis-1@example.jp"); m.Subject != "会議の議事録" || !strings.Contains(m.Body, "議事録を送ります") {
		t.Errorf("Shift_JIS: %q %q", m.Subject, m.Body)
	}
	if m := find("thread-2@example.org"); m.InReplyTo != "thread-1@example.org" || len(m.Locations) != 1 || m.Locations[0].SpecialUse != mailindex.SpecialSent {
		t.Errorf("reply: %+v", m)
	}
	if m := find("draft-1@example.org"); m.Locations[0].SpecialUse != mailindex.SpecialDrafts || !m.Locations[0].Flags.Draft {
		t.Errorf("draft: %+v", m.Locations)
	}
	if m := find("att-1@example.org"); len(m.Attachments) != 3 || !m.Locations[0].Flags.Flagged || m.Received.IsZero() {
		t.Errorf("attachments: %+v", m)
	}
	for _, q := range []struct {
		query string
		want  int
	}{{"delivery", 1}, {"Stühle", 1}, {"penalty", 1}, {"secretword", 0}, {"inlinesecretword", 0}, {"会議の議事録", 1}} {
		hits, err := x.SearchWords(ctx, cfg.ID, mailindex.Filter{}, q.query, 50)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(mailindex.BestPerMail(hits)); n != q.want {
			t.Errorf("words %q: %d mails, want %d", q.query, n, q.want)
		}
	}
	if c, _ := x.Count(ctx, cfg.ID, mailindex.Filter{Folder: "INBOX"}, mailindex.GroupNone, 20); c.Mails != 10 || c.ServerMessages != 10 || c.ServerUnseen != 10 {
		t.Errorf("count INBOX: %+v", c)
	}

	// Nothing on the server changed: no flag set, \Seen included.
	if after := flagSnapshot(a, allFolders...); after != before {
		t.Errorf("server flags changed:\nbefore %s\nafter  %s", before, after)
	}

	// Deleted on the server and new mail: the index follows.
	a.expunge("INBOX", "html-1@shop.example", "thread-1@example.org")
	a.append("INBOX", []byte("From: n@example.org\r\nSubject: New one\r\nMessage-ID: <new-1@example.org>\r\n\r\nFresh text.\r\n"))
	if _, err := a.c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := a.c.Store(imap.UIDSetNum(1), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
		t.Fatal(err)
	}
	rep, err = ix.Sync(ctx, cfg, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 1 || rep.Removed != 2 || rep.Orphans != 2 {
		t.Errorf("second sync: %+v", rep)
	}
	if got, want := indexState(t, x, cfg.ID), serverState(a, allFolders...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after deletion: index %v\nserver %v", got, want)
	}
	if m := find("alt-1@supplier.example"); !m.Locations[0].Flags.Seen && !m.Locations[1].Flags.Seen {
		t.Errorf("flag change not taken over: %+v", m.Locations)
	}

	// UIDVALIDITY changes: the folder is deleted and created again.
	a.delete("Projects")
	a.create("Projects")
	a.append("Projects", []byte("From: p@example.org\r\nSubject: Project kickoff\r\nMessage-ID: <proj-1@example.org>\r\n\r\nKickoff on Tuesday.\r\n"))
	a.append("Projects", []byte("From: p@example.org\r\nSubject: Project review\r\nMessage-ID: <proj-2@example.org>\r\n\r\nReview on Thursday.\r\n"))
	rep, err = ix.Sync(ctx, cfg, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var reset bool
	for _, f := range rep.Folders {
		if f.Path == "Projects" {
			reset = f.Reset
		}
	}
	if !reset || rep.Added != 2 {
		t.Errorf("UIDVALIDITY change not noticed: %+v", rep)
	}
	if got, want := indexState(t, x, cfg.ID), serverState(a, allFolders...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after UIDVALIDITY change: index %v\nserver %v", got, want)
	}
	folders, _ := x.Folders(ctx, cfg.ID)
	for _, f := range folders {
		if f.LastCompleteSync.IsZero() || f.UIDValidity == 0 || f.Indexed != f.ServerMessages {
			t.Errorf("folder state %+v", f)
		}
	}
}

func TestDovecotKilledSyncResumes(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := dovetest.Start(t, dovetest.User{Name: "ben", Password: "pw-ben"})
	a := dialAdmin(t, s, "ben", "pw-ben")
	a.create("Projects")
	for i := 0; i < 20; i++ {
		folder := "INBOX"
		if i%4 == 0 {
			folder = "Projects"
		}
		a.append(folder, []byte(fmt.Sprintf("From: s%d@example.org\r\nSubject: Mail %d\r\nMessage-ID: <m%d@example.org>\r\n\r\nText number %d.\r\n", i, i, i, i)))
	}
	x := openIndex(t)
	cfg := testConfig(s, "ben")
	ix := newTestIndexer(t, x, "pw-ben")
	for _, killAfter := range []int{4, 10} {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := ix.Sync(ctx, cfg, SyncOptions{Progress: func(p Progress) {
			if p.Done >= killAfter {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("killed sync after %d: err = %v", killAfter, err)
		}
		st, _ := x.Stats(context.Background(), cfg.ID)
		if st.Mails < int64(killAfter) || st.Mails >= 20 {
			t.Errorf("killed after %d: %d mails indexed", killAfter, st.Mails)
		}
	}
	rep, err := ix.Sync(context.Background(), cfg, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := indexState(t, x, cfg.ID), serverState(a, allFolders...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after resume: index %v\nserver %v", got, want)
	}
	st, _ := x.Stats(context.Background(), cfg.ID)
	if st.Mails != 20 || st.Chunks != 20 {
		t.Errorf("after resume: %+v (report %+v), want exactly 20 mails and chunks", st, rep)
	}

	// With an embedding provider the next sync embeds every chunk.
	srv := fakeEmbeddings(t, []string{"number"})
	cfg.Embedding = &Embedding{Kind: EmbeddingOllama, BaseURL: srv.URL, Model: "toy", Provider: policy.ProviderSelfHosted}
	ix.o.Embedders = Embedders(nil, srv.Client())
	rep, err = ix.Sync(context.Background(), cfg, SyncOptions{})
	if err != nil || rep.Embedded != 20 || rep.EmbeddingError != "" || rep.Added != 0 {
		t.Fatalf("embedding sync: %+v %v", rep, err)
	}
	if c, e, _ := x.EmbeddingCoverage(context.Background(), cfg.ID, "toy"); c != 20 || e != 20 {
		t.Errorf("embedded %d of %d chunks", e, c)
	}
}

// countingProxy forwards loopback TCP to target and counts connections and
// sign-in commands sent by the client.
type countingProxy struct {
	ln          net.Listener
	conns, auth atomic.Int32
	wg          sync.WaitGroup
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.wg.Add(2)
			go func() {
				defer p.wg.Done()
				defer up.Close()
				p.forward(up, c)
			}()
			go func() {
				defer p.wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return p
}

// forward copies the client's bytes unchanged to up (TLS records
// included) and counts the plain-text lines that start a sign-in.
func (p *countingProxy) forward(up io.Writer, c io.Reader) {
	buf := make([]byte, 32*1024)
	var line []byte
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
			line = append(line, buf[:n]...)
			for {
				i := bytes.IndexByte(line, '\n')
				if i < 0 {
					break
				}
				f := strings.Fields(strings.ToUpper(string(line[:i])))
				if len(f) >= 2 && (f[1] == "LOGIN" || f[1] == "AUTHENTICATE") {
					p.auth.Add(1)
				}
				line = line[i+1:]
			}
			if len(line) > 64*1024 { // no line end in sight: binary data
				line = line[:0]
			}
		}
		if err != nil {
			return
		}
	}
}

func TestDovecotWrongPasswordTriedOnce(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := dovetest.Start(t, dovetest.User{Name: "carl", Password: "right"})
	proxy := newCountingProxy(t, s.Addr())
	x := openIndex(t)
	cfg := testConfig(s, "carl")
	cfg.Port = proxy.ln.Addr().(*net.TCPAddr).Port
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_, err := newTestIndexer(t, x, "wrong").Sync(ctx, cfg, SyncOptions{})
		var refused *SignInRefusedError
		if !errors.As(err, &refused) || refused.At.IsZero() {
			t.Fatalf("run %d: err = %v, want a sign-in refusal", i+1, err)
		}
	}
	if c, n := proxy.conns.Load(), proxy.auth.Load(); c != 1 || n != 1 {
		t.Fatalf("%d connections and %d sign-in attempts over three runs, want exactly 1 and 1", c, n)
	}
	if n := s.WaitLog(t, 1, "Password mismatch"); n != 1 {
		t.Errorf("Dovecot logged %d password mismatches, want 1:\n%s", n, s.Log(t))
	}
	// The right password alone does not help until the user resets.
	ix := newTestIndexer(t, x, "right")
	if _, err := ix.Sync(ctx, cfg, SyncOptions{}); err == nil {
		t.Fatal("sync ran although a refusal is recorded")
	}
	if err := ix.ResetSignIn(ctx, cfg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, cfg, SyncOptions{}); err != nil {
		t.Fatalf("after reset: %v", err)
	}
	if n := proxy.auth.Load(); n != 2 {
		t.Errorf("%d sign-in attempts in total, want 2", n)
	}
}

func TestSyncSendsNothingWithoutSecretOrWithBadConfig(t *testing.T) {
	x := openIndex(t)
	dialed := false
	dial := func(context.Context, string, string) (net.Conn, error) { dialed = true; return nil, errors.New("no") }
	base := Config{ID: "m", Name: "M", Host: "127.0.0.1", Port: 1, Security: SecurityPlainLoopback, Auth: AuthPassword,
		Username: "u", SecretRef: "r", RequiredConfidence: policy.Low}
	tests := []struct {
		name   string
		cfg    func(Config) Config
		secret string
		want   string
	}{
		{"empty secret", func(c Config) Config { return c }, "", "empty"},
		{"plain to a remote host", func(c Config) Config { c.Host = "imap.example.org"; return c }, "pw", "plain-loopback"},
		{"unknown security", func(c Config) Config { c.Security = "none"; return c }, "pw", "security"},
		{"unknown auth", func(c Config) Config { c.Auth = "ntlm"; return c }, "pw", "sign-in kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndexer(IndexerOptions{Index: x, DialContext: dial,
				Secrets: SecretFunc(func(context.Context, string) (string, error) { return tc.secret, nil })})
			_, err := ix.Sync(context.Background(), tc.cfg(base), SyncOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
			if dialed {
				t.Error("the server was contacted")
			}
		})
	}
}

func TestXOAuth2InitialResponse(t *testing.T) {
	m := &xoauth2{user: "u@example.org", token: "tok"}
	mech, ir, err := m.Start()
	if err != nil || mech != "XOAUTH2" || string(ir) != "user=u@example.org\x01auth=Bearer tok\x01\x01" || m.challenged {
		t.Errorf("%s %q %v", mech, ir, err)
	}
	// go-imap would send an empty answer as "=", which Dovecot rejects.
	if r, err := m.Next([]byte(`{"status":"401"}`)); err != nil || string(r) != "\x01" || !m.challenged {
		t.Errorf("error challenge must be answered with 0x01 and remembered: %q %v %v", r, err, m.challenged)
	}
}
