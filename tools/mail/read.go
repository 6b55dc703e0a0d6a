package mail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
	"github.com/stewardhq/steward/tool"
)

// Read is read_mail.
type Read struct{ base }

const readDescription = "Reads one mail found by search_mails: its text in pages of 30,000 characters, one attachment by its number, " +
	"and the header block on request. Names the mail it replies to when that one is in the index."

// NewRead returns read_mail.
func NewRead(o Options) *Read {
	params := tool.NewSchema().
		RequiredString(ArgMailID, "The mail_id from search_mails.").
		OptionalInteger(ArgAttachment, "The number of an attachment to read instead of the text, from 1.").
		OptionalBoolean(ArgIncludeHeaders, "Also return the header block.").
		OptionalInteger(tool.PageArgument, tool.PageDescription).MustBuild()
	return &Read{base{Base: tool.Base{Def: tool.Definition{
		ID:                ReadID,
		Function:          tool.Function{Name: ReadID, Description: readDescription, Parameters: params},
		VisibleIn:         tool.DefaultVisibility(),
		MinimumConfidence: policy.VeryLow,
	}}, o: o}}
}

// OutboundData is NoOutbound: only the local index is read.
func (*Read) OutboundData() policy.OutboundData { return policy.NoOutbound }

// ResolveFunction offers nothing while no mailbox is readable.
func (r *Read) ResolveFunction(ctx context.Context, rc tool.ResolveContext) (*tool.Function, error) {
	if _, err := r.offerable(rc.ProviderConfidence); err != nil {
		return nil, err
	}
	return r.Base.ResolveFunction(ctx, rc)
}

var mailIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

type refJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type attachmentJSON struct {
	Number             int    `json:"number"`
	Name               string `json:"name"`
	SizeBytes          int64  `json:"size_bytes"`
	Readable           bool   `json:"readable"`
	NotReadableBecause string `json:"not_readable_because,omitempty"`
}

// ReadResult is the JSON read_mail returns.
type ReadResult struct {
	MailID           string           `json:"mail_id"`
	Mailbox          refJSON          `json:"mailbox"`
	Received         string           `json:"received"`
	Sent             string           `json:"sent,omitempty"`
	From             []string         `json:"from"`
	Sender           []string         `json:"sender,omitempty"`
	ReplyTo          []string         `json:"reply_to,omitempty"`
	To               []string         `json:"to"`
	Cc               []string         `json:"cc,omitempty"`
	Bcc              []string         `json:"bcc,omitempty"`
	More             map[string]int   `json:"more_addresses,omitempty"`
	Subject          string           `json:"subject"`
	Folders          []string         `json:"folders"`
	Flags            []string         `json:"flags"`
	Importance       string           `json:"importance"`
	Encryption       string           `json:"encryption,omitempty"`
	InReplyToMailID  string           `json:"in_reply_to_mail_id,omitempty"`
	Attachments      []attachmentJSON `json:"attachments,omitempty"`
	Reading          string           `json:"reading"`
	Page             int              `json:"page"`
	LastPage         int              `json:"last_page"`
	HasMore          bool             `json:"has_more"`
	Text             string           `json:"text"`
	Headers          string           `json:"headers,omitempty"`
	HeadersTruncated bool             `json:"headers_truncated,omitempty"`
	Issues           []string         `json:"issues,omitempty"`
}

func notReadable(state string) string {
	switch state {
	case mailindex.AttachmentDisabled:
		return "attachment text extraction is switched off"
	case mailindex.AttachmentTooLarge:
		return "too large"
	case mailindex.AttachmentUnsupportedType:
		return "unsupported type"
	case mailindex.AttachmentExtractionFailed:
		return "extraction failed"
	}
	return ""
}

// Execute runs read_mail.
func (t *Read) Execute(ctx context.Context, raw json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
	rs, err := t.readable(ec)
	if err != nil {
		return tool.Result{}, err
	}
	a, err := tool.ReadArgs(raw)
	if err != nil {
		return tool.Result{}, err
	}
	if err := a.RefuseUnknown(ArgMailID, ArgAttachment, ArgIncludeHeaders, tool.PageArgument); err != nil {
		return tool.Result{}, err
	}
	id, err := a.RequiredString(ArgMailID, tool.StringRule{MaxChars: 36, SingleLine: true})
	if err != nil {
		return tool.Result{}, err
	}
	id = strings.ToLower(id)
	if !mailIDPattern().MatchString(id) {
		return tool.Result{}, argError(ArgMailID, fmt.Sprintf("Argument '%s' must be a mail_id as search_mails returns it, e.g. 0f8fad5b-d9cb-469f-a165-70867728950e, but was %q.", ArgMailID, id))
	}
	attNo, withAtt, err := a.OptionalPositiveInt(ArgAttachment, "to read the mail's text")
	if err != nil {
		return tool.Result{}, err
	}
	withHeaders, _, err := a.OptionalBool(ArgIncludeHeaders, "to leave the header block out")
	if err != nil {
		return tool.Result{}, err
	}
	r, m, err := t.o.Service.Find(ctx, rs, id)
	if errors.Is(err, mailindex.ErrNotFound) {
		return tool.Result{}, argError(ArgMailID, fmt.Sprintf("Argument '%s' was %q, but no mail with this ID is in a mailbox this provider may read (%s). Search again with search_mails and use a mail_id from its result.",
			ArgMailID, id, strings.Join(readableIDs(rs), ", ")))
	}
	if err != nil {
		return tool.Result{}, fmt.Errorf("read_mail: read the mail index: %w", err)
	}
	loc := t.o.loc()
	out := ReadResult{MailID: m.ID, Mailbox: refJSON{ID: r.Config.ID, Name: r.Config.Name}, Received: m.Received.In(loc).Format(TimeLayout),
		Subject: m.Subject, Importance: m.Importance, Encryption: m.Encryption, More: map[string]int{}}
	if !m.Sent.IsZero() {
		out.Sent = m.Sent.In(loc).Format(TimeLayout)
	}
	roles := []struct {
		name string
		in   []mailindex.Address
		dst  *[]string
	}{{"from", m.Addresses.From, &out.From}, {"sender", m.Addresses.Sender, &out.Sender}, {"reply_to", m.Addresses.ReplyTo, &out.ReplyTo},
		{"to", m.Addresses.To, &out.To}, {"cc", m.Addresses.Cc, &out.Cc}, {"bcc", m.Addresses.Bcc, &out.Bcc}}
	for _, role := range roles {
		for i, ad := range role.in {
			if i >= MaxAddressesPerRole {
				out.More["more_"+role.name] = len(role.in) - MaxAddressesPerRole
				break
			}
			*role.dst = append(*role.dst, addressString(ad))
		}
	}
	if out.From == nil {
		out.From = []string{}
	}
	if out.To == nil {
		out.To = []string{}
	}
	if len(out.More) == 0 {
		out.More = nil
	}
	folders, unread, flagged, answered, _ := locationFacts(m.Locations)
	out.Folders = folders
	out.Flags = []string{}
	if !unread {
		out.Flags = append(out.Flags, "seen")
	}
	if flagged {
		out.Flags = append(out.Flags, "flagged")
	}
	if answered {
		out.Flags = append(out.Flags, "answered")
	}
	for _, l := range m.Locations {
		if l.Flags.Draft {
			out.Flags = append(out.Flags, "draft")
			break
		}
	}
	if parent, ok, err := t.o.Service.ReplyTarget(ctx, r.Config.ID, m); err != nil {
		return tool.Result{}, fmt.Errorf("read_mail: look up the replied mail in mailbox %s: %w", r.Config.ID, err)
	} else if ok {
		out.InReplyToMailID = parent
	}
	for _, at := range m.Attachments {
		out.Attachments = append(out.Attachments, attachmentJSON{Number: at.Number, Name: at.Name, SizeBytes: at.Size,
			Readable: at.State == mailindex.AttachmentExtracted, NotReadableBecause: notReadable(at.State)})
	}

	text := m.Body
	out.Reading = "text"
	if withAtt {
		if attNo > len(m.Attachments) {
			if len(m.Attachments) == 0 {
				return tool.Result{}, argError(ArgAttachment, fmt.Sprintf("Argument '%s' was %d, but this mail has no attachments. Leave '%s' out to read the mail's text.", ArgAttachment, attNo, ArgAttachment))
			}
			return tool.Result{}, argError(ArgAttachment, fmt.Sprintf("Argument '%s' must be from 1 to %d, the attachments of this mail, but was %d. Leave it out to read the mail's text.", ArgAttachment, len(m.Attachments), attNo))
		}
		at := m.Attachments[attNo-1]
		out.Reading = fmt.Sprintf("attachment %d", attNo)
		text = at.Text
		if at.State != mailindex.AttachmentExtracted {
			out.Issues = append(out.Issues, fmt.Sprintf("Attachment %d cannot be read: %s.", attNo, notReadable(at.State)))
		}
	}
	if m.Encryption != "" {
		out.Issues = append(out.Issues, "This mail is encrypted: only its header can be read. Say so rather than guess its content.")
	}
	page, err := a.Page(max(1, (tool.UTF16Len(text)+ReadPageChars-1)/ReadPageChars))
	if err != nil {
		return tool.Result{}, err
	}
	out.Text, out.LastPage = pageOf(text, page, ReadPageChars)
	out.Page, out.HasMore = page, page < out.LastPage
	if withHeaders {
		out.Headers = m.Headers
		if tool.UTF16Len(out.Headers) > MaxHeaders {
			out.Headers, _ = pageOf(out.Headers, 1, MaxHeaders)
			out.HeadersTruncated = true
		}
	}

	// One filter batch for everything of the mail that reaches the model.
	var b batch
	src := mailSource(r)
	b.add(src, "subject", &out.Subject)
	for _, role := range roles {
		for i := range *role.dst {
			b.add(src, role.name, &(*role.dst)[i])
		}
	}
	for i := range out.Attachments {
		b.add(src, "attachment name", &out.Attachments[i].Name)
	}
	b.add(src, out.Reading, &out.Text)
	b.add(src, "headers", &out.Headers)
	b.run(ctx, t.o.Guard)

	var req requirements
	req.add(r)
	sender := ""
	if len(out.From) > 0 {
		sender = out.From[0]
	}
	res := tool.Result{JSON: out, Sources: []tool.Source{source(r.Config.ID, m.ID, out.Subject, sender, m.Received, loc)}}
	req.apply(&res)
	t.o.log().Info("read_mail ran", "mailbox_id", r.Config.ID, "mailbox", r.Config.Name, "page", page, "attachment", withAtt, "headers", withHeaders)
	return res, nil
}
