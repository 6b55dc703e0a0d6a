package web

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/stewardhq/steward/policy"
)

// Policy says which targets a retrieval may reach. It follows from who chose
// the address.
type Policy int

const (
	// PublicOnly reaches public addresses only: never private, loopback,
	// link-local, multicast or metadata targets. web_search uses it. It is
	// the zero value, so a forgotten policy is the strictest one.
	PublicOnly Policy = iota
	// AllowList additionally reaches a private host for which
	// Options.IsPrivateHostAllowed reports true, and only when the provider
	// has HIGH confidence (an organization's list of trusted providers is
	// no confidence and does not count); the page then requires HIGH. Loopback, link-local and the other never-allowed
	// addresses stay refused. read_web_page uses it.
	AllowList
	// UserChosen lifts the target restrictions for an address the user
	// typed themselves (steward read, steward ask --url): their own network
	// and a local server are legitimate then. The user chose that address,
	// not where its server redirects: a redirect to a metadata endpoint or
	// a link-local, multicast or reserved address is refused, and one into
	// private or loopback space only followed when the address the user
	// typed is itself private or loopback. It must NEVER be used for an
	// address that reached Steward through a model, a tool result or a
	// fetched page; IsTargetAllowed and the scheme check still apply.
	UserChosen
)

// String returns the policy's name.
func (p Policy) String() string {
	switch p {
	case PublicOnly:
		return "PUBLIC_ONLY"
	case AllowList:
		return "ALLOW_LIST"
	case UserChosen:
		return "USER_CHOSEN"
	}
	return "Policy(?)"
}

// Defaults of a retrieval.
const (
	DefaultMaxBytes       = 5 << 20
	DefaultTimeout        = 60 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	DefaultHeaderTimeout  = 30 * time.Second
	// MaxRedirects is how many redirects are followed after the first
	// request.
	MaxRedirects = 10
)

// Options are the per-retrieval choices of the caller.
type Options struct {
	// Policy decides which targets are acceptable; see the constants.
	Policy Policy
	// IsPrivateHostAllowed reports whether a private host (lower-case ASCII
	// name without a trailing dot, or an IP's text) is on the allowlist.
	// Only consulted under AllowList; nil allows none.
	IsPrivateHostAllowed func(host string) bool
	// ProviderConfidence is the confidence of the provider the page will be
	// sent to.
	ProviderConfidence policy.Confidence
	// Timeout covers the whole chain of requests and reading the body;
	// zero means DefaultTimeout.
	Timeout time.Duration
	// IsTargetAllowed, when set, runs before every hop (the first request
	// and each redirect); false refuses the hop with ErrTargetNotAllowed.
	// Tools use it to keep requests inside a configured wiki.
	IsTargetAllowed func(u *url.URL) bool
	// OnPrivateHostBlocked, when set, is told the host name of an
	// allow-listed private host refused for insufficient confidence, so the
	// caller can log it and tell the user.
	OnPrivateHostBlocked func(host string)
	// MaxBytes caps the decompressed body; zero means DefaultMaxBytes.
	MaxBytes int64
	// SignIn, when set, is the operating-system sign-in. It is used only
	// when a server answers a hop with HTTP 401 and a Negotiate challenge,
	// and only when all of these hold for that hop: the provider has HIGH
	// confidence; the hop is https, on the same scheme, host
	// and port as the first request; the host is not a local name; and its
	// addresses are all private with IsPrivateHostAllowed true for the
	// host, or all public with IsSignInAllowedForPublicHost true. The hop
	// is then sent once more with the sign-in; a second 401 is
	// ErrSignInRefused. No other hop ever carries it. Nil never signs in.
	SignIn SignIn
	// IsSignInAllowedForPublicHost reports whether a host whose addresses
	// are all public may get the operating-system sign-in. Only hosts the
	// user configured (such as a wiki) may qualify; nil allows none.
	IsSignInAllowedForPublicHost func(host string) bool
}

// Resolver looks up a host's addresses. *net.Resolver satisfies it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// DialFunc opens a connection to network address addr ("ip:port").
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// ServiceOptions configure a Service. The zero value is production: the
// system resolver, a dialer whose Control function re-checks every address
// it connects to, and the default timeouts.
type ServiceOptions struct {
	// Resolver replaces net.DefaultResolver (tests inject one).
	Resolver Resolver
	// Dial replaces the checking net.Dialer. It is only ever called with
	// an IP address that passed the policy checks, so a test can give
	// testenv.FailDial to prove that a refused target is never dialed.
	Dial DialFunc
	// ConnectTimeout bounds each connection attempt and TLS handshake.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for response headers after a request
	// was written.
	HeaderTimeout time.Duration
	// TLSConfig, when set, is cloned for HTTPS (tests add a root CA).
	TLSConfig *tls.Config
	// UserAgent replaces the default User-Agent.
	UserAgent string
	// Logger receives hop decisions with redacted addresses; nil discards.
	Logger *slog.Logger
	// Now replaces time.Now for RetrievedAt.
	Now func() time.Time
}

// DefaultUserAgent names Steward; servers that sniff for browsers still see
// a browser-like prefix.
const DefaultUserAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Steward/1.0 (+https://github.com/stewardhq/steward)"
