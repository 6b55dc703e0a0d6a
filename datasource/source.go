package datasource

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/textcut"
	"github.com/stewardhq/steward/policy"
)

// Kind says what a data source is. The values are the reference
// implementation's type names, which organizations already use.
type Kind string

// The kinds of data sources.
const (
	// LocalFolder is a folder on this machine, indexed with its subfolders.
	LocalFolder Kind = "LOCAL_DIRECTORY"
	// LocalFile is one file on this machine.
	LocalFile Kind = "LOCAL_FILE"
	// ERI is a server speaking the External Retrieval Interface v1.
	ERI Kind = "ERI_V1"
)

// ParseKind reads a kind case-insensitively; folder, file and eri are
// accepted as short forms.
func ParseKind(s string) (Kind, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "LOCAL_DIRECTORY", "FOLDER", "DIRECTORY", "LOCAL_FOLDER":
		return LocalFolder, nil
	case "LOCAL_FILE", "FILE":
		return LocalFile, nil
	case "ERI_V1", "ERI":
		return ERI, nil
	}
	return "", fmt.Errorf("unknown data source kind %q: use LOCAL_DIRECTORY (a folder), LOCAL_FILE (one file) or ERI_V1 (an ERI server)", s)
}

// Local reports whether the kind is searched through the local index.
func (k Kind) Local() bool { return k == LocalFolder || k == LocalFile }

// Label is the kind as the model and the user read it.
func (k Kind) Label() string {
	switch k {
	case LocalFolder:
		return "local folder"
	case LocalFile:
		return "local file"
	case ERI:
		return "external data source"
	}
	return "unknown"
}

// AuthMethod is how Steward signs in at an ERI server (the spec's
// AuthMethod).
type AuthMethod string

// The ERI sign-in methods. Kerberos is part of the spec but not supported.
const (
	AuthNone             AuthMethod = "NONE"
	AuthUsernamePassword AuthMethod = "USERNAME_PASSWORD"
	AuthToken            AuthMethod = "TOKEN"
	AuthKerberos         AuthMethod = "KERBEROS"
)

// UsernameMode says where the user name and password of an ERI source come
// from, for USERNAME_PASSWORD.
type UsernameMode string

// The user name and password modes of the reference implementation.
const (
	// UserManaged: the user gives both; the password is in the secret store.
	UserManaged UsernameMode = "USER_MANAGED"
	// SharedUsernameAndPassword: the configuration gives both.
	SharedUsernameAndPassword UsernameMode = "SHARED_USERNAME_AND_PASSWORD"
	// OSUsernameSharedPassword: the operating-system user's name, the
	// configuration's password.
	OSUsernameSharedPassword UsernameMode = "OS_USERNAME_SHARED_PASSWORD"
)

// Limits and defaults of the fields.
const (
	// DefaultMaxMatches is the page size of a source that sets none.
	DefaultMaxMatches = 10
	// MaxMaxMatches is the largest page size.
	MaxMaxMatches = 65535
	// MaxNameChars is the longest name.
	MaxNameChars = 40
	// MaxDescriptionChars is the longest description a source may keep;
	// the tool description shows at most DescriptionChars of it.
	MaxDescriptionChars = 2000
	// MaxIDChars is the longest ID.
	MaxIDChars = 64
	// MaxChunkTokensLimit is the largest chunk size in tokens.
	MaxChunkTokensLimit = 8192
	// MinChunkTokens is the smallest chunk size in tokens other than 0.
	MinChunkTokens = 32
	// MaxRetrievalIDChars is the longest ERI retrieval process ID.
	MaxRetrievalIDChars = 200
)

// Source is one configured data source. Secrets are not part of it: an
// ERI source names its secret in the secret store (SecretRef), or an
// organization's decrypted secret travels beside it (see Secret).
type Source struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Number orders sources in lists (then the ID).
	Number int `json:"number"`
	// Description is the user's or organization's text about the source.
	// An ERI source shows its server's description instead, and this one
	// only when the server gives none.
	Description string `json:"description,omitempty"`
	// MaxMatches is the number of passages per page (results per page).
	MaxMatches int `json:"max_matches"`
	// RequiredConfidence is the provider confidence the chat provider and
	// the embedding provider must meet. NONE lets every provider through.
	RequiredConfidence policy.Confidence `json:"required_provider_confidence"`
	// Security is ALLOW_ANY or SELF_HOSTED: a SELF_HOSTED source only goes
	// to self-hosted (or trusted) providers and makes the chat SELF_HOSTED.
	Security policy.DataSecurity `json:"data_security"`

	// Path is the absolute path of a local folder or file.
	Path string `json:"path,omitempty"`
	// Embedding names the embedding provider of a local source:
	// "ollama:<model>[@<url>]", "openai:<model>" or the ID of an
	// organization embedding provider; empty searches by words only.
	Embedding string `json:"embedding_provider,omitempty"`
	// MaxChunkTokens is the chunk size in tokens of the embedding model; 0
	// uses the embedding provider's token limit.
	MaxChunkTokens int `json:"max_chunk_tokens,omitempty"`
	// ChunkOverlapTokens is how many tokens a chunk repeats of the one
	// before, as datasource/local takes it: 0 uses its default (300), a
	// negative value means no overlap.
	ChunkOverlapTokens int `json:"chunk_overlap_tokens,omitempty"`

	// Hostname is the ERI server's address with its scheme, e.g.
	// "https://eri.example.org", optionally with a path.
	Hostname string `json:"hostname,omitempty"`
	// Port is the ERI server's port; 0 takes the address's port or the
	// scheme's default.
	Port int `json:"port,omitempty"`
	// Auth is the ERI sign-in method.
	Auth         AuthMethod   `json:"auth_method,omitempty"`
	Username     string       `json:"username,omitempty"`
	UsernameMode UsernameMode `json:"username_password_mode,omitempty"`
	// RetrievalID selects the server's retrieval process; empty lets the
	// server choose.
	RetrievalID string `json:"retrieval_id,omitempty"`
	// SecretRef names the ERI password or token in the secret store.
	SecretRef string `json:"-"`

	// Org is true for a source an organization plugin defines; the user
	// cannot change or remove it.
	Org bool `json:"-"`
	// Plugin names the plugin that defines the source (an organization's or
	// a local one); empty for a source of the user's settings.
	Plugin string `json:"-"`
}

// FieldError is a field of a source that holds a value it must not. Its
// message names the source, the field and what is allowed.
type FieldError struct {
	// SourceID is the ID of the source (may be blank or invalid itself).
	SourceID string
	// Field is the field's name as the user's settings file writes it,
	// e.g. "max_matches"; surfaces with other names (a plugin's
	// MaxMatches, a flag's --max-matches) replace it.
	Field string
	// Value is the offending value as written, cut short; never a secret.
	Value string
	// Allowed says what would be right.
	Allowed string
}

func (e *FieldError) Error() string {
	id := e.SourceID
	if id == "" {
		id = "(no ID)"
	}
	if e.Value == "" {
		return fmt.Sprintf("data source %s: %s is missing: %s", id, e.Field, e.Allowed)
	}
	return fmt.Sprintf("data source %s: %s %s: %s", id, e.Field, e.Value, e.Allowed)
}

func fieldErr(s Source, field, value, allowed string) *FieldError {
	return &FieldError{SourceID: textcut.Chars(s.ID, MaxIDChars+10), Field: field, Value: quoteValue(value), Allowed: allowed}
}

func quoteValue(v string) string {
	if v == "" {
		return ""
	}
	return strconv.Quote(textcut.Chars(v, 80))
}

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })

// ValidID reports whether id may name a data source: 1 to 64 ASCII
// letters, digits, '_', '.' or '-', starting with a letter or digit.
func ValidID(id string) bool { return len(id) <= MaxIDChars && idPattern().MatchString(id) }

// EmbeddingRefusal returns nil when the source's embedding provider, whose
// provider name under the organization's scheme is provider (e.g.
// "OPEN_AI", "SELF_HOSTED"), may receive its documents and the queries
// asked of it, and a *policy.EmbeddingRefusedError naming the source's
// level and the provider's otherwise (policy.CheckEmbedding: the provider
// has to meet the level as a chat provider has to). Such a source is
// indexed and searched by words only. A source without an embedding
// provider sends nothing anywhere: nil.
func (s Source) EmbeddingRefusal(scheme policy.SchemeConfig, provider string) error {
	if s.Embedding == "" {
		return nil
	}
	return policy.CheckEmbedding(policy.MinimumLevel, s.RequiredConfidence, scheme.ProviderConfidence(provider))
}

// Validate checks every field of the source and returns the first that
// holds a value it must not, as a *FieldError.
func (s Source) Validate() error {
	if !ValidID(s.ID) {
		return fieldErr(s, "id", s.ID, fmt.Sprintf("use 1 to %d letters, digits, '_', '.' or '-', starting with a letter or digit", MaxIDChars))
	}
	if strings.TrimSpace(s.Name) == "" {
		return fieldErr(s, "name", "", fmt.Sprintf("give the source a name of 1 to %d characters", MaxNameChars))
	}
	if utf8.RuneCountInString(s.Name) > MaxNameChars || hasControl(s.Name, false) || s.Name != strings.TrimSpace(s.Name) {
		return fieldErr(s, "name", s.Name, fmt.Sprintf("use 1 to %d characters on one line, without leading or trailing spaces", MaxNameChars))
	}
	switch s.Kind {
	case LocalFolder, LocalFile, ERI:
	default:
		return fieldErr(s, "kind", string(s.Kind), "use LOCAL_DIRECTORY, LOCAL_FILE or ERI_V1")
	}
	if utf8.RuneCountInString(s.Description) > MaxDescriptionChars || hasControl(s.Description, true) {
		return fieldErr(s, "description", s.Description, fmt.Sprintf("use at most %d characters, without control characters other than line breaks and tabs", MaxDescriptionChars))
	}
	if s.MaxMatches < 1 || s.MaxMatches > MaxMaxMatches {
		return fieldErr(s, "max_matches", strconv.Itoa(s.MaxMatches), fmt.Sprintf("use a whole number of results per page from 1 to %d (default %d)", MaxMaxMatches, DefaultMaxMatches))
	}
	if !s.RequiredConfidence.Valid() {
		return fieldErr(s, "required_provider_confidence", strconv.Itoa(int(s.RequiredConfidence)), "use NONE, UNTRUSTED, UNKNOWN, VERY_LOW, LOW, MODERATE, MEDIUM or HIGH")
	}
	if s.Security != policy.AllowAny && s.Security != policy.SelfHosted {
		return fieldErr(s, "data_security", s.Security.String(), "use ALLOW_ANY or SELF_HOSTED (SELF_HOSTED lets only self-hosted providers see the source)")
	}
	if s.Kind.Local() {
		return s.validateLocal()
	}
	return s.validateERI()
}

func (s Source) validateLocal() error {
	if s.RequiredConfidence == policy.None {
		return fieldErr(s, "required_provider_confidence", "NONE", "a local source must name the level its documents need: UNTRUSTED, UNKNOWN, VERY_LOW, LOW, MODERATE, MEDIUM or HIGH")
	}
	what := "folder"
	if s.Kind == LocalFile {
		what = "file"
	}
	if strings.TrimSpace(s.Path) == "" {
		return fieldErr(s, "path", "", "give the absolute path of the "+what)
	}
	if !filepath.IsAbs(s.Path) || strings.ContainsRune(s.Path, 0) || filepath.Clean(s.Path) != s.Path {
		return fieldErr(s, "path", s.Path, "use the absolute, clean path of the "+what+", e.g. /home/me/Documents")
	}
	if s.MaxChunkTokens != 0 && (s.MaxChunkTokens < MinChunkTokens || s.MaxChunkTokens > MaxChunkTokensLimit) {
		return fieldErr(s, "max_chunk_tokens", strconv.Itoa(s.MaxChunkTokens), fmt.Sprintf("use %d to %d tokens, or leave it out for the embedding provider's token limit", MinChunkTokens, MaxChunkTokensLimit))
	}
	limit := MaxChunkTokensLimit - 1
	if s.MaxChunkTokens > 0 {
		limit = s.MaxChunkTokens - 1
	}
	if s.ChunkOverlapTokens > limit {
		return fieldErr(s, "chunk_overlap_tokens", strconv.Itoa(s.ChunkOverlapTokens), fmt.Sprintf("use at most %d tokens, fewer than a chunk holds (0 for no overlap, or leave it out for the default of 300)", limit))
	}
	for _, f := range []struct{ name, value string }{{"hostname", s.Hostname}, {"auth_method", string(s.Auth)}, {"username", s.Username},
		{"username_password_mode", string(s.UsernameMode)}, {"retrieval_id", s.RetrievalID}} {
		if f.value != "" {
			return fieldErr(s, f.name, f.value, "only an ERI_V1 source has this field; leave it out for a local "+what)
		}
	}
	if s.Port != 0 {
		return fieldErr(s, "port", strconv.Itoa(s.Port), "only an ERI_V1 source has a port; leave it out for a local "+what)
	}
	return nil
}

func (s Source) validateERI() error {
	if s.Path != "" {
		return fieldErr(s, "path", s.Path, "an ERI_V1 source has no path; give its server in hostname")
	}
	if s.Embedding != "" {
		return fieldErr(s, "embedding_provider", s.Embedding, "an ERI_V1 server embeds on its own; leave the embedding provider out")
	}
	if s.MaxChunkTokens != 0 {
		return fieldErr(s, "max_chunk_tokens", strconv.Itoa(s.MaxChunkTokens), "an ERI_V1 server chunks on its own; leave it out")
	}
	if _, err := s.BaseURL(); err != nil {
		return err
	}
	switch s.Auth {
	case AuthNone, AuthToken:
		if s.Username != "" || s.UsernameMode != "" {
			return fieldErr(s, "username", s.Username, "only USERNAME_PASSWORD signs in with a user name; leave username and username_password_mode out")
		}
	case AuthUsernamePassword:
		switch s.UsernameMode {
		case UserManaged, SharedUsernameAndPassword, "":
			if strings.TrimSpace(s.Username) == "" {
				return fieldErr(s, "username", "", "USERNAME_PASSWORD needs the user name to sign in with (or username_password_mode OS_USERNAME_SHARED_PASSWORD)")
			}
		case OSUsernameSharedPassword:
		default:
			return fieldErr(s, "username_password_mode", string(s.UsernameMode), "use USER_MANAGED, SHARED_USERNAME_AND_PASSWORD or OS_USERNAME_SHARED_PASSWORD")
		}
		if hasControl(s.Username, false) || utf8.RuneCountInString(s.Username) > 256 {
			return fieldErr(s, "username", s.Username, "use at most 256 characters on one line")
		}
	case AuthKerberos:
		return fieldErr(s, "auth_method", string(s.Auth), "Kerberos sign-in at ERI servers is not supported yet: use NONE, USERNAME_PASSWORD or TOKEN")
	case "":
		return fieldErr(s, "auth_method", "", "use NONE, USERNAME_PASSWORD or TOKEN")
	default:
		return fieldErr(s, "auth_method", string(s.Auth), "use NONE, USERNAME_PASSWORD or TOKEN")
	}
	if utf8.RuneCountInString(s.RetrievalID) > MaxRetrievalIDChars || hasControl(s.RetrievalID, false) {
		return fieldErr(s, "retrieval_id", s.RetrievalID, fmt.Sprintf("use the ID of one of the server's retrieval processes (see steward sources show), at most %d characters", MaxRetrievalIDChars))
	}
	return nil
}

// BaseURL is the ERI server's base address: the hostname's scheme, host
// and path with the port, ending in a slash. Plain http is only accepted
// for a loopback address, because a password or token would travel
// unencrypted.
func (s Source) BaseURL() (*url.URL, error) {
	const allowed = "use https://host (or http:// for 127.0.0.1 or ::1 only), without user name, query or fragment, e.g. https://eri.example.org"
	if strings.TrimSpace(s.Hostname) == "" {
		return nil, fieldErr(s, "hostname", "", "an ERI_V1 source needs its server's address: "+allowed)
	}
	u, err := url.Parse(s.Hostname)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fieldErr(s, "hostname", s.Hostname, allowed)
	}
	scheme := strings.ToLower(u.Scheme)
	host := u.Hostname()
	switch scheme {
	case "https":
	case "http":
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return nil, fieldErr(s, "hostname", s.Hostname, "plain http would send the sign-in unencrypted; "+allowed)
		}
	default:
		return nil, fieldErr(s, "hostname", s.Hostname, allowed)
	}
	if s.Port < 0 || s.Port > 65535 {
		return nil, fieldErr(s, "port", strconv.Itoa(s.Port), "use 1 to 65535, or leave it out for the address's port or the scheme's default")
	}
	port := u.Port()
	switch {
	case port != "" && s.Port != 0 && port != strconv.Itoa(s.Port):
		return nil, fieldErr(s, "port", strconv.Itoa(s.Port), fmt.Sprintf("the hostname already names port %s; give the port once", port))
	case port == "" && s.Port != 0:
		port = strconv.Itoa(s.Port)
	case port == "" && scheme == "https":
		port = "443"
	case port == "":
		port = "80"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fieldErr(s, "hostname", s.Hostname, "the port in the address must be 1 to 65535")
	}
	path := u.EscapedPath()
	if !strings.HasSuffix(path, "/") {
		path += "/"
	}
	out := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	out, err = out.Parse(path)
	if err != nil {
		return nil, fieldErr(s, "hostname", s.Hostname, allowed)
	}
	return out, nil
}

// ValidateAll validates every source and checks that IDs and names are
// unique (names compared case-insensitively). It returns one error per
// problem, in the sources' order.
func ValidateAll(sources []Source) []error {
	var errs []error
	ids := map[string]bool{}
	names := map[string]string{}
	for _, s := range sources {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		key := strings.ToLower(s.ID)
		if ids[key] {
			errs = append(errs, fieldErr(s, "id", s.ID, "another data source has this ID already; choose another"))
			continue
		}
		ids[key] = true
		n := strings.ToLower(s.Name)
		if other, dup := names[n]; dup {
			errs = append(errs, fieldErr(s, "name", s.Name, fmt.Sprintf("the data source %s has this name already; names must be unique", other)))
			continue
		}
		names[n] = s.ID
	}
	return errs
}

// Sort orders sources by number, then ID: the order every list and the
// tool description use, so that it stays the same while nothing changes.
func Sort(sources []Source) {
	sort.SliceStable(sources, func(i, j int) bool {
		if sources[i].Number != sources[j].Number {
			return sources[i].Number < sources[j].Number
		}
		return sources[i].ID < sources[j].ID
	})
}

// hasControl reports control characters; with lines, line breaks and tabs
// are allowed.
func hasControl(s string, lines bool) bool {
	for _, r := range s {
		if lines && (r == '\n' || r == '\t' || r == '\r') {
			continue
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}
