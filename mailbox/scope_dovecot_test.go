package mailbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/stewardhq/steward/internal/dovetest"
	"github.com/stewardhq/steward/store/mailindex"
)

// appendAt appends a mail with the given INTERNALDATE.
func (a *admin) appendAt(folder string, raw []byte, at time.Time, flags ...imap.Flag) {
	a.t.Helper()
	cmd := a.c.Append(folder, int64(len(raw)), &imap.AppendOptions{Flags: flags, Time: at})
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

// setFlags adds (or with add false removes) flags of the mails with the
// given Message-IDs in a folder.
func (a *admin) setFlags(folder string, add bool, flags []imap.Flag, messageIDs ...string) {
	a.t.Helper()
	set := a.selectUIDs(folder, messageIDs...)
	op := imap.StoreFlagsAdd
	if !add {
		op = imap.StoreFlagsDel
	}
	if err := a.c.Store(set, &imap.StoreFlags{Op: op, Silent: true, Flags: flags}, nil).Close(); err != nil {
		a.t.Fatal(err)
	}
	if err := a.c.Unselect().Wait(); err != nil {
		a.t.Fatal(err)
	}
}

func simpleMail(id string) []byte {
	return fmt.Appendf(nil, "From: s@example.org\r\nTo: anna@example.org\r\nSubject: Mail %s\r\nMessage-ID: <%s>\r\n\r\nBody of %s.\r\n", id, id, id)
}

// indexedIDs lists the Message-IDs in the index, sorted.
func indexedIDs(t *testing.T, x *mailindex.Index, mailboxID string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, ids := range indexState(t, x, mailboxID) {
		for _, id := range ids {
			seen[id] = true
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func sorted(ids ...string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

// The scope search runs as ESEARCH (Dovecot offers it) and, with the
// capability hidden, as a plain UID SEARCH.
func TestDovecotMaxAgeScope(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	t.Run("esearch", func(t *testing.T) { testMaxAgeScope(t, false) })
	t.Run("plain search", func(t *testing.T) { testMaxAgeScope(t, true) })
}

func testMaxAgeScope(t *testing.T, hide bool) {
	s := dovetest.Start(t, dovetest.User{Name: "anna", Password: "pw-anna"})
	a := dialAdmin(t, s, "anna", "pw-anna")
	now := time.Now()
	x := openIndex(t)
	cfg := testConfig(s, "anna")
	cfg.Folders = []string{"INBOX"}
	cfg.MaxAgeDays = 30
	since := cfg.IndexedSince(now)
	day := func(d time.Time) time.Time { return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, time.UTC) }

	a.appendAt("INBOX", simpleMail("recent@x"), now.Add(-48*time.Hour))
	a.appendAt("INBOX", simpleMail("first-day@x"), day(since))                    // the window's first day: inside
	a.appendAt("INBOX", simpleMail("day-before@x"), day(since).AddDate(0, 0, -2)) // two days before it: outside
	a.appendAt("INBOX", simpleMail("old@x"), now.AddDate(0, 0, -400), imap.FlagSeen)
	a.appendAt("INBOX", simpleMail("old-flagged@x"), now.AddDate(0, 0, -400), imap.FlagFlagged)
	a.appendAt("INBOX", simpleMail("old-draft-flag@x"), now.AddDate(0, 0, -400), imap.FlagDraft)
	a.appendAt("Drafts", simpleMail("old-draft@x"), now.AddDate(0, 0, -300), imap.FlagSeen)
	a.appendAt("Sent", simpleMail("old-sent@x"), now.AddDate(0, 0, -200), imap.FlagSeen)
	a.appendAt("Sent", simpleMail("recent-sent@x"), now.Add(-time.Hour), imap.FlagSeen)

	ix := newTestIndexer(t, x, "pw-anna")
	if hide {
		dial := loopbackDial(t)
		ix.o.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &hidingConn{Conn: c}, nil
		}
	}
	ctx := context.Background()
	sync := func(want []string) SyncReport {
		t.Helper()
		rep, err := ix.Sync(ctx, cfg, SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := indexedIDs(t, x, cfg.ID); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("max age %d: indexed %v\nwant %v", cfg.MaxAgeDays, got, want)
		}
		st, err := x.Stats(ctx, cfg.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mails != int64(len(want)) {
			t.Errorf("max age %d: %d mails stored, want %d (out-of-scope mails must leave)", cfg.MaxAgeDays, st.Mails, len(want))
		}
		return rep
	}
	checkSince := func(want time.Time) {
		t.Helper()
		scopes, err := x.FolderScopes(ctx, cfg.ID)
		if err != nil {
			t.Fatal(err)
		}
		for path, sc := range scopes {
			w := want
			if path == "Drafts" {
				w = time.Time{}
			}
			if !sc.Since.Equal(w) {
				t.Errorf("folder %s: since %v, want %v", path, sc.Since, w)
			}
		}
	}

	inWindow := sorted("recent@x", "first-day@x", "old-flagged@x", "old-draft-flag@x", "old-draft@x", "recent-sent@x")
	all := sorted(append(append([]string{}, inWindow...), "day-before@x", "old@x", "old-sent@x")...)
	sync(inWindow)
	checkSince(since)

	// A wider window fetches the older mails on the next sync.
	cfg.MaxAgeDays = 500
	rep := sync(all)
	if rep.Added != 3 {
		t.Errorf("widening added %d mails, want 3", rep.Added)
	}
	checkSince(cfg.IndexedSince(now))

	// A narrower one removes them.
	cfg.MaxAgeDays = 30
	rep = sync(inWindow)
	if rep.Removed != 3 || rep.Orphans != 3 || rep.Added != 0 {
		t.Errorf("narrowing: removed %d, orphans %d, added %d; want 3, 3, 0", rep.Removed, rep.Orphans, rep.Added)
	}

	// An old mail flagged on the server enters; unflagged it leaves.
	a.setFlags("INBOX", true, []imap.Flag{imap.FlagFlagged}, "old@x")
	sync(sorted(append(append([]string{}, inWindow...), "old@x")...))
	a.setFlags("INBOX", false, []imap.Flag{imap.FlagFlagged}, "old@x")
	sync(inWindow)

	// No max age indexes every mail again.
	cfg.MaxAgeDays = 0
	sync(all)
	checkSince(time.Time{})
}

func TestMaxAgeDaysValidation(t *testing.T) {
	s := &dovetest.Server{Host: "127.0.0.1", Port: 1143}
	cfg := testConfig(s, "anna")
	for _, n := range []int{0, 1, 30, MaxMaxAgeDays} {
		cfg.MaxAgeDays = n
		if err := cfg.Validate(); err != nil {
			t.Errorf("max age %d: %v", n, err)
		}
	}
	for _, n := range []int{-1, MaxMaxAgeDays + 1, 1 << 40} {
		cfg.MaxAgeDays = n
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "max_age_days") || !strings.Contains(err.Error(), "36500") {
			t.Errorf("max age %d: %v, want an error naming max_age_days and the range", n, err)
		}
	}
	// The window starts at midnight UTC of the day N days back.
	at := time.Date(2026, 3, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)) // still Feb 28 in UTC
	cfg.MaxAgeDays = 1
	if got, want := cfg.IndexedSince(at), time.Date(2026, 2, 27, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("since %v, want %v", got, want)
	}
	cfg.MaxAgeDays = 0
	if got := cfg.IndexedSince(at); !got.IsZero() {
		t.Errorf("no max age: since %v, want zero", got)
	}
}

// recordingConn keeps what the client sent and the server answered.
type recordingConn struct {
	net.Conn
	mu       *sync.Mutex
	sent, rx *bytes.Buffer
}

func (r recordingConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.sent.Write(p)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

func (r recordingConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	r.rx.Write(p[:n])
	r.mu.Unlock()
	return n, err
}

type recorder struct {
	mu       sync.Mutex
	sent, rx bytes.Buffer
}

// dial returns a loopback dial hook whose connections are recorded and,
// with hideCondStore, also hide CONDSTORE from the client.
func (r *recorder) dial(t *testing.T, hideCondStore bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := loopbackDial(t)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		rc := recordingConn{Conn: c, mu: &r.mu, sent: &r.sent, rx: &r.rx}
		if hideCondStore {
			return &hidingConn{Conn: rc}, nil
		}
		return rc, nil
	}
}

// take returns the recorded lines (client's, server's) and starts anew.
func (r *recorder) take() (sent, rx []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sent, rx = strings.Split(r.sent.String(), "\r\n"), strings.Split(r.rx.String(), "\r\n")
	r.sent.Reset()
	r.rx.Reset()
	return sent, rx
}

func grep(lines []string, subs ...string) []string {
	var out []string
	for _, l := range lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

func TestDovecotCondStoreFlagChanges(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := dovetest.Start(t, dovetest.User{Name: "anna", Password: "pw-anna"})
	a := dialAdmin(t, s, "anna", "pw-anna")
	const n = 40
	for i := range n {
		a.append("INBOX", simpleMail(fmt.Sprintf("m%02d@x", i)))
	}
	a.create("Projects")
	a.append("Projects", simpleMail("p1@x"))
	a.append("Projects", simpleMail("p2@x"))

	x := openIndex(t)
	cfg := testConfig(s, "anna")
	rec := &recorder{}
	ix := newTestIndexer(t, x, "pw-anna")
	ix.o.DialContext = rec.dial(t, false)
	ctx := context.Background()
	syncReport := func() map[string]FolderReport {
		t.Helper()
		rep, err := ix.Sync(ctx, cfg, SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]FolderReport{}
		for _, f := range rep.Folders {
			out[f.Path] = f
		}
		return out
	}
	flagsOfMail := func(msgID string) mailindex.Flags {
		t.Helper()
		id, ok, err := x.MailIDByMessageID(ctx, cfg.ID, msgID)
		if err != nil || !ok {
			t.Fatalf("mail %s not indexed: %v", msgID, err)
		}
		m, err := x.Mail(ctx, cfg.ID, id)
		if err != nil || len(m.Locations) != 1 {
			t.Fatalf("mail %s: %v %+v", msgID, err, m)
		}
		return m.Locations[0].Flags
	}

	// The first sync reads every flag.
	reps := syncReport()
	sent, rx := rec.take()
	t.Logf("first sync: %d FETCH responses with flags (full read and new mails)", len(grep(rx, " FETCH (", "FLAGS")))
	if reps["INBOX"].ChangedSince || len(grep(sent, "CHANGEDSINCE")) != 0 {
		t.Errorf("first sync used CHANGEDSINCE: %v", grep(sent, "FETCH"))
	}
	if len(grep(sent, "UID SEARCH RETURN (ALL)")) == 0 {
		t.Errorf("the scope search did not use ESEARCH: %v", grep(sent, "SEARCH"))
	}
	if len(grep(sent, "EXAMINE", "(CONDSTORE)")) == 0 {
		t.Errorf("folders not examined with CONDSTORE: %v", grep(sent, "EXAMINE"))
	}
	scopes, err := x.FolderScopes(ctx, cfg.ID)
	if err != nil || scopes["INBOX"].HighestModSeq == 0 {
		t.Fatalf("no HIGHESTMODSEQ kept: %+v %v", scopes, err)
	}

	// One flag changes among 40 mails: the next sync asks only for changes
	// and the server sends one mail's flags.
	a.setFlags("INBOX", true, []imap.Flag{imap.FlagSeen}, "m17@x")
	reps = syncReport()
	sent, rx = rec.take()
	t.Logf("second sync after one flag change among %d mails: %d FETCH responses with flags", n, len(grep(rx, " FETCH (", "FLAGS")))
	if !flagsOfMail("m17@x").Seen || flagsOfMail("m16@x").Seen {
		t.Errorf("flag change not seen: m17 %+v, m16 %+v", flagsOfMail("m17@x"), flagsOfMail("m16@x"))
	}
	if !reps["INBOX"].ChangedSince || reps["INBOX"].Flagged != 1 {
		t.Errorf("INBOX report %+v, want flags read by mod-sequence and one change", reps["INBOX"])
	}
	prev := scopes["INBOX"].HighestModSeq
	flagFetch := grep(sent, "FETCH", "FLAGS")
	if len(flagFetch) == 0 || len(grep(flagFetch, fmt.Sprintf("(CHANGEDSINCE %d)", prev))) != 1 {
		t.Errorf("second sync's flag FETCH: %v, want one with CHANGEDSINCE %d", flagFetch, prev)
	}
	if got := len(grep(rx, " FETCH (", "FLAGS")); got != 1 {
		t.Errorf("server sent %d FETCH responses with flags, want 1: %v", got, grep(rx, " FETCH ("))
	}

	// Nothing changed: no flag is read at all.
	syncReport()
	sent, _ = rec.take()
	if f := grep(sent, "FETCH"); len(f) != 0 {
		t.Errorf("a sync without changes fetched: %v", f)
	}

	// A new UIDVALIDITY falls back to reading every flag of that folder.
	a.delete("Projects")
	a.create("Projects")
	a.append("Projects", simpleMail("p1@x"), imap.FlagFlagged)
	reps = syncReport()
	rec.take()
	if p := reps["Projects"]; !p.Reset || p.ChangedSince {
		t.Errorf("Projects after a new UIDVALIDITY: %+v, want a reset with a full flag read", p)
	}
	if !flagsOfMail("p1@x").Flagged {
		t.Errorf("p1 flags %+v after the reset", flagsOfMail("p1@x"))
	}
	if _, ok, _ := x.MailIDByMessageID(ctx, cfg.ID, "p2@x"); ok {
		t.Error("p2 is gone from the server but still indexed")
	}

	// A lost mod-sequence falls back as well, and still finds changes.
	if err := x.SaveFolderModSeq(ctx, cfg.ID, "INBOX", scopes["INBOX"].ModSeqUIDValidity, 0); err != nil {
		t.Fatal(err)
	}
	a.setFlags("INBOX", true, []imap.Flag{imap.FlagFlagged}, "m03@x")
	reps = syncReport()
	sent, _ = rec.take()
	if reps["INBOX"].ChangedSince || reps["INBOX"].Flagged != 1 || !flagsOfMail("m03@x").Flagged {
		t.Errorf("INBOX without a kept mod-sequence: %+v", reps["INBOX"])
	}
	if len(grep(sent, "CHANGEDSINCE")) != 0 {
		t.Errorf("CHANGEDSINCE used without a kept mod-sequence: %v", grep(sent, "FETCH"))
	}
}

// hidingConn hides CONDSTORE, QRESYNC, ESEARCH and IMAP4rev2 from the
// server's capability lists, so the client believes the server lacks them. It passes on only
// whole lines, which every server response ends with.
type hidingConn struct {
	net.Conn
	pending, out []byte
}

func (h *hidingConn) Read(p []byte) (int, error) {
	for len(h.out) == 0 {
		buf := make([]byte, 32*1024)
		n, err := h.Conn.Read(buf)
		h.pending = append(h.pending, buf[:n]...)
		if i := bytes.LastIndexByte(h.pending, '\n'); i >= 0 {
			lines := h.pending[:i+1]
			h.pending = append([]byte(nil), h.pending[i+1:]...)
			for _, l := range bytes.SplitAfter(lines, []byte("\n")) {
				if bytes.Contains(l, []byte("CAPABILITY")) {
					l = bytes.ReplaceAll(l, []byte(" CONDSTORE"), nil)
					l = bytes.ReplaceAll(l, []byte(" QRESYNC"), nil)
					l = bytes.ReplaceAll(l, []byte(" ESEARCH"), nil)
					l = bytes.ReplaceAll(l, []byte(" IMAP4rev2"), nil)
				}
				h.out = append(h.out, l...)
			}
		}
		if err != nil {
			if len(h.out) == 0 {
				return 0, err
			}
			break
		}
	}
	n := copy(p, h.out)
	h.out = h.out[n:]
	return n, nil
}

func TestDovecotWithoutCondStoreReadsEveryFlag(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := dovetest.Start(t, dovetest.User{Name: "anna", Password: "pw-anna"})
	a := dialAdmin(t, s, "anna", "pw-anna")
	for i := range 5 {
		a.append("INBOX", simpleMail(fmt.Sprintf("n%d@x", i)))
	}
	x := openIndex(t)
	cfg := testConfig(s, "anna")
	cfg.Folders = []string{"INBOX"}
	rec := &recorder{}
	ix := newTestIndexer(t, x, "pw-anna")
	ix.o.DialContext = rec.dial(t, true)
	ctx := context.Background()
	for round := range 2 {
		if round == 1 {
			a.setFlags("INBOX", true, []imap.Flag{imap.FlagAnswered}, "n2@x")
		}
		rep, err := ix.Sync(ctx, cfg, SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sent, _ := rec.take()
		if c := grep(sent, "CONDSTORE"); len(c) != 0 {
			t.Errorf("round %d: CONDSTORE used although the server hid it: %v", round, c)
		}
		if c := grep(sent, "CHANGEDSINCE"); len(c) != 0 {
			t.Errorf("round %d: CHANGEDSINCE used although the server hid CONDSTORE: %v", round, c)
		}
		if srch := grep(sent, "UID SEARCH"); len(srch) != 1 || strings.Contains(srch[0], "RETURN") {
			t.Errorf("round %d: searches %v, want one plain UID SEARCH without ESEARCH", round, srch)
		}
		if got := grep(sent, "FETCH 1:* (UID FLAGS)"); len(got) != 1 {
			t.Errorf("round %d: flag reads %v, want one full read", round, grep(sent, "FETCH"))
		}
		if round == 1 && (rep.Folders[0].Flagged != 1 || rep.Folders[0].ChangedSince) {
			t.Errorf("round 1: %+v, want one flag change from a full read", rep.Folders[0])
		}
	}
	id, _, _ := x.MailIDByMessageID(ctx, cfg.ID, "n2@x")
	if m, err := x.Mail(ctx, cfg.ID, id); err != nil || !m.Locations[0].Flags.Answered {
		t.Errorf("n2 flags not updated: %v %+v", err, m)
	}
	scopes, err := x.FolderScopes(ctx, cfg.ID)
	if err != nil || scopes["INBOX"].HighestModSeq != 0 {
		t.Errorf("a mod-sequence was kept without CONDSTORE: %+v %v", scopes, err)
	}
}
