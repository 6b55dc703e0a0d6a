package mailbox

import (
	"fmt"
	"net"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/stewardhq/steward/embed"

	"github.com/stewardhq/steward/policy"
)

// Security is how the connection to the IMAP server is protected.
type Security string

// The connection security options. PlainLoopback exists for tests against a
// server on this machine and is refused for any other host.
const (
	SecurityTLS           Security = "tls"
	SecurityStartTLS      Security = "starttls"
	SecurityPlainLoopback Security = "plain-loopback"
)

// ParseSecurity reads a security name case-insensitively.
func ParseSecurity(s string) (Security, error) {
	switch Security(strings.ToLower(strings.TrimSpace(s))) {
	case SecurityTLS, "ssl", "imaps":
		return SecurityTLS, nil
	case SecurityStartTLS:
		return SecurityStartTLS, nil
	case SecurityPlainLoopback:
		return SecurityPlainLoopback, nil
	}
	return "", fmt.Errorf("unknown connection security %q: use tls or starttls (plain-loopback only for a test server on 127.0.0.1 or ::1)", s)
}

// AuthKind is how the indexer signs in.
type AuthKind string

// The sign-in kinds.
const (
	AuthPassword AuthKind = "password"
	AuthXOAuth2  AuthKind = "xoauth2"
)

// ParseAuthKind reads a sign-in kind case-insensitively.
func ParseAuthKind(s string) (AuthKind, error) {
	switch AuthKind(strings.ToLower(strings.TrimSpace(s))) {
	case AuthPassword:
		return AuthPassword, nil
	case AuthXOAuth2, "oauth2":
		return AuthXOAuth2, nil
	}
	return "", fmt.Errorf("unknown sign-in kind %q: use password or xoauth2", s)
}

// EmbeddingKind names the wire API of an embedding provider (see package
// embed).
type EmbeddingKind = embed.Kind

// The embedding APIs.
const (
	// EmbeddingOpenAI is an OpenAI-compatible POST <base>/embeddings.
	EmbeddingOpenAI = embed.OpenAI
	// EmbeddingOllama is Ollama's POST <base>/api/embed.
	EmbeddingOllama = embed.Ollama
)

// Embedding configures the embedding provider of a mailbox.
type Embedding = embed.Config

// Config is one mailbox as the user or the organization configured it.
// Secrets are not part of it, only references to them.
type Config struct {
	ID   string `json:"id" yaml:"id"`
	Name string `json:"name" yaml:"name"`
	// Number orders mailboxes in lists (then the ID).
	Number   int      `json:"number" yaml:"number"`
	Host     string   `json:"host" yaml:"host"`
	Port     int      `json:"port" yaml:"port"`
	Security Security `json:"security" yaml:"security"`
	Auth     AuthKind `json:"auth" yaml:"auth"`
	Username string   `json:"username" yaml:"username"`
	// SecretRef names the password or bearer token in the secret store.
	SecretRef string `json:"secret_ref" yaml:"secret_ref"`
	// Folders are the folders to index; empty means INBOX.
	Folders []string `json:"folders,omitempty" yaml:"folders,omitempty"`
	// IncludeSent and IncludeDrafts add the server's special-use folders.
	IncludeSent   bool `json:"include_sent,omitempty" yaml:"include_sent,omitempty"`
	IncludeDrafts bool `json:"include_drafts,omitempty" yaml:"include_drafts,omitempty"`
	// Embedding is nil for a mailbox searched by words only.
	Embedding *Embedding `json:"embedding,omitempty" yaml:"embedding,omitempty"`
	// RequiredConfidence is the level chat and embedding providers must
	// meet: VERY_LOW to HIGH. NONE, UNTRUSTED and UNKNOWN close the mailbox.
	RequiredConfidence policy.Confidence `json:"required_confidence" yaml:"required_confidence"`
	// Outbound is where a chat may still send data after reading from it.
	Outbound policy.Restriction `json:"outbound" yaml:"outbound"`
	// DisableAutoRefresh stops the tools from requesting a sync of drafts.
	DisableAutoRefresh bool `json:"disable_auto_refresh,omitempty" yaml:"disable_auto_refresh,omitempty"`
	// MaxAgeDays limits the index to mails delivered on or after the first
	// day of the window (see IndexedSince), plus flagged mails and drafts of
	// any age; 0 indexes every mail.
	MaxAgeDays int `json:"max_age_days,omitempty" yaml:"max_age_days,omitempty"`
}

// MaxMaxAgeDays is the largest max age in days (about 100 years); a
// larger value is surely a mistake.
const MaxMaxAgeDays = 36500

// ValidateMaxAgeDays checks a max age in days: 0 (every mail) to
// MaxMaxAgeDays.
func ValidateMaxAgeDays(n int) error {
	if n < 0 || n > MaxMaxAgeDays {
		return fmt.Errorf("max_age_days %d: use 0 (index every mail) to %d days", n, MaxMaxAgeDays)
	}
	return nil
}

// IndexedSince returns the first day of the max-age window at now:
// midnight UTC of the UTC date MaxAgeDays days before now's UTC date, so a
// mail MaxAgeDays days old is always inside. It is zero without a max age.
func (c Config) IndexedSince(now time.Time) time.Time {
	if c.MaxAgeDays <= 0 {
		return time.Time{}
	}
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d-c.MaxAgeDays, 0, 0, 0, 0, time.UTC)
}

// IndexedFolders returns the configured folders, INBOX when none.
func (c Config) IndexedFolders() []string {
	if len(c.Folders) == 0 {
		return []string{"INBOX"}
	}
	return c.Folders
}

// Closed reports whether the required level closes the mailbox: only
// VERY_LOW to HIGH open it.
func (c Config) Closed() bool {
	return !c.RequiredConfidence.Valid() || c.RequiredConfidence < policy.VeryLow
}

// EmbeddingRefusal returns nil when the mailbox's embedding provider may
// receive its mails and the queries asked of it under scheme, and a
// *policy.EmbeddingRefusedError naming the mailbox's level and the
// provider's otherwise (policy.CheckEmbedding). A mailbox without an
// embedding provider sends nothing anywhere: nil.
func (c Config) EmbeddingRefusal(scheme policy.SchemeConfig) error {
	if c.Embedding == nil {
		return nil
	}
	return policy.CheckEmbedding(policy.OpenLevelsOnly, c.RequiredConfidence, scheme.ProviderConfidence(c.Embedding.Provider))
}

// Validate checks a mailbox configuration and says what would be right.
func (c Config) Validate() error {
	if strings.TrimSpace(c.ID) == "" || strings.ContainsAny(c.ID, "/ \t\r\n") {
		return fmt.Errorf("mailbox ID %q: use a non-empty ID without slashes or spaces", c.ID)
	}
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("mailbox %s: the name is empty", c.ID)
	}
	if _, err := normalizeHost(c.Host); err != nil {
		return fmt.Errorf("mailbox %s: %w", c.ID, err)
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("mailbox %s: port %d: use 1 to 65535 (993 for TLS, 143 for STARTTLS)", c.ID, c.Port)
	}
	switch c.Security {
	case SecurityTLS, SecurityStartTLS:
	case SecurityPlainLoopback:
		if !IsLoopbackHost(c.Host) {
			return fmt.Errorf("mailbox %s: security plain-loopback is only allowed for 127.0.0.0/8 or ::1, not for host %q: use tls or starttls", c.ID, c.Host)
		}
	default:
		return fmt.Errorf("mailbox %s: security %q: use tls or starttls", c.ID, c.Security)
	}
	switch c.Auth {
	case AuthPassword, AuthXOAuth2:
	default:
		return fmt.Errorf("mailbox %s: sign-in kind %q: use password or xoauth2", c.ID, c.Auth)
	}
	if strings.TrimSpace(c.Username) == "" {
		return fmt.Errorf("mailbox %s: the user name is empty", c.ID)
	}
	if strings.TrimSpace(c.SecretRef) == "" {
		return fmt.Errorf("mailbox %s: no secret reference: store the password or token in the secret store and name it", c.ID)
	}
	for _, f := range c.Folders {
		if strings.TrimSpace(f) == "" || len(f) > 500 {
			return fmt.Errorf("mailbox %s: a folder name is empty or longer than 500 characters", c.ID)
		}
	}
	if !c.RequiredConfidence.Valid() {
		return fmt.Errorf("mailbox %s: required confidence %d: use VERY_LOW, LOW, MODERATE, MEDIUM or HIGH", c.ID, int(c.RequiredConfidence))
	}
	if c.Outbound != c.Outbound.Normalize() {
		return fmt.Errorf("mailbox %s: outbound restriction %d: use UNRESTRICTED, ONLY_LINKS_FROM_CHAT or ONLY_CONFIGURED_SERVICES", c.ID, int(c.Outbound))
	}
	if err := ValidateMaxAgeDays(c.MaxAgeDays); err != nil {
		return fmt.Errorf("mailbox %s: %w", c.ID, err)
	}
	if c.Embedding != nil {
		if err := c.Embedding.Validate(); err != nil {
			return fmt.Errorf("mailbox %s: %w", c.ID, err)
		}
	}
	return nil
}

// IsLoopbackHost reports whether host is a loopback IP literal (127.0.0.0/8
// or ::1). Names such as "localhost" do not count: they are resolved.
func IsLoopbackHost(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// normalizeHost lower-cases a host name and converts it to its ASCII (IDN)
// form, so comparisons ignore case and Unicode spelling.
func normalizeHost(host string) (string, error) {
	h := strings.TrimSuffix(strings.TrimSpace(host), ".")
	if h == "" {
		return "", fmt.Errorf("the IMAP host is empty: name the server, e.g. imap.example.org")
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
		return ip.String(), nil
	}
	a, err := idna.Lookup.ToASCII(strings.ToLower(h))
	if err != nil {
		return "", fmt.Errorf("IMAP host %q is not a valid host name: %v", host, err)
	}
	return strings.ToLower(a), nil
}

// ServerPolicy is the organization's rule over IMAP servers.
type ServerPolicy struct {
	// Set is false when the organization has no rule: any host is allowed.
	Set bool
	// Hosts are the allowed hosts when Set; an empty list allows none.
	Hosts []string
}

// Allows reports whether the rule allows host, ignoring case and IDN
// spelling.
func (p ServerPolicy) Allows(host string) bool {
	if !p.Set {
		return true
	}
	h, err := normalizeHost(host)
	if err != nil {
		return false
	}
	for _, a := range p.Hosts {
		if n, err := normalizeHost(a); err == nil && n == h {
			return true
		}
	}
	return false
}

// OrgPolicy is what the organization sets over every mailbox.
type OrgPolicy struct {
	Servers ServerPolicy
	// MinimumOutbound, when set, tightens every mailbox whose own
	// restriction is less strict.
	MinimumOutbound *policy.Restriction
}

// Outbound returns the restriction a mailbox demands after the
// organization's minimum.
func (o OrgPolicy) Outbound(c Config) policy.Restriction {
	r := c.Outbound.Normalize()
	if o.MinimumOutbound != nil && o.MinimumOutbound.Normalize() < r {
		r = o.MinimumOutbound.Normalize()
	}
	return r
}
