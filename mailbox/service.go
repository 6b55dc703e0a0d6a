package mailbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
)

// DraftsRefreshAge is how old the last complete sync of the drafts folder
// may be before a search of drafts requests a new one.
const DraftsRefreshAge = time.Minute

// SyncRequester starts a sync in the background, e.g. of the drafts when a
// tool asks for them.
type SyncRequester interface {
	RequestSync(cfg Config, draftsOnly bool)
}

// ServiceOptions configure the retrieval service.
type ServiceOptions struct {
	Index *mailindex.Index
	// Mailboxes returns the configured mailboxes; it is asked on every
	// call, so settings changes apply at once.
	Mailboxes func() []Config
	Policy    OrgPolicy
	// Scheme gives the embedding providers their confidence.
	Scheme policy.SchemeConfig
	// Embedders builds the query embedder of a mailbox; nil means every
	// mailbox is searched by words only.
	Embedders EmbedderFactory
	// Sync is nil when automatic refresh is off.
	Sync SyncRequester
	// Enabled reports whether the mailbox preview features are on; nil
	// means on.
	Enabled func() bool
	Logger  *slog.Logger
	Now     func() time.Time
}

// Service reads the local mail index for the tools and the CLI. It never
// contacts a mail server.
type Service struct {
	o ServiceOptions
}

// NewService returns the retrieval service.
func NewService(o ServiceOptions) *Service {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mailboxes == nil {
		o.Mailboxes = func() []Config { return nil }
	}
	return &Service{o: o}
}

// Index returns the index the service reads.
func (s *Service) Index() *mailindex.Index { return s.o.Index }

// Mailboxes returns every configured mailbox ordered by number, then ID.
func (s *Service) Mailboxes() []Config {
	ms := append([]Config(nil), s.o.Mailboxes()...)
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Number != ms[j].Number {
			return ms[i].Number < ms[j].Number
		}
		return ms[i].ID < ms[j].ID
	})
	return ms
}

// AreMailboxesEnabled reports whether the preview is on and at least one
// mailbox is configured. It is cheap.
func (s *Service) AreMailboxesEnabled() bool {
	if s.o.Enabled != nil && !s.o.Enabled() {
		return false
	}
	return len(s.o.Mailboxes()) > 0
}

// Readable is a mailbox the current provider may read, with what the
// policy demands of it.
type Readable struct {
	Config Config
	// Outbound is the mailbox's restriction after the organization's
	// minimum.
	Outbound policy.Restriction
	// WordsOnly is true when the mailbox is searched by words only: it has
	// no embedding provider, or its embedding provider may not receive its
	// queries (EmbeddingRefused says why).
	WordsOnly bool
	// EmbeddingRefused is set when the mailbox has an embedding provider
	// that does not meet its level; nothing is sent to it.
	EmbeddingRefused string
}

// Unreadable is a mailbox a provider may not read, and why.
type Unreadable struct {
	Config Config
	// Reason names the mailbox and, where levels decide, both levels. It
	// never holds a secret or mail data.
	Reason string
}

// Readable returns the mailboxes a chat provider at level chat may read,
// ordered by number then ID: open (VERY_LOW..HIGH), at or below the
// provider's level, on a server the organization allows, and with a
// working embedding provider when one is configured. An embedding provider
// below the mailbox's level receives nothing: the mailbox is searched by
// words only (see EmbeddingRefusal).
func (s *Service) Readable(chat policy.Confidence) []Readable {
	rs, _ := s.Check(chat)
	return rs
}

// Check is Readable together with the reason for every mailbox left out,
// in the same order: the tools, their offer and `steward tools` decide
// with this one function.
func (s *Service) Check(chat policy.Confidence) ([]Readable, []Unreadable) {
	var out []Readable
	var refused []Unreadable
	for _, c := range s.Mailboxes() {
		if why := s.refusal(c, chat); why != "" {
			refused = append(refused, Unreadable{Config: c, Reason: why})
			continue
		}
		r := Readable{Config: c, Outbound: s.o.Policy.Outbound(c), WordsOnly: c.Embedding == nil}
		if err := c.EmbeddingRefusal(s.o.Scheme); err != nil {
			r.WordsOnly, r.EmbeddingRefused = true, err.Error()
		}
		out = append(out, r)
	}
	return out, refused
}

// refusal says why a provider at level chat may not read mailbox c, or "".
func (s *Service) refusal(c Config, chat policy.Confidence) string {
	name := fmt.Sprintf("mailbox '%s' (%s)", c.Name, c.ID)
	switch {
	case c.Closed():
		return fmt.Sprintf("%s requires %s, which closes it to every provider; set a level from VERY_LOW to HIGH", name, c.RequiredConfidence)
	case chat < c.RequiredConfidence:
		return fmt.Sprintf("%s requires providers with confidence %s or higher; the provider has %s", name, c.RequiredConfidence, chat)
	case !s.o.Policy.Servers.Allows(c.Host):
		return fmt.Sprintf("the organization does not allow the mail server of %s", name)
	}
	if c.Embedding != nil {
		if err := c.Embedding.Validate(); err != nil {
			return fmt.Sprintf("the embedding provider of %s is not configured correctly: %v", name, err)
		}
		if s.o.Embedders == nil {
			return fmt.Sprintf("the embedding provider of %s cannot be used in this installation", name)
		}
	}
	return ""
}

// Coverage says how complete a mailbox's index is.
type Coverage struct {
	// Unknown is true when the mailbox was never synced.
	Unknown bool `json:"unknown"`
	// FirstSyncRunning is true while a folder has not completed a sync.
	FirstSyncRunning bool `json:"first_sync_running"`
	// LastCompleteSync is the oldest completed sync over the folders.
	LastCompleteSync time.Time `json:"last_complete_sync,omitzero"`
	// SignInRefusedAt is set after a refused sign-in.
	SignInRefusedAt time.Time `json:"sign_in_refused_at,omitzero"`
	PendingRemovals int64     `json:"pending_removals"`
	// IndexesAllMails is true when neither the mailbox's setting nor the
	// last sync of any of its folders limited the index by age.
	IndexesAllMails bool `json:"indexes_all_mails"`
	// IndexedSince is otherwise the first day (a UTC date) from which every
	// mail is indexed; flagged mails and drafts of any age are indexed too.
	IndexedSince time.Time `json:"indexed_since,omitzero"`
	// Folders are the indexed folders; Indexed is counted only by Status
	// (-1 otherwise).
	Folders []mailindex.Folder `json:"folders"`
}

// Coverage reads a mailbox's coverage from the index.
func (s *Service) Coverage(ctx context.Context, mailboxID string) (Coverage, error) {
	var c Coverage
	fs, err := s.o.Index.FolderStates(ctx, mailboxID)
	if err != nil {
		return c, err
	}
	c.Folders = fs
	c.Unknown = len(fs) == 0
	scopes, err := s.o.Index.FolderScopes(ctx, mailboxID)
	if err != nil {
		return c, err
	}
	for _, sc := range scopes {
		if sc.Since.After(c.IndexedSince) {
			c.IndexedSince = sc.Since
		}
	}
	c.IndexesAllMails = c.IndexedSince.IsZero()
	for i, f := range fs {
		if f.LastCompleteSync.IsZero() {
			c.FirstSyncRunning = true
		} else if i == 0 || c.LastCompleteSync.IsZero() || f.LastCompleteSync.Before(c.LastCompleteSync) {
			c.LastCompleteSync = f.LastCompleteSync
		}
	}
	if at, _, ok, err := s.o.Index.SignInRefused(ctx, mailboxID); err != nil {
		return c, err
	} else if ok {
		c.SignInRefusedAt = at
	}
	if c.PendingRemovals, err = s.o.Index.PendingRemovals(ctx, mailboxID); err != nil {
		return c, err
	}
	return c, nil
}

// coverageOf reads a mailbox's coverage and applies its max age: until
// the next sync, the index holds every mail since the later of the window
// the syncs applied and the window the setting asks for now.
func (s *Service) coverageOf(ctx context.Context, cfg Config) (Coverage, error) {
	c, err := s.Coverage(ctx, cfg.ID)
	if err != nil {
		return c, err
	}
	if since := cfg.IndexedSince(s.o.Now()); !since.IsZero() {
		c.IndexesAllMails = false
		if since.After(c.IndexedSince) {
			c.IndexedSince = since
		}
	}
	return c, nil
}

// FolderCheck is the answer for a named folder.
type FolderCheck struct {
	// Unknown is true when the mailbox has no such folder; Known lists up
	// to 50 folders to choose from.
	Unknown bool
	Known   []string
}

// MaxListedFolders is how many folders an unknown-folder answer lists.
const MaxListedFolders = 50

func checkFolder(cov Coverage, f mailindex.Filter) FolderCheck {
	if f.Folder == "" {
		return FolderCheck{}
	}
	var known []string
	for _, x := range cov.Folders {
		if x.Path == f.Folder {
			return FolderCheck{}
		}
		if len(known) < MaxListedFolders {
			known = append(known, x.Path)
		}
	}
	return FolderCheck{Unknown: true, Known: known}
}

// Refresh says what a request of drafts did about their freshness.
type Refresh struct {
	SyncRequested  bool
	AutoRefreshOff bool
}

// refreshDrafts requests a drafts sync when drafts are asked for and their
// last complete sync is a minute old or more; never after a refused
// sign-in.
func (s *Service) refreshDrafts(cfg Config, cov Coverage, f mailindex.Filter) Refresh {
	var drafts *mailindex.Folder
	for i, x := range cov.Folders {
		if x.SpecialUse == mailindex.SpecialDrafts {
			drafts = &cov.Folders[i]
		}
	}
	// A mailbox that does not index its drafts has nothing to refresh.
	if drafts == nil {
		return Refresh{}
	}
	asked := f.SpecialUse == mailindex.SpecialDrafts || f.Folder == drafts.Path
	if !asked || !cov.SignInRefusedAt.IsZero() {
		return Refresh{}
	}
	if !drafts.LastCompleteSync.IsZero() && s.o.Now().Sub(drafts.LastCompleteSync) < DraftsRefreshAge {
		return Refresh{}
	}
	if s.o.Sync == nil || cfg.DisableAutoRefresh {
		return Refresh{AutoRefreshOff: true}
	}
	s.o.Sync.RequestSync(cfg, true)
	return Refresh{SyncRequested: true}
}

// SearchRequest is one page of a search in one mailbox.
type SearchRequest struct {
	Filter mailindex.Filter
	// Query is empty to list the mails meeting the filter, newest first.
	Query string
	// Page starts at 1; PerPage is the page size.
	Page, PerPage int
}

// Found is one mail of a result page.
type Found struct {
	Mail mailindex.Summary
	// Passage is the best matching chunk for a query; empty for a list.
	Passage string
}

// SearchResult is one page of one mailbox.
type SearchResult struct {
	Mails   []Found
	HasMore bool
	// WordsOnly is true when the search ran by words only: the mailbox has
	// no embedding provider, or it failed for this query (EmbeddingFailed).
	WordsOnly       bool
	EmbeddingFailed bool
	Folder          FolderCheck
	Coverage        Coverage
	Refresh         Refresh
}

// WindowFactor is how many chunks per result each search channel reads.
const WindowFactor = 4

// Search runs one page of a search in a readable mailbox.
func (s *Service) Search(ctx context.Context, r Readable, req SearchRequest) (SearchResult, error) {
	var res SearchResult
	if req.Page < 1 || req.PerPage < 1 {
		return res, fmt.Errorf("mailbox search: page %d and page size %d must be at least 1", req.Page, req.PerPage)
	}
	id := r.Config.ID
	cov, err := s.coverageOf(ctx, r.Config)
	if err != nil {
		return res, err
	}
	res.Coverage = cov
	res.Folder = checkFolder(cov, req.Filter)
	if res.Folder.Unknown {
		return res, nil
	}
	res.Refresh = s.refreshDrafts(r.Config, cov, req.Filter)
	idx := s.o.Index
	if req.Query == "" {
		ids, more, err := idx.List(ctx, id, req.Filter, (req.Page-1)*req.PerPage, req.PerPage)
		if err != nil {
			return res, err
		}
		res.HasMore = more
		sums, err := idx.Summaries(ctx, id, ids)
		if err != nil {
			return res, err
		}
		for _, m := range sums {
			res.Mails = append(res.Mails, Found{Mail: m})
		}
		return res, nil
	}

	window := req.Page * req.PerPage * WindowFactor
	var words, vec []mailindex.Hit
	var wordsErr, vecErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		words, wordsErr = idx.SearchWords(ctx, id, req.Filter, req.Query, window)
	}()
	res.WordsOnly = r.WordsOnly
	if !r.WordsOnly {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vec, vecErr = s.vectorChannel(ctx, r.Config, req, window)
		}()
	}
	wg.Wait()
	if wordsErr != nil {
		return res, wordsErr
	}
	if vecErr != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		// The provider failed: answer by words and say so. The error may
		// name the provider, never mail data.
		s.o.Logger.Warn("embedding the query failed; searching by words only", "mailbox_id", id, "mailbox", r.Config.Name, "error", vecErr)
		res.WordsOnly, res.EmbeddingFailed = true, true
		vec = nil
	}
	fused := mailindex.Fuse(vec, words)
	from, to := (req.Page-1)*req.PerPage, req.Page*req.PerPage
	res.HasMore = len(fused) > to || len(words) >= window || len(vec) >= window
	if from >= len(fused) {
		return res, nil
	}
	page := fused[from:min(to, len(fused))]
	ids := make([]string, len(page))
	chunks := make([]int64, len(page))
	for i, h := range page {
		ids[i], chunks[i] = h.MailID, h.ChunkID
	}
	sums, err := idx.Summaries(ctx, id, ids)
	if err != nil {
		return res, err
	}
	texts, err := idx.ChunkTexts(ctx, chunks)
	if err != nil {
		return res, err
	}
	byID := map[string]mailindex.Summary{}
	for _, m := range sums {
		byID[m.ID] = m
	}
	for _, h := range page {
		if m, ok := byID[h.MailID]; ok {
			res.Mails = append(res.Mails, Found{Mail: m, Passage: texts[h.ChunkID]})
		}
	}
	return res, nil
}

func (s *Service) vectorChannel(ctx context.Context, cfg Config, req SearchRequest, window int) ([]mailindex.Hit, error) {
	emb, err := s.o.Embedders(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if emb == nil {
		return nil, errors.New("no embedder for the mailbox's embedding provider")
	}
	vs, err := emb.Embed(ctx, []string{req.Query})
	if err != nil {
		return nil, err
	}
	return s.o.Index.SearchVector(ctx, cfg.ID, req.Filter, emb.Model(), vs[0], window)
}

// CountResult is a count in one mailbox.
type CountResult struct {
	mailindex.Count
	Folder   FolderCheck
	Coverage Coverage
	Refresh  Refresh
}

// MaxGroups is how many groups a count shows.
const MaxGroups = 20

// Count counts the mails meeting f in a readable mailbox, grouped by
// mailindex.GroupFolder or GroupSender on request.
func (s *Service) Count(ctx context.Context, r Readable, f mailindex.Filter, groupBy string) (CountResult, error) {
	var res CountResult
	cov, err := s.coverageOf(ctx, r.Config)
	if err != nil {
		return res, err
	}
	res.Coverage = cov
	res.Folder = checkFolder(cov, f)
	if res.Folder.Unknown {
		return res, nil
	}
	res.Refresh = s.refreshDrafts(r.Config, cov, f)
	res.Count, err = s.o.Index.Count(ctx, r.Config.ID, f, groupBy, MaxGroups)
	return res, err
}

// Find looks a mail up by ID in the given (readable) mailboxes only.
func (s *Service) Find(ctx context.Context, in []Readable, mailID string) (Readable, *mailindex.Mail, error) {
	for _, r := range in {
		m, err := s.o.Index.Mail(ctx, r.Config.ID, mailID)
		if errors.Is(err, mailindex.ErrNotFound) {
			continue
		}
		if err != nil {
			return Readable{}, nil, err
		}
		if len(m.Locations) == 0 {
			continue // pending removal
		}
		return r, m, nil
	}
	return Readable{}, nil, mailindex.ErrNotFound
}

// ReplyTarget returns the ID of the indexed mail m replies to, if any.
func (s *Service) ReplyTarget(ctx context.Context, mailboxID string, m *mailindex.Mail) (string, bool, error) {
	return s.o.Index.MailIDByMessageID(ctx, mailboxID, m.InReplyTo)
}

// Status is what `steward mail status` shows of a mailbox.
type Status struct {
	Config   Config          `json:"mailbox"`
	Coverage Coverage        `json:"coverage"`
	Stats    mailindex.Stats `json:"stats"`
	// EmbeddingModel is empty for a words-only mailbox.
	EmbeddingModel string `json:"embedding_model,omitempty"`
	// EmbeddingRefused says why the mailbox is searched by words only
	// although it has an embedding provider: the provider does not meet
	// the mailbox's level, so its mails and queries never go there.
	EmbeddingRefused string `json:"embedding_refused,omitempty"`
}

// Status reads a mailbox's status from the index.
func (s *Service) Status(ctx context.Context, cfg Config) (Status, error) {
	st := Status{Config: cfg}
	if err := cfg.EmbeddingRefusal(s.o.Scheme); err != nil {
		st.EmbeddingRefused = err.Error()
	}
	var err error
	if st.Coverage, err = s.coverageOf(ctx, cfg); err != nil {
		return st, err
	}
	// Status shows per folder how much is indexed: count the locations.
	if st.Coverage.Folders, err = s.o.Index.Folders(ctx, cfg.ID); err != nil {
		return st, err
	}
	if st.Stats, err = s.o.Index.Stats(ctx, cfg.ID); err != nil {
		return st, err
	}
	if cfg.Embedding != nil {
		st.EmbeddingModel = cfg.Embedding.Model
		_, st.Stats.Embedded, err = s.o.Index.EmbeddingCoverage(ctx, cfg.ID, cfg.Embedding.Model)
	}
	return st, err
}

// BackgroundSync runs requested syncs in the background, one at a time per
// mailbox; a request while one runs is dropped.
type BackgroundSync struct {
	ctx     context.Context
	ix      *Indexer
	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
}

// NewBackgroundSync returns a requester whose syncs end with ctx.
func NewBackgroundSync(ctx context.Context, ix *Indexer) *BackgroundSync {
	return &BackgroundSync{ctx: ctx, ix: ix, running: map[string]bool{}}
}

// RequestSync starts a sync of cfg unless one is running.
func (b *BackgroundSync) RequestSync(cfg Config, draftsOnly bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running[cfg.ID] {
		return
	}
	b.running[cfg.ID] = true
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		if _, err := b.ix.Sync(b.ctx, cfg, SyncOptions{DraftsOnly: draftsOnly}); err != nil {
			b.ix.o.Logger.Warn("background mailbox sync failed", "mailbox_id", cfg.ID, "mailbox", cfg.Name, "error_kind", ErrorKind(err))
		}
		b.mu.Lock()
		delete(b.running, cfg.ID)
		b.mu.Unlock()
	}()
}

// Wait waits for the running syncs.
func (b *BackgroundSync) Wait() { b.wg.Wait() }
