package mailindex

import "time"

// Importance of a mail. Unmarked mail is Normal.
const (
	ImportanceLow    = "low"
	ImportanceNormal = "normal"
	ImportanceHigh   = "high"
)

// Encryption markers. An encrypted mail is indexed by its header only.
const (
	EncryptionNone  = ""
	EncryptionSMIME = "smime"
	EncryptionPGP   = "pgp"
	// EncryptionIRM is a mail protected by Microsoft Information Rights
	// Management: its content travels in a message.rpmsg attachment.
	EncryptionIRM = "irm"
)

// Special-use folder kinds the index knows.
const (
	SpecialSent   = "sent"
	SpecialDrafts = "drafts"
)

// Attachment states: whether its text was extracted and why not.
const (
	AttachmentExtracted        = "EXTRACTED"
	AttachmentDisabled         = "DISABLED"
	AttachmentTooLarge         = "TOO_LARGE"
	AttachmentUnsupportedType  = "UNSUPPORTED_TYPE"
	AttachmentExtractionFailed = "EXTRACTION_FAILED"
)

// Address is one mail address with its display name.
type Address struct {
	Name string `json:"name,omitempty"`
	Addr string `json:"address"`
}

// String writes "Name <addr>" or just the address.
func (a Address) String() string {
	if a.Name == "" {
		return a.Addr
	}
	return a.Name + " <" + a.Addr + ">"
}

// Addresses are a mail's addresses by role.
type Addresses struct {
	From    []Address `json:"from,omitempty"`
	Sender  []Address `json:"sender,omitempty"`
	ReplyTo []Address `json:"reply_to,omitempty"`
	To      []Address `json:"to,omitempty"`
	Cc      []Address `json:"cc,omitempty"`
	Bcc     []Address `json:"bcc,omitempty"`
}

// Attachment is one attachment of a mail, numbered from 1.
type Attachment struct {
	Number int
	Name   string
	Type   string
	Size   int64
	// State is one of the Attachment* states.
	State string
	// Text is the extracted text when State is AttachmentExtracted.
	Text string
}

// Mail is an indexed mail's content, independent of where it lies.
type Mail struct {
	// ID is a lower-case UUID given by the index.
	ID        string
	MailboxID string
	// ContentKey identifies the content (e.g. a hash of the raw message),
	// so a copied or moved mail only gains a location.
	ContentKey string
	MessageID  string
	InReplyTo  string
	References []string
	// Sent is the Date header; zero when absent.
	Sent time.Time
	// Received is INTERNALDATE, else Sent, else when it was found.
	Received       time.Time
	Addresses      Addresses
	Subject        string
	Importance     string
	Encryption     string
	HasAttachments bool
	Size           int64
	// Headers is the header block (text/rfc822-headers).
	Headers string
	// Body is the text of the mail; empty for an encrypted mail.
	Body        string
	Attachments []Attachment
	// Locations are filled when the mail is read from the index.
	Locations []Location
}

// Location is where a mail lies on the server.
type Location struct {
	Folder     string
	SpecialUse string
	UID        uint32
	Flags      Flags
}

// Flags are the IMAP flags of one location.
type Flags struct {
	Seen     bool
	Flagged  bool
	Answered bool
	Draft    bool
	Deleted  bool
}

// Folder is a folder's sync state and what the server said about it.
type Folder struct {
	MailboxID   string `json:"-"`
	Path        string `json:"path"`
	SpecialUse  string `json:"special_use,omitempty"`
	UIDValidity uint32 `json:"uid_validity"`
	UIDNext     uint32 `json:"uid_next"`
	// ServerMessages and ServerUnseen are STATUS counts from the last sync;
	// negative when unknown.
	ServerMessages int64 `json:"server_messages"`
	ServerUnseen   int64 `json:"server_unseen"`
	// LastCompleteSync is zero until a sync of the folder completed.
	LastCompleteSync time.Time `json:"last_complete_sync,omitzero"`
	// Indexed is how many locations the index holds for the folder (read
	// only; -1 when not counted).
	Indexed int64 `json:"indexed"`
}

// Incoming is one fetched message for AddBatch: where it lies and, unless
// its content key is already known, its parsed content and chunks.
type Incoming struct {
	UID   uint32
	Flags Flags
	// Mail must carry ContentKey; the rest is used only for new content.
	Mail Mail
	// Chunks are the searchable texts of a new mail.
	Chunks []string
}

// Filter narrows mails. Zero fields do not filter.
type Filter struct {
	// Folder is an exact folder path (no subfolders).
	Folder string
	// SpecialUse is SpecialSent or SpecialDrafts.
	SpecialUse string
	// From and To are case-insensitive substrings of an address or name;
	// To covers To, Cc and Bcc.
	From, To string
	// After is inclusive, Before exclusive (received time).
	After, Before  time.Time
	Unread         *bool
	Flagged        *bool
	Encrypted      *bool
	HasAttachments *bool
	// Importance is low, normal or high.
	Importance string
}

// Hit is one chunk found by a search channel.
type Hit struct {
	MailID  string
	ChunkID int64
	// Score is the channel's score (higher is better) or the fused score.
	Score float64
}

// Summary is what a result list needs of a mail.
type Summary struct {
	ID             string
	Received       time.Time
	Sent           time.Time
	Addresses      Addresses
	Subject        string
	Importance     string
	Encryption     string
	HasAttachments bool
	MessageID      string
	InReplyTo      string
	Locations      []Location
	Attachments    []Attachment
}

// Group is one group of a count.
type Group struct {
	Key   string
	Mails int64
	// ServerMessages and ServerUnseen are negative when unknown.
	ServerMessages int64
	ServerUnseen   int64
}

// Count is the answer of Count.
type Count struct {
	Mails int64
	// ServerMessages and ServerUnseen are negative unless known for every
	// counted folder.
	ServerMessages int64
	ServerUnseen   int64
	Groups         []Group
	// MoreGroups is true when more groups existed than were asked for.
	MoreGroups bool
}

// ChunkText is a chunk waiting for its embedding.
type ChunkText struct {
	ID   int64
	Text string
}
