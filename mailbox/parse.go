package mailbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // decode ISO-8859-*, Shift_JIS, … bodies and headers
	"github.com/emersion/go-message/mail"

	"github.com/stewardhq/steward/store/mailindex"
)

// Limits of what is taken from one mail.
const (
	// MaxTextPart is the most read of one text or HTML part.
	MaxTextPart = 4 << 20
	// MaxAttachmentText is the largest text-like attachment whose text is
	// extracted.
	MaxAttachmentText = 1 << 20
	// ChunkSize is the longest chunk in characters; a search passage is one
	// chunk.
	ChunkSize = 1500
)

// ParseOptions say what to take from a mail.
type ParseOptions struct {
	// NoAttachmentText keeps attachment names and types only (state
	// DISABLED).
	NoAttachmentText bool
}

// Parsed is a mail ready for the index.
type Parsed struct {
	Mail   mailindex.Mail
	Chunks []string
}

// ContentKey identifies a raw message's content.
func ContentKey(raw []byte) string {
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:])
}

// ParseMail reads a raw RFC 5322 message into what the index stores.
// received is the server's INTERNALDATE (zero when unknown). A mail that
// cannot be read as MIME still yields its header block where possible; an
// encrypted mail (S/MIME, PGP/MIME, inline PGP, Microsoft IRM) yields its header only and
// is marked.
func ParseMail(raw []byte, received time.Time, opts ParseOptions) (Parsed, error) {
	m := mailindex.Mail{ContentKey: ContentKey(raw), Size: int64(len(raw)), Importance: mailindex.ImportanceNormal}
	ent, err := message.Read(bytes.NewReader(raw))
	if err != nil && ent == nil {
		return Parsed{}, fmt.Errorf("mail header cannot be read: %w", err)
	}
	h := mail.Header{Header: ent.Header}
	readHeader(&m, h)
	m.Received = received
	if m.Received.IsZero() {
		m.Received = m.Sent
	}

	mediaType, _, _ := ent.Header.ContentType()
	switch {
	case mediaType == "multipart/encrypted":
		m.Encryption = mailindex.EncryptionPGP
	case mediaType == "application/pkcs7-mime" || mediaType == "application/x-pkcs7-mime":
		// Enveloped (encrypted) and opaque-signed S/MIME both hide the text.
		m.Encryption = mailindex.EncryptionSMIME
	case isRPMSG(mediaType, ""):
		m.Encryption = mailindex.EncryptionIRM
	}
	if m.Encryption == "" {
		walkBody(ent, &m, opts)
		if strings.Contains(m.Body, "-----BEGIN PGP MESSAGE-----") {
			m.Encryption = mailindex.EncryptionPGP
		}
		// An IRM-protected mail is a short notice plus the protected
		// content as a message.rpmsg attachment.
		for _, a := range m.Attachments {
			if isRPMSG(a.Type, a.Name) {
				m.Encryption = mailindex.EncryptionIRM
			}
		}
	}
	if m.Encryption != "" {
		// Header only: no body, no attachment content.
		m.Body, m.Attachments, m.HasAttachments = "", nil, false
	}
	return Parsed{Mail: m, Chunks: Chunk(chunkHead(m)+m.Body+attachmentText(m), ChunkSize)}, nil
}

// isRPMSG tells a Microsoft IRM payload by its media type or file name.
func isRPMSG(mediaType, name string) bool {
	return mediaType == "application/x-microsoft-rpmsg-message" || mediaType == "application/x-microsoft-rpmsg-message-v2" ||
		strings.HasSuffix(strings.ToLower(name), ".rpmsg")
}

func readHeader(m *mailindex.Mail, h mail.Header) {
	var hb strings.Builder
	fields := h.Fields()
	for fields.Next() {
		v, err := fields.Text()
		if err != nil {
			v = fields.Value()
		}
		hb.WriteString(fields.Key())
		hb.WriteString(": ")
		hb.WriteString(strings.Join(strings.Fields(v), " "))
		hb.WriteString("\n")
	}
	m.Headers = hb.String()
	if s, err := h.Subject(); err == nil {
		m.Subject = strings.TrimSpace(s)
	} else {
		m.Subject = strings.TrimSpace(h.Get("Subject"))
	}
	if d, err := h.Date(); err == nil {
		m.Sent = d.UTC()
	}
	if id, err := h.MessageID(); err == nil {
		m.MessageID = cleanID(id)
	}
	if ids, err := h.MsgIDList("In-Reply-To"); err == nil && len(ids) > 0 {
		m.InReplyTo = cleanID(ids[0])
	}
	if ids, err := h.MsgIDList("References"); err == nil {
		for _, id := range ids {
			if c := cleanID(id); c != "" {
				m.References = append(m.References, c)
			}
		}
	}
	m.Addresses = mailindex.Addresses{
		From: addrs(h, "From"), Sender: addrs(h, "Sender"), ReplyTo: addrs(h, "Reply-To"),
		To: addrs(h, "To"), Cc: addrs(h, "Cc"), Bcc: addrs(h, "Bcc"),
	}
	m.Importance = importance(h)
}

// cleanID keeps a message ID only when it holds no blank space.
func cleanID(id string) string {
	id = strings.Trim(strings.TrimSpace(id), "<>")
	if id == "" || strings.ContainsAny(id, " \t\r\n") {
		return ""
	}
	return id
}

func addrs(h mail.Header, key string) []mailindex.Address {
	list, err := h.AddressList(key)
	if err != nil {
		// A malformed list is kept as its text, so nothing is lost.
		if t, terr := h.Text(key); terr == nil && strings.TrimSpace(t) != "" {
			return []mailindex.Address{{Name: strings.TrimSpace(t)}}
		}
		return nil
	}
	out := make([]mailindex.Address, 0, len(list))
	for _, a := range list {
		out = append(out, mailindex.Address{Name: a.Name, Addr: a.Address})
	}
	return out
}

func importance(h mail.Header) string {
	switch strings.ToLower(strings.TrimSpace(h.Get("Importance"))) {
	case "high":
		return mailindex.ImportanceHigh
	case "low":
		return mailindex.ImportanceLow
	}
	if p := strings.TrimSpace(h.Get("X-Priority")); p != "" {
		switch p[0] {
		case '1', '2':
			return mailindex.ImportanceHigh
		case '4', '5':
			return mailindex.ImportanceLow
		}
	}
	switch strings.ToLower(strings.TrimSpace(h.Get("Priority"))) {
	case "urgent":
		return mailindex.ImportanceHigh
	case "non-urgent":
		return mailindex.ImportanceLow
	}
	return mailindex.ImportanceNormal
}

// walkBody collects the text parts (plain preferred, HTML converted when a
// mail has no plain text) and the attachments.
func walkBody(ent *message.Entity, m *mailindex.Mail, opts ParseOptions) {
	var plain, htmls []string
	number := 0
	_ = ent.Walk(func(path []int, e *message.Entity, err error) error {
		if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
			return nil
		}
		if e.MultipartReader() != nil {
			return nil
		}
		mt, params, _ := e.Header.ContentType()
		if mt == "" {
			mt = "text/plain"
		}
		disp, dparams, _ := e.Header.ContentDisposition()
		name := dparams["filename"]
		if name == "" {
			name = params["name"]
		}
		name = decodeWord(name)
		isAttachment := disp == "attachment" || (name != "" && disp != "inline") ||
			(!strings.HasPrefix(mt, "text/") && mt != "message/rfc822")
		if mt == "message/rfc822" {
			isAttachment = true
		}
		if !isAttachment && (mt == "text/plain" || mt == "text/html") {
			data, _ := io.ReadAll(io.LimitReader(e.Body, MaxTextPart))
			text := validUTF8(data)
			if mt == "text/html" {
				htmls = append(htmls, HTMLToText(text))
			} else {
				plain = append(plain, strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n")))
			}
			return nil
		}
		if !isAttachment {
			return nil
		}
		number++
		a := mailindex.Attachment{Number: number, Name: name, Type: mt}
		data, rerr := io.ReadAll(io.LimitReader(e.Body, MaxAttachmentText+1))
		n, _ := io.Copy(io.Discard, e.Body)
		a.Size = int64(len(data)) + n
		switch {
		case opts.NoAttachmentText:
			a.State = mailindex.AttachmentDisabled
		case !textLike(mt):
			a.State = mailindex.AttachmentUnsupportedType
		case a.Size > MaxAttachmentText:
			a.State = mailindex.AttachmentTooLarge
		case rerr != nil || (err != nil && message.IsUnknownEncoding(err)):
			a.State = mailindex.AttachmentExtractionFailed
		default:
			a.State = mailindex.AttachmentExtracted
			a.Text = validUTF8(data)
			if mt == "text/html" {
				a.Text = HTMLToText(a.Text)
			}
		}
		m.Attachments = append(m.Attachments, a)
		return nil
	})
	if len(plain) > 0 {
		m.Body = strings.Join(plain, "\n\n")
	} else {
		m.Body = strings.Join(htmls, "\n\n")
	}
	m.HasAttachments = len(m.Attachments) > 0
}

func decodeWord(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	d, err := (&mime.WordDecoder{CharsetReader: message.CharsetReader}).DecodeHeader(s)
	if err != nil {
		return s
	}
	return d
}

func textLike(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/csv", "application/x-yaml", "application/yaml", "application/javascript", "message/rfc822":
		return true
	}
	return strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+json")
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// chunkHead is the short header that leads the chunk text, so words of the
// subject and the addresses are found too.
func chunkHead(m mailindex.Mail) string {
	var b strings.Builder
	b.WriteString("Subject: " + m.Subject + "\n")
	line := func(role string, as []mailindex.Address) {
		if len(as) == 0 {
			return
		}
		parts := make([]string, len(as))
		for i, a := range as {
			parts[i] = a.String()
		}
		b.WriteString(role + ": " + strings.Join(parts, ", ") + "\n")
	}
	line("From", m.Addresses.From)
	line("To", m.Addresses.To)
	line("Cc", m.Addresses.Cc)
	if !m.Sent.IsZero() {
		b.WriteString("Date: " + m.Sent.Format("2006-01-02") + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

func attachmentText(m mailindex.Mail) string {
	var b strings.Builder
	for _, a := range m.Attachments {
		b.WriteString("\n\nAttachment " + fmt.Sprint(a.Number) + ": " + a.Name + " (" + a.Type + ")")
		if a.Text != "" {
			b.WriteString("\n" + a.Text)
		}
	}
	return b.String()
}

// Chunk splits text into pieces of at most size characters, preferring
// paragraph, line and word boundaries.
func Chunk(text string, size int) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var out []string
	r := []rune(text)
	for len(r) > 0 {
		if len(r) <= size {
			out = append(out, strings.TrimSpace(string(r)))
			break
		}
		cut := lastBreak(r[:size])
		piece := strings.TrimSpace(string(r[:cut]))
		if piece != "" {
			out = append(out, piece)
		}
		r = r[cut:]
	}
	return out
}

func lastBreak(r []rune) int {
	s := string(r)
	for _, sep := range []string{"\n\n", "\n", ". ", " "} {
		if i := strings.LastIndex(s, sep); i > len(s)/2 {
			return utf8.RuneCountInString(s[:i+len(sep)])
		}
	}
	return len(r)
}
