package mail

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/store/mailindex"
	"github.com/stewardhq/steward/tool"
)

// IDs of the collection and its tools.
const (
	CollectionID = "mailboxes"
	SearchID     = "search_mails"
	ReadID       = "read_mail"
	CountID      = "count_mails"
)

// Argument names, shared by the schemas and the reading code.
const (
	ArgMailboxIDs     = "mailbox_ids"
	ArgQuery          = "query"
	ArgFrom           = "from"
	ArgTo             = "to"
	ArgAfter          = "after"
	ArgBefore         = "before"
	ArgIsUnread       = "is_unread"
	ArgIsFlagged      = "is_flagged"
	ArgIsEncrypted    = "is_encrypted"
	ArgHasAttachments = "has_attachments"
	ArgImportance     = "importance"
	ArgFolder         = "folder"
	ArgSpecialFolder  = "special_folder"
	ArgMailID         = "mail_id"
	ArgAttachment     = "attachment"
	ArgIncludeHeaders = "include_headers"
	ArgGroupBy        = "group_by"
)

// Limits of the tools.
const (
	// SearchBudget is the characters of mail JSON all mailboxes share in
	// one search_mails result.
	SearchBudget = 100_000
	// ResultsPerPage is how many mails one page of a mailbox holds.
	ResultsPerPage = 10
	// LastSearchPage caps how deep the model may page.
	LastSearchPage = 5
	// ReadPageChars is the size of a read_mail page in UTF-16 code units.
	ReadPageChars = 30_000
	MaxPassage    = 1_500
	MaxSubject    = 300
	MaxRecipients = 5
	MaxHeaders    = 20_000
	// MaxAddressesPerRole caps each address list of read_mail.
	MaxAddressesPerRole = 50
	MaxQueryChars       = 500
	MaxAddressFilter    = 200
	MaxFolderChars      = 500
)

// TimeLayout is how times are written in results.
const TimeLayout = "2006-01-02T15:04-07:00"

// Filter is the prompt-injection filter; *guard.Filter satisfies it.
type Filter interface {
	FilterBatch(ctx context.Context, texts []guard.Text) []guard.Outcome
}

// Options are what the mail tools need.
type Options struct {
	Service *mailbox.Service
	Guard   Filter
	// Location is the user's time zone for dates without an offset; nil
	// means UTC.
	Location *time.Location
	Logger   *slog.Logger
}

func (o Options) loc() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

func (o Options) log() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// Collection declares the mailboxes collection: the three tools in their
// order, minimum VERY_LOW.
func Collection() registry.Collection {
	return registry.Collection{
		ID:                CollectionID,
		ToolIDs:           []string{SearchID, ReadID, CountID},
		MinimumConfidence: policy.VeryLow,
		Description:       "Search, read and count the user's mails in the local index of their mailboxes.",
	}
}

// Tools returns the three mail tools.
func Tools(o Options) []tool.Tool {
	return []tool.Tool{NewSearch(o), NewRead(o), NewCount(o)}
}

// base is what the three tools share.
type base struct {
	tool.Base
	o Options
}

// IsAvailable is true while the mailbox preview is on and a mailbox exists.
func (b base) IsAvailable() bool { return b.o.Service != nil && b.o.Service.AreMailboxesEnabled() }

// ReturnsUntrustedContent is true: mails are written by strangers.
func (base) ReturnsUntrustedContent() bool { return true }

// SensitiveArguments are masked in traces: they may quote mail.
func (base) SensitiveArguments() []string {
	return []string{ArgQuery, ArgFrom, ArgTo, ArgFolder}
}

// readable re-checks the mailboxes the provider may read, for each call.
func (b base) readable(ec tool.ExecContext) ([]mailbox.Readable, error) {
	if len(b.o.Service.Mailboxes()) == 0 {
		return nil, tool.Blocked("No mailbox is configured: add a mailbox to your data sources first (steward mail add).")
	}
	rs, refused := b.o.Service.Check(ec.ProviderConfidence)
	if len(rs) == 0 {
		why := noMailboxReadable(ec.ProviderConfidence, refused)
		return nil, tool.Blocked(strings.ToUpper(why[:1]) + why[1:])
	}
	return rs, nil
}

// offerable returns the mailboxes the provider may read for a function
// offer, or a registry.NothingToOffer error naming each mailbox and the
// levels in the way: the offer, the call and `steward tools` share
// mailbox.Service.Check.
func (b base) offerable(confidence policy.Confidence) ([]mailbox.Readable, error) {
	rs, refused := b.o.Service.Check(confidence)
	if len(rs) == 0 {
		return nil, registry.NothingToOffer(noMailboxReadable(confidence, refused))
	}
	return rs, nil
}

// noMailboxReadable says why no mailbox may be read by a provider at
// confidence c, one reason per mailbox.
func noMailboxReadable(c policy.Confidence, refused []mailbox.Unreadable) string {
	if len(refused) == 0 {
		return "no mailbox is configured"
	}
	reasons := make([]string, len(refused))
	for i, u := range refused {
		reasons[i] = u.Reason
	}
	return fmt.Sprintf("no mailbox may be read by a provider with confidence %s: %s.", c, strings.Join(reasons, "; "))
}

// mailboxList describes the readable mailboxes for a function description.
func mailboxList(rs []mailbox.Readable, paging bool) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n- id %q: %s", r.Config.ID, r.Config.Name)
		if paging {
			fmt.Fprintf(&b, "; %d results per page, last page %d", ResultsPerPage, LastSearchPage)
		}
		switch {
		case r.EmbeddingRefused != "":
			b.WriteString("; searched by words only (its embedding provider may not receive its queries)")
		case r.WordsOnly:
			b.WriteString("; searched by words only (no embedding provider)")
		}
	}
	return b.String()
}

func readableIDs(rs []mailbox.Readable) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.Config.ID
	}
	return ids
}

// conditions are the parsed filter arguments with what the result echoes.
type conditions struct {
	filter    mailindex.Filter
	mailboxes []mailbox.Readable
	echo      map[string]any
}

// conditionArgs are the argument names conditions reads.
var conditionArgs = []string{ArgMailboxIDs, ArgFrom, ArgTo, ArgAfter, ArgBefore, ArgIsUnread, ArgIsFlagged, ArgIsEncrypted,
	ArgHasAttachments, ArgImportance, ArgFolder, ArgSpecialFolder}

func addConditions(s *tool.Schema, ids []string) *tool.Schema {
	if len(ids) > 0 {
		s.OptionalStringArray(ArgMailboxIDs, "IDs of the mailboxes to use; leave out for all.", ids...)
	} else {
		s.OptionalStringArray(ArgMailboxIDs, "IDs of the mailboxes to use; leave out for all.")
	}
	return s.
		OptionalString(ArgFrom, "Part of the sender's address or name.").
		OptionalString(ArgTo, "Part of a recipient's address or name (To, Cc or Bcc).").
		OptionalString(ArgAfter, "Received at or after this date (yyyy-MM-dd) or time (yyyy-MM-ddTHH:mm, optionally with Z or an offset).").
		OptionalString(ArgBefore, "Received before this date or time, written like after.").
		OptionalBoolean(ArgIsUnread, "Only unread (true) or only read (false) mails.").
		OptionalBoolean(ArgIsFlagged, "Only flagged (true) or only unflagged (false) mails.").
		OptionalBoolean(ArgIsEncrypted, "Only encrypted (true) or only unencrypted (false) mails.").
		OptionalBoolean(ArgHasAttachments, "Only mails with (true) or without (false) attachments.").
		OptionalEnum(ArgImportance, "Only mails of this importance; unmarked mails are normal.", "low", "normal", "high").
		OptionalString(ArgFolder, "Exact folder path, without subfolders.").
		OptionalEnum(ArgSpecialFolder, "The sent or drafts folder, as the server marks it. Not together with folder.", mailindex.SpecialSent, mailindex.SpecialDrafts)
}

func argError(name, msg string) error { return &tool.ArgumentError{Argument: name, Message: msg} }

func readConditions(a *tool.Args, rs []mailbox.Readable, loc *time.Location) (conditions, error) {
	c := conditions{echo: map[string]any{}}
	ids, ok, err := a.OptionalChoices(ArgMailboxIDs, readableIDs(rs), "to use every mailbox listed")
	if err != nil {
		return c, err
	}
	if ok {
		for _, r := range rs {
			for _, id := range ids {
				if r.Config.ID == id {
					c.mailboxes = append(c.mailboxes, r)
				}
			}
		}
	} else {
		c.mailboxes = rs
	}
	addr := tool.StringRule{MaxChars: MaxAddressFilter, SingleLine: true}
	if v, ok, err := a.OptionalString(ArgFrom, addr, "to accept every sender"); err != nil {
		return c, err
	} else if ok {
		c.filter.From, c.echo[ArgFrom] = v, v
	}
	if v, ok, err := a.OptionalString(ArgTo, addr, "to accept every recipient"); err != nil {
		return c, err
	} else if ok {
		c.filter.To, c.echo[ArgTo] = v, v
	}
	after, okA, err := a.OptionalDate(ArgAfter, loc, "to search from the oldest mail on")
	if err != nil {
		return c, err
	}
	before, okB, err := a.OptionalDate(ArgBefore, loc, "to search up to the newest mail")
	if err != nil {
		return c, err
	}
	if okA && okB && !after.Time.Before(before.Time) {
		return c, argError(ArgAfter, fmt.Sprintf("Argument '%s' (%s) must be earlier than '%s' (%s). Leaving either out is always possible.",
			ArgAfter, after.Time.In(loc).Format(TimeLayout), ArgBefore, before.Time.In(loc).Format(TimeLayout)))
	}
	if okA {
		c.filter.After = after.Time
		c.echo["received_at_or_after"] = after.Time.In(loc).Format(TimeLayout)
	}
	if okB {
		c.filter.Before = before.Time
		c.echo["received_before"] = before.Time.In(loc).Format(TimeLayout)
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{ArgIsUnread, &c.filter.Unread}, {ArgIsFlagged, &c.filter.Flagged}, {ArgIsEncrypted, &c.filter.Encrypted}, {ArgHasAttachments, &c.filter.HasAttachments}} {
		v, ok, err := a.OptionalBool(b.name, "to accept both")
		if err != nil {
			return c, err
		}
		if ok {
			*b.dst = &v
			c.echo[b.name] = v
		}
	}
	if v, ok, err := a.OptionalChoice(ArgImportance, []string{"low", "normal", "high"}, "to accept every importance"); err != nil {
		return c, err
	} else if ok {
		c.filter.Importance, c.echo[ArgImportance] = v, v
	}
	folder, okF, err := a.OptionalString(ArgFolder, tool.StringRule{MaxChars: MaxFolderChars, SingleLine: true}, "to search every indexed folder")
	if err != nil {
		return c, err
	}
	special, okS, err := a.OptionalChoice(ArgSpecialFolder, []string{mailindex.SpecialSent, mailindex.SpecialDrafts}, "to search every indexed folder")
	if err != nil {
		return c, err
	}
	if okF && okS {
		return c, argError(ArgFolder, fmt.Sprintf("Arguments '%s' and '%s' cannot be used together: give one of them. Leaving both out searches every indexed folder.", ArgFolder, ArgSpecialFolder))
	}
	if okF {
		c.filter.Folder, c.echo[ArgFolder] = folder, folder
	}
	if okS {
		c.filter.SpecialUse, c.echo[ArgSpecialFolder] = special, special
	}
	return c, nil
}

// coverageIssues words what the model should know about a mailbox's index.
func coverageIssues(cov mailbox.Coverage, loc *time.Location) []string {
	var out []string
	if cov.Unknown {
		out = append(out, "Coverage unknown: this mailbox has not been synced yet, so its index may be empty.")
	}
	if cov.FirstSyncRunning && !cov.Unknown {
		out = append(out, "The first sync of this mailbox is still running: results may be incomplete.")
	}
	if !cov.SignInRefusedAt.IsZero() {
		out = append(out, "The mail server refused the sign-in at "+cov.SignInRefusedAt.In(loc).Format(TimeLayout)+"; the index is not updated until the user signs in again.")
	}
	if cov.PendingRemovals > 0 {
		out = append(out, fmt.Sprintf("%d mails deleted on the server are still to be removed from the index.", cov.PendingRemovals))
	}
	return out
}

// scopeIssues says, when a mailbox indexes only mails since a day and the
// conditions reach further back (or have no start), that older mails were
// not looked at; verb is "searched" or "counted".
func scopeIssues(cov mailbox.Coverage, f mailindex.Filter, verb string) []string {
	if cov.IndexesAllMails || cov.IndexedSince.IsZero() {
		return nil
	}
	if !f.After.IsZero() && !f.After.Before(cov.IndexedSince) {
		return nil
	}
	return []string{"This mailbox indexes only the mails delivered since " + cov.IndexedSince.UTC().Format(time.DateOnly) +
		" (older ones only when flagged or drafts): older mails were not " + verb + ", so do not conclude that none exist."}
}

func refreshIssues(r mailbox.Refresh, cov mailbox.Coverage, loc *time.Location) []string {
	switch {
	case r.SyncRequested:
		return []string{"A sync of the drafts was requested because they were last synced a minute ago or longer; newer drafts may appear shortly."}
	case r.AutoRefreshOff:
		s := "Automatic refresh is off for this mailbox: the drafts may be out of date"
		if !cov.LastCompleteSync.IsZero() {
			s += " (last complete sync " + cov.LastCompleteSync.In(loc).Format(TimeLayout) + ")"
		}
		return []string{s + "."}
	}
	return nil
}

func unknownFolderIssue() string {
	return "This mailbox has no folder with that exact path, so nothing was searched: choose one from 'folders'."
}

// requirements collects what contributing mailboxes demand: the highest
// confidence and the strictest outbound restriction, the first mailbox
// demanding it named.
type requirements struct {
	confidence policy.Confidence
	outbound   policy.OutboundRequirement
}

func (q *requirements) add(r mailbox.Readable) {
	q.confidence = policy.Max(q.confidence, r.Config.RequiredConfidence)
	q.outbound = q.outbound.Tighten(policy.OutboundRequirement{Set: true, Restriction: r.Outbound, MailboxID: r.Config.ID, MailboxName: r.Config.Name})
}

func (q *requirements) apply(res *tool.Result) {
	res.RequiredConfidence = q.confidence
	res.RequiredOutbound = q.outbound
}

// source is the source entry of a mail.
func source(mailboxID, mailID, subject, sender string, received time.Time, loc *time.Location) tool.Source {
	if subject == "" {
		subject = "(no subject)"
	}
	title := "Mail: " + subject
	if sender != "" {
		title += " — " + sender
	}
	if !received.IsZero() {
		title += ", " + received.In(loc).Format("2006-01-02")
	}
	return tool.Source{Title: title, URL: "mailbox://" + mailboxID + "/" + mailID}
}

// batch gathers texts for one guard call and hands back their outcomes.
type batch struct {
	texts []guard.Text
	dests []*string
}

func (b *batch) add(src guard.Source, field string, dst *string) {
	if strings.TrimSpace(*dst) == "" {
		return
	}
	b.texts = append(b.texts, guard.Text{Source: src, Field: field, Text: *dst})
	b.dests = append(b.dests, dst)
}

// run filters every gathered text in one call and writes the results back.
func (b *batch) run(ctx context.Context, f Filter) {
	if f == nil || len(b.texts) == 0 {
		return
	}
	outs := f.FilterBatch(ctx, b.texts)
	for i, o := range outs {
		if i < len(b.dests) {
			*b.dests[i] = o.Text
		}
	}
}

func mailSource(r mailbox.Readable) guard.Source {
	return guard.Source{Kind: guard.MailContent, Label: r.Config.Name}
}

// cut shortens s to max characters, never inside a character.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max])
}

// pageOf returns page (from 1) of s in pages of size UTF-16 code units,
// never splitting a surrogate pair: a border that would fall inside a pair
// moves one unit back, so the pair opens the next page. lastPage is
// max(1, ⌈len/size⌉).
func pageOf(s string, page, size int) (text string, lastPage int) {
	total := tool.UTF16Len(s)
	lastPage = max(1, (total+size-1)/size)
	// Rune start offsets decide where a border may fall.
	inside := map[int]bool{}
	pos := 0
	for _, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if w == 2 {
			inside[pos+1] = true
		}
		pos += w
	}
	border := func(b int) int {
		if inside[b] {
			return b - 1
		}
		return b
	}
	lo, hi := border((page-1)*size), border(page*size)
	var b strings.Builder
	pos = 0
	for _, r := range s {
		if pos >= lo && pos < hi {
			b.WriteRune(r)
		}
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		pos += w
	}
	return b.String(), lastPage
}

// addressString writes addresses for a filter batch and for JSON.
func addressString(a mailindex.Address) string { return a.String() }

func senderOf(s mailindex.Summary) string {
	if len(s.Addresses.From) > 0 {
		return addressString(s.Addresses.From[0])
	}
	return ""
}

func locationFacts(ls []mailindex.Location) (folders []string, unread, flagged, answered bool, special string) {
	unread = true
	for _, l := range ls {
		folders = append(folders, l.Folder)
		if l.Flags.Seen {
			unread = false
		}
		flagged = flagged || l.Flags.Flagged
		answered = answered || l.Flags.Answered
		if special == "" {
			special = l.SpecialUse
		}
	}
	return
}
