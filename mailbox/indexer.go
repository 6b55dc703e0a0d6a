package mailbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
)

// Secrets resolves a secret reference (a password or token in the OS
// keyring or another store) to its value.
type Secrets interface {
	Secret(ctx context.Context, ref string) (string, error)
}

// SecretFunc adapts a function to Secrets.
type SecretFunc func(ctx context.Context, ref string) (string, error)

// Secret calls f.
func (f SecretFunc) Secret(ctx context.Context, ref string) (string, error) { return f(ctx, ref) }

// EmbedderFactory builds the embedder of a mailbox's embedding provider.
// It returns nil, nil for a mailbox without one.
type EmbedderFactory func(ctx context.Context, cfg Config) (Embedder, error)

// IndexerOptions configure an Indexer.
type IndexerOptions struct {
	Index   *mailindex.Index
	Secrets Secrets
	// Embedders is nil for word-only indexing.
	Embedders EmbedderFactory
	// Scheme gives the embedding providers their confidence. A mailbox's
	// mails go to its embedding provider only when the provider meets the
	// mailbox's level under it (Config.EmbeddingRefusal); otherwise they
	// are indexed for word search only. The zero value is TRUST_ALL.
	Scheme policy.SchemeConfig
	// DialContext opens TCP connections; nil uses a net.Dialer with a 30 s
	// timeout. Tests inject a dialer that only reaches loopback.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLSConfig is cloned for TLS and STARTTLS (e.g. test roots); nil uses
	// the system roots. Certificates are always verified.
	TLSConfig *tls.Config
	// CommandTimeout bounds the wait for the server's answer; default 1 min.
	CommandTimeout time.Duration
	// BatchSize is how many mails are fetched and committed together;
	// default 100.
	BatchSize int
	Parse     ParseOptions
	Logger    *slog.Logger
	Now       func() time.Time
}

// Indexer syncs mailboxes read-only into the local index.
type Indexer struct {
	o IndexerOptions
}

// NewIndexer returns an indexer.
func NewIndexer(o IndexerOptions) *Indexer {
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = time.Minute
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 100
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Indexer{o: o}
}

// SignInRefusedError says the server refused the sign-in, now or in an
// earlier run. No further attempt is made until ResetSignIn.
type SignInRefusedError struct {
	MailboxID string
	At        time.Time
}

func (e *SignInRefusedError) Error() string {
	return fmt.Sprintf("mailbox %s: the server refused the sign-in at %s; no further attempt is made until the secret is saved again or the sign-in is reset (steward mail reset-signin)",
		e.MailboxID, e.At.Format(time.RFC3339))
}

// ErrRootFolderMissing is returned when the first configured folder does
// not exist on the server; nothing is removed from the index then.
var ErrRootFolderMissing = errors.New("the first configured folder does not exist on the server")

// Progress reports how far a sync is. The CLI shows it; it is not logged.
type Progress struct {
	// Done and Total count the mails to fetch in this run.
	Done, Total int
	// Folder is the folder being fetched (for the user's own terminal).
	Folder  string
	Elapsed time.Duration
	// Rate is mails per second so far.
	Rate float64
}

// SyncOptions adjust one sync.
type SyncOptions struct {
	// Progress is called after every committed batch.
	Progress func(Progress)
	// DraftsOnly syncs only the drafts folder (the on-demand refresh).
	DraftsOnly bool
}

// FolderReport is what a sync did to one folder.
type FolderReport struct {
	Path       string
	SpecialUse string
	// Reset is true when a changed UIDVALIDITY re-indexed the folder.
	Reset bool
	// ChangedSince is true when flag changes were read by mod-sequence
	// (CONDSTORE) rather than by reading every flag.
	ChangedSince            bool
	Added, Removed, Flagged int
	ServerMessages          int64
}

// SyncReport is what a sync did.
type SyncReport struct {
	Folders []FolderReport
	// Added counts fetched mails, Removed locations gone from the server,
	// Orphans mails removed because no location was left.
	Added, Removed int
	Orphans        int64
	// Embedded counts chunks embedded; EmbeddingError is set when the
	// embedding provider failed (words still work).
	Embedded       int
	EmbeddingError string
	// EmbeddingRefused says why nothing was sent to the mailbox's
	// embedding provider: it does not meet the mailbox's level. Word
	// search works as before.
	EmbeddingRefused string
	Duration         time.Duration
}

// ResetSignIn allows sign-in again after a refusal.
func (ix *Indexer) ResetSignIn(ctx context.Context, mailboxID string) error {
	return ix.o.Index.ClearSignInRefusal(ctx, mailboxID)
}

type folderPlan struct {
	path, special string
	// since is the first day of the window; zero indexes every mail.
	since   time.Time
	status  *imap.StatusData
	newUIDs []uint32
	report  *FolderReport
}

// Sync brings the index of one mailbox up to date with its server, read
// only, with exactly one sign-in attempt. A refused sign-in returns a
// *SignInRefusedError and blocks later runs until ResetSignIn. The error
// may quote the server (e.g. a folder name): show it to the user, but log
// ErrorKind(err) instead.
func (ix *Indexer) Sync(ctx context.Context, cfg Config, so SyncOptions) (SyncReport, error) {
	start := ix.o.Now()
	var rep SyncReport
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	log := ix.o.Logger.With("mailbox_id", cfg.ID, "mailbox", cfg.Name)
	idx := ix.o.Index
	if at, _, refused, err := idx.SignInRefused(ctx, cfg.ID); err != nil {
		return rep, err
	} else if refused {
		return rep, &SignInRefusedError{MailboxID: cfg.ID, At: at}
	}
	if ix.o.Secrets == nil {
		return rep, fmt.Errorf("mailbox %s: no secret store configured", cfg.ID)
	}
	secret, err := ix.o.Secrets.Secret(ctx, cfg.SecretRef)
	if err != nil {
		return rep, fmt.Errorf("mailbox %s: read the secret: %w", cfg.ID, err)
	}
	if secret == "" {
		return rep, fmt.Errorf("mailbox %s: the stored password or token is empty: save it first; nothing was sent to the server", cfg.ID)
	}

	c, err := ix.connect(ctx, cfg)
	if err != nil {
		return rep, fmt.Errorf("mailbox %s: connect: %w", cfg.ID, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()

	if err := signIn(c, cfg, secret); err != nil {
		var ie *imap.Error
		var tr *tokenRefusedError
		isNo := errors.As(err, &ie) && ie.Type == imap.StatusResponseTypeNo
		if isNo || errors.As(err, &tr) {
			at := ix.o.Now()
			code := string(imap.ResponseCodeAuthenticationFailed)
			if isNo {
				code = string(ie.Code)
			}
			if rerr := idx.RecordSignInRefused(context.WithoutCancel(ctx), cfg.ID, at, code); rerr != nil {
				return rep, rerr
			}
			log.Warn("mail server refused the sign-in; no further attempt until the user resets it", "code", code)
			return rep, &SignInRefusedError{MailboxID: cfg.ID, At: at}
		}
		return rep, ctxErr(ctx, fmt.Errorf("mailbox %s: sign in: %w", cfg.ID, err))
	}

	plans, err := ix.plan(ctx, c, cfg, so, &rep)
	if err != nil {
		return rep, ctxErr(ctx, err)
	}
	total := 0
	for _, p := range plans {
		total += len(p.newUIDs)
	}
	done := 0
	for _, p := range plans {
		if err := ix.fetchFolder(ctx, c, cfg, p, so, &done, total, start); err != nil {
			return rep, ctxErr(ctx, err)
		}
		rep.Added += p.report.Added
	}
	for _, p := range plans {
		rep.Folders = append(rep.Folders, *p.report)
	}
	_ = c.Logout().Wait()
	stop()

	refused := cfg.EmbeddingRefusal(ix.o.Scheme)
	if refused != nil {
		rep.EmbeddingRefused = refused.Error()
		log.Warn("mails not embedded: the embedding provider does not meet the mailbox's level; word search only", "reason", rep.EmbeddingRefused)
	}
	if ix.o.Embedders != nil && refused == nil {
		emb, err := ix.o.Embedders(ctx, cfg)
		if err != nil {
			rep.EmbeddingError = err.Error()
		} else if emb != nil {
			n, err := ix.embedPending(ctx, cfg.ID, emb)
			rep.Embedded = n
			if err != nil {
				if ctx.Err() != nil {
					return rep, ctx.Err()
				}
				rep.EmbeddingError = err.Error()
				log.Warn("embedding failed; the mailbox is searched by words until the next sync", "error", err)
			}
		}
	}
	if rep.Orphans, err = idx.RemoveOrphans(ctx, cfg.ID); err != nil {
		return rep, err
	}
	// Word searches rank common words with counts kept apart; count them
	// now when the index grew by a tenth, so no search has to.
	if err := idx.RefreshWordStats(ctx); err != nil {
		return rep, err
	}
	rep.Duration = ix.o.Now().Sub(start)
	log.Info("mailbox synced", "added", rep.Added, "removed", rep.Removed, "orphans", rep.Orphans, "embedded", rep.Embedded, "duration", rep.Duration)
	return rep, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// plan finds the folders, applies UIDVALIDITY changes, removals and flag
// changes, and lists the UIDs to fetch.
func (ix *Indexer) plan(ctx context.Context, c *imapclient.Client, cfg Config, so SyncOptions, rep *SyncReport) ([]*folderPlan, error) {
	idx := ix.o.Index
	var listOpts *imap.ListOptions
	if c.Caps().Has(imap.CapSpecialUse) {
		listOpts = &imap.ListOptions{ReturnSpecialUse: true}
	}
	lists, err := c.List("", "*", listOpts).Collect()
	if err != nil {
		return nil, fmt.Errorf("mailbox %s: list folders: %w", cfg.ID, err)
	}
	special := map[string]string{}
	exists := map[string]bool{}
	var sent, drafts string
	for _, l := range lists {
		if slices.Contains(l.Attrs, imap.MailboxAttrNoSelect) || slices.Contains(l.Attrs, imap.MailboxAttrNonExistent) {
			continue
		}
		exists[l.Mailbox] = true
		for _, a := range l.Attrs {
			switch a {
			case imap.MailboxAttrSent:
				special[l.Mailbox] = mailindex.SpecialSent
				if sent == "" {
					sent = l.Mailbox
				}
			case imap.MailboxAttrDrafts:
				special[l.Mailbox] = mailindex.SpecialDrafts
				if drafts == "" {
					drafts = l.Mailbox
				}
			}
		}
	}
	var targets []string
	if so.DraftsOnly {
		if drafts == "" || !cfg.IncludeDrafts {
			return nil, nil
		}
		targets = []string{drafts}
	} else {
		folders := cfg.IndexedFolders()
		if !exists[folders[0]] {
			return nil, fmt.Errorf("mailbox %s: %w", cfg.ID, ErrRootFolderMissing)
		}
		for _, f := range folders {
			if exists[f] && !slices.Contains(targets, f) {
				targets = append(targets, f)
			}
		}
		if cfg.IncludeSent && sent != "" && !slices.Contains(targets, sent) {
			targets = append(targets, sent)
		}
		if cfg.IncludeDrafts && drafts != "" && !slices.Contains(targets, drafts) {
			targets = append(targets, drafts)
		}
		// Folders no longer indexed or gone from the server leave.
		known, err := idx.Folders(ctx, cfg.ID)
		if err != nil {
			return nil, err
		}
		for _, f := range known {
			if !slices.Contains(targets, f.Path) {
				if err := idx.DeleteFolder(ctx, cfg.ID, f.Path); err != nil {
					return nil, err
				}
				rep.Removed += int(f.Indexed)
			}
		}
	}

	scopes, err := idx.FolderScopes(ctx, cfg.ID)
	if err != nil {
		return nil, err
	}
	useModSeq := c.Caps().Has(imap.CapCondStore)
	since := cfg.IndexedSince(ix.o.Now())
	var plans []*folderPlan
	for _, path := range targets {
		p := &folderPlan{path: path, special: special[path], report: &FolderReport{Path: path, SpecialUse: special[path]}}
		st, err := c.Status(path, &imap.StatusOptions{NumMessages: true, UIDNext: true, UIDValidity: true, NumUnseen: true}).Wait()
		if err != nil {
			return nil, fmt.Errorf("mailbox %s: folder status: %w", cfg.ID, err)
		}
		p.status = st
		sel, err := c.Select(path, &imap.SelectOptions{ReadOnly: true, CondStore: useModSeq}).Wait()
		if err != nil {
			return nil, fmt.Errorf("mailbox %s: examine folder: %w", cfg.ID, err)
		}
		// Drafts are indexed whatever their age.
		if p.special != mailindex.SpecialDrafts {
			p.since = since
		}
		prev, known, err := idx.Folder(ctx, cfg.ID, path)
		if err != nil {
			return nil, err
		}
		if known && prev.UIDValidity != sel.UIDValidity {
			if err := idx.ResetFolder(ctx, cfg.ID, path, sel.UIDValidity); err != nil {
				return nil, err
			}
			p.report.Reset = true
			prev.LastCompleteSync = time.Time{}
		}
		f := mailindex.Folder{MailboxID: cfg.ID, Path: path, SpecialUse: p.special, UIDValidity: sel.UIDValidity,
			UIDNext: prev.UIDNext, ServerMessages: -1, ServerUnseen: -1, LastCompleteSync: prev.LastCompleteSync}
		if st.NumMessages != nil {
			f.ServerMessages = int64(*st.NumMessages)
			p.report.ServerMessages = f.ServerMessages
		}
		if st.NumUnseen != nil {
			f.ServerUnseen = int64(*st.NumUnseen)
		}
		if err := idx.SaveFolder(ctx, f); err != nil {
			return nil, err
		}

		indexed, err := idx.UIDs(ctx, cfg.ID, path)
		if err != nil {
			return nil, err
		}
		var inScope map[uint32]bool
		var serverFlags map[uint32]mailindex.Flags
		if sel.NumMessages > 0 {
			if inScope, err = scopeUIDs(c, p.since); err != nil {
				return nil, fmt.Errorf("mailbox %s: search the folder: %w", cfg.ID, err)
			}
			prevSeq := scopes[path]
			if useModSeq && sel.HighestModSeq > 0 && !p.report.Reset && prevSeq.HighestModSeq > 0 &&
				prevSeq.ModSeqUIDValidity == sel.UIDValidity && prevSeq.HighestModSeq <= sel.HighestModSeq {
				p.report.ChangedSince = true
				if prevSeq.HighestModSeq < sel.HighestModSeq {
					serverFlags, err = readFlags(c, prevSeq.HighestModSeq)
				} else {
					serverFlags = map[uint32]mailindex.Flags{} // nothing changed
				}
			} else {
				serverFlags, err = readFlags(c, 0)
			}
			if err != nil {
				return nil, fmt.Errorf("mailbox %s: fetch flags: %w", cfg.ID, err)
			}
		}
		var gone []uint32
		changed := map[uint32]mailindex.Flags{}
		for uid, fl := range indexed {
			if !inScope[uid] {
				// Deleted on the server, or aged out of the window.
				gone = append(gone, uid)
				continue
			}
			if sf, ok := serverFlags[uid]; ok && sf != fl {
				changed[uid] = sf
			}
		}
		for uid := range inScope {
			if _, ok := indexed[uid]; !ok {
				p.newUIDs = append(p.newUIDs, uid)
			}
		}
		// Newest first, so the mails a user asks about arrive first.
		slices.Sort(p.newUIDs)
		slices.Reverse(p.newUIDs)
		if err := idx.RemoveUIDs(ctx, cfg.ID, path, gone); err != nil {
			return nil, err
		}
		if err := idx.UpdateFlags(ctx, cfg.ID, path, changed); err != nil {
			return nil, err
		}
		// The flags in the index are now those of the server at the
		// EXAMINE (or later): changes after it have a higher mod-sequence.
		var seq uint64
		if useModSeq {
			seq = sel.HighestModSeq
		}
		if err := idx.SaveFolderModSeq(ctx, cfg.ID, path, sel.UIDValidity, seq); err != nil {
			return nil, err
		}
		p.report.Removed, p.report.Flagged = len(gone), len(changed)
		rep.Removed += len(gone)
		plans = append(plans, p)
	}
	return plans, nil
}

func (ix *Indexer) fetchFolder(ctx context.Context, c *imapclient.Client, cfg Config, p *folderPlan, so SyncOptions, done *int, total int, start time.Time) error {
	idx := ix.o.Index
	if len(p.newUIDs) > 0 {
		if _, err := c.Select(p.path, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
			return fmt.Errorf("mailbox %s: examine folder: %w", cfg.ID, err)
		}
	}
	body := &imap.FetchItemBodySection{Peek: true}
	for i := 0; i < len(p.newUIDs); i += ix.o.BatchSize {
		batch := p.newUIDs[i:min(i+ix.o.BatchSize, len(p.newUIDs))]
		set := imap.UIDSet{}
		for _, u := range batch {
			set.AddNum(imap.UID(u))
		}
		msgs, err := c.Fetch(set, &imap.FetchOptions{UID: true, Flags: true, InternalDate: true, RFC822Size: true,
			BodySection: []*imap.FetchItemBodySection{body}}).Collect()
		if err != nil {
			return fmt.Errorf("mailbox %s: fetch mails: %w", cfg.ID, err)
		}
		keys := make([]string, 0, len(msgs))
		raws := make([][]byte, len(msgs))
		for j, m := range msgs {
			raws[j] = m.FindBodySection(body)
			keys = append(keys, ContentKey(raws[j]))
		}
		known, err := idx.KnownContentKeys(ctx, cfg.ID, keys)
		if err != nil {
			return err
		}
		items := make([]mailindex.Incoming, 0, len(msgs))
		for j, m := range msgs {
			if raws[j] == nil {
				continue // expunged meanwhile
			}
			it := mailindex.Incoming{UID: uint32(m.UID), Flags: flagsOf(m.Flags), Mail: mailindex.Mail{ContentKey: keys[j]}}
			if !known[keys[j]] {
				parsed, err := ParseMail(raws[j], m.InternalDate, ix.o.Parse)
				if err != nil {
					// An unreadable mail is still listed by its size and date.
					parsed = Parsed{Mail: mailindex.Mail{ContentKey: keys[j], Received: m.InternalDate, Size: m.RFC822Size,
						Importance: mailindex.ImportanceNormal}}
					// The parser's error may quote a header line: not logged.
					ix.o.Logger.Warn("mail could not be parsed; indexed without content", "mailbox_id", cfg.ID, "mailbox", cfg.Name, "uid", m.UID)
				}
				known[keys[j]] = true
				it.Mail, it.Chunks = parsed.Mail, parsed.Chunks
			}
			items = append(items, it)
		}
		if err := idx.AddBatch(ctx, cfg.ID, p.path, items); err != nil {
			return err
		}
		p.report.Added += len(items)
		*done += len(batch)
		if so.Progress != nil {
			el := ix.o.Now().Sub(start)
			rate := 0.0
			if el > 0 {
				rate = float64(*done) / el.Seconds()
			}
			so.Progress(Progress{Done: *done, Total: total, Folder: p.path, Elapsed: el, Rate: rate})
		}
	}
	f, _, err := idx.Folder(ctx, cfg.ID, p.path)
	if err != nil {
		return err
	}
	f.UIDNext = uint32(p.status.UIDNext)
	f.LastCompleteSync = ix.o.Now()
	if err := idx.SaveFolder(ctx, f); err != nil {
		return err
	}
	return idx.SaveFolderSince(ctx, cfg.ID, p.path, p.since)
}

// scopeUIDs returns the UIDs of the selected folder that belong in the
// index: every mail when since is zero, else the mails delivered on or
// after the day since (INTERNALDATE, compared by the server in its own
// time zone) or flagged or marked as drafts.
func scopeUIDs(c *imapclient.Client, since time.Time) (map[uint32]bool, error) {
	crit := &imap.SearchCriteria{}
	if !since.IsZero() {
		crit.Or = [][2]imap.SearchCriteria{{
			{Since: since},
			{Or: [][2]imap.SearchCriteria{{{Flag: []imap.Flag{imap.FlagFlagged}}, {Flag: []imap.Flag{imap.FlagDraft}}}}},
		}}
	}
	var opts *imap.SearchOptions
	if c.Caps().Has(imap.CapESearch) || c.Caps().Has(imap.CapIMAP4rev2) {
		// ESEARCH answers with ranges rather than every UID.
		opts = &imap.SearchOptions{ReturnAll: true}
	}
	data, err := c.UIDSearch(crit, opts).Wait()
	if err != nil {
		return nil, err
	}
	out := map[uint32]bool{}
	for _, u := range data.AllUIDs() {
		out[uint32(u)] = true
	}
	return out, nil
}

// readFlags reads the flags of the selected folder's mails: all of them
// when changedSince is zero, else only of those whose flags changed after
// that mod-sequence (CONDSTORE).
func readFlags(c *imapclient.Client, changedSince uint64) (map[uint32]mailindex.Flags, error) {
	all := imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}
	msgs, err := c.Fetch(all, &imap.FetchOptions{UID: true, Flags: true, ChangedSince: changedSince}).Collect()
	if err != nil {
		return nil, err
	}
	out := make(map[uint32]mailindex.Flags, len(msgs))
	for _, m := range msgs {
		out[uint32(m.UID)] = flagsOf(m.Flags)
	}
	return out, nil
}

// embedPending embeds every chunk of the mailbox not yet embedded with the
// embedder's model.
func (ix *Indexer) embedPending(ctx context.Context, mailboxID string, emb Embedder) (int, error) {
	n := 0
	var after int64
	for {
		pend, err := ix.o.Index.PendingChunks(ctx, mailboxID, emb.Model(), after, 64)
		if err != nil || len(pend) == 0 {
			return n, err
		}
		after = pend[len(pend)-1].ID
		texts := make([]string, len(pend))
		for i, p := range pend {
			texts[i] = p.Text
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return n, err
		}
		m := make(map[int64][]float32, len(pend))
		for i, p := range pend {
			m[p.ID] = vecs[i]
		}
		if err := ix.o.Index.SetEmbeddings(ctx, emb.Model(), m); err != nil {
			return n, err
		}
		n += len(pend)
	}
}

func flagsOf(fs []imap.Flag) mailindex.Flags {
	var f mailindex.Flags
	for _, x := range fs {
		switch x {
		case imap.FlagSeen:
			f.Seen = true
		case imap.FlagFlagged:
			f.Flagged = true
		case imap.FlagAnswered:
			f.Answered = true
		case imap.FlagDraft:
			f.Draft = true
		case imap.FlagDeleted:
			f.Deleted = true
		}
	}
	return f
}

// connect dials the server with the configured security. Plain text is
// only possible to a loopback address, checked again on the dialled
// connection.
func (ix *Indexer) connect(ctx context.Context, cfg Config) (*imapclient.Client, error) {
	dial := ix.o.DialContext
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		dial = d.DialContext
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := &deadlineConn{Conn: raw, timeout: ix.o.CommandTimeout}
	opts := &imapclient.Options{}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ix.o.TLSConfig != nil {
		tlsConf = ix.o.TLSConfig.Clone()
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = cfg.Host
	}
	opts.TLSConfig = tlsConf
	switch cfg.Security {
	case SecurityTLS:
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		c := imapclient.New(tc, opts)
		return c, waitGreeting(c)
	case SecurityStartTLS:
		c, err := imapclient.NewStartTLS(conn, opts)
		if err != nil {
			raw.Close()
			return nil, fmt.Errorf("STARTTLS failed, so no sign-in was sent (if the server offers no STARTTLS, use tls on its implicit-TLS port, usually 993): %w", err)
		}
		return c, nil
	case SecurityPlainLoopback:
		ta, ok := raw.RemoteAddr().(*net.TCPAddr)
		if !IsLoopbackHost(cfg.Host) || !ok || !ta.IP.IsLoopback() {
			raw.Close()
			return nil, fmt.Errorf("plain-loopback security reached a non-loopback address; refusing to send anything")
		}
		c := imapclient.New(conn, opts)
		return c, waitGreeting(c)
	}
	raw.Close()
	return nil, fmt.Errorf("unknown security %q", cfg.Security)
}

func waitGreeting(c *imapclient.Client) error {
	if err := c.WaitGreeting(); err != nil {
		c.Close()
		return err
	}
	return nil
}

// signIn makes exactly one sign-in attempt with the configured kind and no
// fallback to another mechanism.
func signIn(c *imapclient.Client, cfg Config, secret string) error {
	switch cfg.Auth {
	case AuthPassword:
		return c.Login(cfg.Username, secret).Wait()
	case AuthXOAuth2:
		m := &xoauth2{user: cfg.Username, token: secret}
		err := c.Authenticate(m)
		if err != nil && m.challenged {
			// The error challenge is the refusal, however the server then
			// ends the exchange (NO, or BAD for the dummy answer).
			return &tokenRefusedError{err: err}
		}
		return err
	}
	return fmt.Errorf("unknown sign-in kind %q", cfg.Auth)
}

// tokenRefusedError is an XOAUTH2 sign-in the server refused with an
// error challenge.
type tokenRefusedError struct{ err error }

func (e *tokenRefusedError) Error() string {
	return "the server refused the OAuth2 token: " + e.err.Error()
}

func (e *tokenRefusedError) Unwrap() error { return e.err }

// xoauth2 is the SASL XOAUTH2 mechanism (Google, Microsoft): one initial
// response; on failure the server sends a JSON error challenge, which the
// client must answer before the server ends with NO. The answer is a
// single 0x01 byte: go-imap sends an empty answer as "=", which Dovecot
// rejects as invalid base64 (BAD) instead of finishing the refusal.
type xoauth2 struct {
	user, token string
	challenged  bool
}

func (x *xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x *xoauth2) Next([]byte) ([]byte, error) {
	x.challenged = true
	return []byte{1}, nil
}

// deadlineConn gives every read and write a fresh deadline, so a server
// that stops answering ends the sync after the command timeout.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (d *deadlineConn) Read(p []byte) (int, error) {
	_ = d.Conn.SetReadDeadline(time.Now().Add(d.timeout))
	return d.Conn.Read(p)
}

func (d *deadlineConn) Write(p []byte) (int, error) {
	_ = d.Conn.SetWriteDeadline(time.Now().Add(d.timeout))
	return d.Conn.Write(p)
}

// ErrorKind describes a sync error for logs without its text, which may
// quote what the server said about a folder. Log this, not the error.
func ErrorKind(err error) string {
	var ie *imap.Error
	var refused *SignInRefusedError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	case errors.As(err, &refused):
		return "sign-in refused"
	case errors.As(err, &ie):
		return "server answered " + string(ie.Type) + " " + string(ie.Code)
	case errors.Is(err, ErrRootFolderMissing):
		return "root folder missing"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "network error"
	}
	return "sync error"
}
