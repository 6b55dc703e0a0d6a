package mailbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
)

var fixtureFiles = []string{"alternative.eml", "html-only.eml", "attachments.eml", "latin1.eml", "sjis.eml", "smime.eml",
	"pgpmime.eml", "signed.eml", "inline-pgp.eml", "thread-1.eml", "thread-2.eml"}

// seedIndex parses fixtures into the index as if a sync had run at synced.
func seedIndex(t testing.TB, x *mailindex.Index, mailboxID string, synced time.Time) {
	t.Helper()
	ctx := context.Background()
	folders := map[string][]string{"INBOX": fixtureFiles[:10], "Sent": {"thread-2.eml"}, "Drafts": {"draft.eml"}}
	special := map[string]string{"Sent": mailindex.SpecialSent, "Drafts": mailindex.SpecialDrafts}
	for _, path := range []string{"INBOX", "Sent", "Drafts"} {
		if err := x.SaveFolder(ctx, mailindex.Folder{MailboxID: mailboxID, Path: path, SpecialUse: special[path], UIDValidity: 7,
			ServerMessages: int64(len(folders[path])), ServerUnseen: 1, LastCompleteSync: synced}); err != nil {
			t.Fatal(err)
		}
		var items []mailindex.Incoming
		for i, f := range folders[path] {
			p, err := ParseMail(readFixture(t, f), time.Date(2026, 3, 1+i, 12, 0, 0, 0, time.UTC), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, mailindex.Incoming{UID: uint32(i + 1), Flags: mailindex.Flags{Seen: i%2 == 0}, Mail: p.Mail, Chunks: p.Chunks})
		}
		if err := x.AddBatch(ctx, mailboxID, path, items); err != nil {
			t.Fatal(err)
		}
	}
}

type recordSync struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordSync) RequestSync(cfg Config, drafts bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, cfg.ID)
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mailboxCfg(id string, number int, required policy.Confidence, emb *Embedding) Config {
	c := validConfig()
	c.ID, c.Name, c.Number, c.RequiredConfidence, c.Embedding = id, "Box "+id, number, required, emb
	return c
}

func TestReadable(t *testing.T) {
	emb := func(provider string) *Embedding {
		return &Embedding{Kind: EmbeddingOllama, BaseURL: "http://127.0.0.1:1/", Model: "m", Provider: provider}
	}
	boxes := []Config{
		mailboxCfg("b", 2, policy.Low, nil),
		mailboxCfg("a", 2, policy.Low, nil),
		mailboxCfg("z", 1, policy.High, emb(policy.ProviderSelfHosted)),
		mailboxCfg("closed", 0, policy.Unknown, nil),
		mailboxCfg("weak-embedder", 3, policy.Medium, emb(policy.ProviderDeepSeek)),
		mailboxCfg("bad-embedder", 4, policy.Low, &Embedding{Kind: "x"}),
	}
	other := mailboxCfg("elsewhere", 5, policy.Low, nil)
	other.Host = "imap.other.example"
	boxes = append(boxes, other)
	factory := func(context.Context, Config) (Embedder, error) { return nil, nil }
	tests := []struct {
		name    string
		chat    policy.Confidence
		servers ServerPolicy
		want    string
	}{
		// DeepSeek is LOW under TRUST_USA, below the MEDIUM its mailbox
		// needs: the mailbox is read by words only, its embedding
		// provider gets nothing.
		{"high chat", policy.High, ServerPolicy{}, "z a b weak-embedder elsewhere"},
		{"medium chat", policy.Medium, ServerPolicy{}, "a b weak-embedder elsewhere"},
		{"low chat", policy.Low, ServerPolicy{}, "a b elsewhere"},
		{"very low chat", policy.VeryLow, ServerPolicy{}, ""},
		{"none chat", policy.None, ServerPolicy{}, ""},
		{"server rule", policy.High, ServerPolicy{Set: true, Hosts: []string{"IMAP.EXAMPLE.ORG"}}, "z a b weak-embedder"},
		{"empty server rule", policy.High, ServerPolicy{Set: true}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewService(ServiceOptions{Mailboxes: func() []Config { return boxes }, Embedders: factory,
				Scheme: policy.SchemeConfig{Scheme: policy.TrustUSA}, Policy: OrgPolicy{Servers: tc.servers}})
			var got []string
			readable, refused := s.Check(tc.chat)
			for _, r := range readable {
				got = append(got, r.Config.ID)
				weak := r.Config.ID == "weak-embedder"
				if weak != (r.EmbeddingRefused != "") || (weak && !r.WordsOnly) {
					t.Errorf("%s: words only %v, embedding refused %q", r.Config.ID, r.WordsOnly, r.EmbeddingRefused)
				}
				if weak && (!strings.Contains(r.EmbeddingRefused, "LOW") || !strings.Contains(r.EmbeddingRefused, "MEDIUM")) {
					t.Errorf("the refusal must name both levels: %q", r.EmbeddingRefused)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("readable %q, want %q", strings.Join(got, " "), tc.want)
			}
			if len(readable)+len(refused) != len(boxes) {
				t.Errorf("%d readable and %d refused of %d mailboxes", len(readable), len(refused), len(boxes))
			}
			for _, u := range refused {
				if !strings.Contains(u.Reason, "("+u.Config.ID+")") {
					t.Errorf("the reason does not name the mailbox %s: %q", u.Config.ID, u.Reason)
				}
				if u.Config.ID == "z" && tc.chat < policy.High && (!strings.Contains(u.Reason, "HIGH") || !strings.Contains(u.Reason, tc.chat.String())) {
					t.Errorf("the reason must name both levels: %q", u.Reason)
				}
			}
		})
	}
	s := NewService(ServiceOptions{Mailboxes: func() []Config { return boxes }})
	if rs := s.Readable(policy.High); len(rs) != 3 {
		t.Errorf("without an embedder factory, mailboxes with embeddings do not resolve: %d readable", len(rs))
	}
	if !s.AreMailboxesEnabled() || NewService(ServiceOptions{}).AreMailboxesEnabled() ||
		NewService(ServiceOptions{Mailboxes: func() []Config { return boxes }, Enabled: func() bool { return false }}).AreMailboxesEnabled() {
		t.Error("AreMailboxesEnabled")
	}
}

func TestSearchHybridWordsAndPaging(t *testing.T) {
	srv := fakeEmbeddings(t, []string{"delivery", "budget", "chairs"})
	x := openIndex(t)
	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	seedIndex(t, x, "hy", now.Add(-time.Hour))
	seedIndex(t, x, "wo", now.Add(-time.Hour))
	emb := &Embedding{Kind: EmbeddingOllama, BaseURL: srv.URL, Model: "toy", Provider: policy.ProviderSelfHosted}
	factory := func(_ context.Context, c Config) (Embedder, error) {
		if c.Embedding == nil {
			return nil, nil
		}
		return NewEmbedder(*c.Embedding, "", srv.Client())
	}
	hy := mailboxCfg("hy", 1, policy.Low, emb)
	wo := mailboxCfg("wo", 2, policy.Low, nil)
	ix := NewIndexer(IndexerOptions{Index: x, Embedders: factory, Logger: quietLogger()})
	if n, err := ix.embedPending(context.Background(), "hy", mustEmbedder(t, factory, hy)); err != nil || n == 0 {
		t.Fatalf("embedded %d: %v", n, err)
	}
	s := NewService(ServiceOptions{Index: x, Mailboxes: func() []Config { return []Config{hy, wo} }, Embedders: factory,
		Scheme: policy.SchemeConfig{}, Logger: quietLogger(), Now: func() time.Time { return now }})
	rs := s.Readable(policy.High)
	if len(rs) != 2 || rs[0].WordsOnly || !rs[1].WordsOnly {
		t.Fatalf("readable %+v", rs)
	}
	ctx := context.Background()

	// "chairs" matches the Latin-1 mail by meaning (toy model: keyword) and
	// the HTML mail and the draft by words; hybrid finds both channels.
	res, err := s.Search(ctx, rs[0], SearchRequest{Query: "delivery of chairs", Page: 1, PerPage: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.WordsOnly || len(res.Mails) == 0 {
		t.Fatalf("hybrid result %+v", res)
	}
	seen := map[string]bool{}
	for _, m := range res.Mails {
		if seen[m.Mail.ID] {
			t.Errorf("mail %s twice", m.Mail.ID)
		}
		seen[m.Mail.ID] = true
		if m.Passage == "" || len([]rune(m.Passage)) > ChunkSize {
			t.Errorf("passage of %d runes", len([]rune(m.Passage)))
		}
	}
	if res.Mails[0].Mail.MessageID != "alt-1@supplier.example" {
		t.Errorf("best hit %s, want the delivery mail", res.Mails[0].Mail.MessageID)
	}
	if srv.Calls() == 0 {
		t.Error("query not embedded")
	}

	words, err := s.Search(ctx, rs[1], SearchRequest{Query: "delivery of chairs", Page: 1, PerPage: 10})
	if err != nil || !words.WordsOnly || len(words.Mails) == 0 {
		t.Fatalf("words-only result %+v %v", words, err)
	}

	// The embedding provider fails: words, and the result says so.
	failing, err := s.Search(ctx, rs[0], SearchRequest{Query: "FAIL delivery", Page: 1, PerPage: 10})
	if err != nil || !failing.WordsOnly || !failing.EmbeddingFailed || len(failing.Mails) != 1 {
		t.Fatalf("failing provider: %+v %v", failing, err)
	}

	// Paging without a query: newest first, stable pages.
	var all []string
	for page := 1; ; page++ {
		r, err := s.Search(ctx, rs[1], SearchRequest{Page: page, PerPage: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range r.Mails {
			all = append(all, m.Mail.ID)
		}
		if !r.HasMore {
			break
		}
		if page > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(all) != 12 {
		t.Errorf("listed %d mails over the pages, want 12", len(all))
	}
	if _, err := s.Search(ctx, rs[1], SearchRequest{Page: 0, PerPage: 4}); err == nil {
		t.Error("page 0 accepted")
	}

	// Filters apply before fusion.
	r, err := s.Search(ctx, rs[0], SearchRequest{Query: "budget", Filter: mailindex.Filter{SpecialUse: mailindex.SpecialSent}, Page: 1, PerPage: 10})
	if err != nil || len(r.Mails) != 1 || r.Mails[0].Mail.MessageID != "thread-2@example.org" {
		t.Errorf("filtered hybrid: %+v %v", r.Mails, err)
	}
}

func mustEmbedder(t *testing.T, f EmbedderFactory, c Config) Embedder {
	e, err := f(context.Background(), c)
	if err != nil || e == nil {
		t.Fatal(err)
	}
	return e
}

func TestUnknownFolderAndDraftsRefresh(t *testing.T) {
	x := openIndex(t)
	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	seedIndex(t, x, "mb", now.Add(-2*time.Minute))
	cfg := mailboxCfg("mb", 1, policy.Low, nil)
	rec := &recordSync{}
	s := NewService(ServiceOptions{Index: x, Mailboxes: func() []Config { return []Config{cfg} }, Sync: rec, Now: func() time.Time { return now }})
	r := s.Readable(policy.High)[0]
	ctx := context.Background()

	res, err := s.Search(ctx, r, SearchRequest{Filter: mailindex.Filter{Folder: "Archive"}, Page: 1, PerPage: 5})
	if err != nil || !res.Folder.Unknown || strings.Join(res.Folder.Known, ",") != "Drafts,INBOX,Sent" || len(res.Mails) != 0 {
		t.Fatalf("unknown folder: %+v %v", res.Folder, err)
	}
	cnt, err := s.Count(ctx, r, mailindex.Filter{Folder: "inbox"}, mailindex.GroupNone)
	if err != nil || !cnt.Folder.Unknown {
		t.Fatalf("count unknown folder: %+v %v", cnt, err)
	}

	tests := []struct {
		name   string
		filter mailindex.Filter
		setup  func()
		want   Refresh
		synced int
	}{
		{"inbox needs nothing", mailindex.Filter{Folder: "INBOX"}, func() {}, Refresh{}, 0},
		{"old drafts by special use", mailindex.Filter{SpecialUse: mailindex.SpecialDrafts}, func() {}, Refresh{SyncRequested: true}, 1},
		{"old drafts by path", mailindex.Filter{Folder: "Drafts"}, func() {}, Refresh{SyncRequested: true}, 2},
		{"fresh drafts", mailindex.Filter{Folder: "Drafts"}, func() {
			f, _, _ := x.Folder(ctx, "mb", "Drafts")
			f.LastCompleteSync = now.Add(-30 * time.Second)
			_ = x.SaveFolder(ctx, f)
		}, Refresh{}, 2},
		{"refused sign-in", mailindex.Filter{SpecialUse: mailindex.SpecialDrafts}, func() {
			f, _, _ := x.Folder(ctx, "mb", "Drafts")
			f.LastCompleteSync = now.Add(-time.Hour)
			_ = x.SaveFolder(ctx, f)
			_ = x.RecordSignInRefused(ctx, "mb", now, "AUTHENTICATIONFAILED")
		}, Refresh{}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			res, err := s.Search(ctx, r, SearchRequest{Filter: tc.filter, Page: 1, PerPage: 5})
			if err != nil {
				t.Fatal(err)
			}
			if res.Refresh != tc.want || len(rec.calls) != tc.synced {
				t.Errorf("refresh %+v after %d requests, want %+v after %d", res.Refresh, len(rec.calls), tc.want, tc.synced)
			}
		})
	}
	_ = x.ClearSignInRefusal(ctx, "mb")
	off := NewService(ServiceOptions{Index: x, Mailboxes: func() []Config { return []Config{cfg} }, Now: func() time.Time { return now }})
	res, _ = off.Search(ctx, r, SearchRequest{Filter: mailindex.Filter{SpecialUse: mailindex.SpecialDrafts}, Page: 1, PerPage: 5})
	if !res.Refresh.AutoRefreshOff || res.Refresh.SyncRequested {
		t.Errorf("refresh without a requester: %+v", res.Refresh)
	}
}

func TestFindCoverageStatus(t *testing.T) {
	x := openIndex(t)
	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	seedIndex(t, x, "open", now)
	seedIndex(t, x, "secret", now)
	open := mailboxCfg("open", 1, policy.Low, nil)
	secret := mailboxCfg("secret", 2, policy.High, nil)
	s := NewService(ServiceOptions{Index: x, Mailboxes: func() []Config { return []Config{open, secret} }})
	ctx := context.Background()
	secretID, _, _ := x.MailIDByMessageID(ctx, "secret", "thread-2@example.org")
	if _, _, err := s.Find(ctx, s.Readable(policy.Medium), secretID); err != mailindex.ErrNotFound {
		t.Errorf("a mail of an unreadable mailbox was found: %v", err)
	}
	r, m, err := s.Find(ctx, s.Readable(policy.High), secretID)
	if err != nil || r.Config.ID != "secret" {
		t.Fatalf("find: %v %v", r.Config.ID, err)
	}
	parent, ok, err := s.ReplyTarget(ctx, "secret", m)
	if err != nil || !ok {
		t.Fatalf("reply target: %v %v", ok, err)
	}
	if pm, _ := x.Mail(ctx, "secret", parent); pm.MessageID != "thread-1@example.org" {
		t.Errorf("reply target %s", pm.MessageID)
	}
	cov, err := s.Coverage(ctx, "never")
	if err != nil || !cov.Unknown {
		t.Errorf("coverage of a never-synced mailbox: %+v", cov)
	}
	_ = x.SaveFolder(ctx, mailindex.Folder{MailboxID: "open", Path: "Archive", ServerMessages: -1, ServerUnseen: -1})
	st, err := s.Status(ctx, open)
	if err != nil || !st.Coverage.FirstSyncRunning || len(st.Coverage.Folders) != 4 || st.Stats.Mails != 12 || st.Coverage.Folders[2].Indexed != 10 {
		t.Errorf("status %+v %v", st, err)
	}
	_ = http.StatusOK
}

func TestNoDraftsFolderNoRefresh(t *testing.T) {
	x := openIndex(t)
	ctx := context.Background()
	if err := x.SaveFolder(ctx, mailindex.Folder{MailboxID: "mb", Path: "INBOX", UIDValidity: 1, ServerMessages: -1, ServerUnseen: -1}); err != nil {
		t.Fatal(err)
	}
	cfg := mailboxCfg("mb", 1, policy.Low, nil)
	rec := &recordSync{}
	s := NewService(ServiceOptions{Index: x, Mailboxes: func() []Config { return []Config{cfg} }, Sync: rec})
	res, err := s.Search(ctx, s.Readable(policy.High)[0], SearchRequest{Filter: mailindex.Filter{SpecialUse: mailindex.SpecialDrafts}, Page: 1, PerPage: 5})
	if err != nil || res.Refresh != (Refresh{}) || len(rec.calls) != 0 {
		t.Errorf("a mailbox without indexed drafts requested a sync: %+v %v %v", res.Refresh, rec.calls, err)
	}
}

func TestErrorKind(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{context.Canceled, "cancelled"},
		{&SignInRefusedError{MailboxID: "m"}, "sign-in refused"},
		{fmt.Errorf("x: %w", ErrRootFolderMissing), "root folder missing"},
		{fmt.Errorf("examine: %w", &imap.Error{Type: imap.StatusResponseTypeNo, Text: "Mailbox doesn't exist: Secret Folder"}), "server answered NO "},
		{errors.New("anything about Secret Folder"), "sync error"},
	}
	for _, tc := range tests {
		got := ErrorKind(tc.err)
		if got != tc.want || strings.Contains(got, "Secret") {
			t.Errorf("ErrorKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
