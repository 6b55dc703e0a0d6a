package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/policy"
)

// Service reads web pages. It is safe for concurrent use; each Retrieve gets
// its own transport, cookie jar and connection pool, so connections checked
// under one policy are never reused under another.
type Service struct {
	resolver       Resolver
	dial           DialFunc
	connectTimeout time.Duration
	headerTimeout  time.Duration
	opts           ServiceOptions
	log            *slog.Logger
	now            func() time.Time
}

// NewService builds a Service; see ServiceOptions for the defaults.
func NewService(opts ServiceOptions) *Service {
	s := &Service{
		resolver:       opts.Resolver,
		dial:           opts.Dial,
		connectTimeout: opts.ConnectTimeout,
		headerTimeout:  opts.HeaderTimeout,
		opts:           opts,
		log:            opts.Logger,
		now:            opts.Now,
	}
	if s.resolver == nil {
		s.resolver = net.DefaultResolver
	}
	if s.connectTimeout <= 0 {
		s.connectTimeout = DefaultConnectTimeout
	}
	if s.headerTimeout <= 0 {
		s.headerTimeout = DefaultHeaderTimeout
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.opts.UserAgent == "" {
		s.opts.UserAgent = DefaultUserAgent
	}
	return s
}

// ContentKind tells an extracted HTML page from a text document returned as
// sent. A short text document is complete; a short extracted page usually is
// not.
type ContentKind int

const (
	// HTMLPage is the main content of an HTML page, converted to Markdown.
	HTMLPage ContentKind = iota
	// TextDocument is a text format (plain, JSON, XML, YAML, CSV …) as the
	// server sent it, with line endings unified.
	TextDocument
)

// String returns "HTML_PAGE" or "TEXT_DOCUMENT".
func (k ContentKind) String() string {
	if k == TextDocument {
		return "TEXT_DOCUMENT"
	}
	return "HTML_PAGE"
}

// MarshalText writes the kind's name.
func (k ContentKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Timings are how long the phases of a retrieval took, summed over hops.
// In JSON they are milliseconds: {"dns_ms":…,"connect_ms":…,"total_ms":…}.
type Timings struct {
	DNS     time.Duration // name lookups
	Connect time.Duration // TCP connection attempts (TLS not included)
	Total   time.Duration // from the call to the extracted page
}

// MarshalJSON writes the timings in milliseconds.
func (t Timings) MarshalJSON() ([]byte, error) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return json.Marshal(struct {
		DNS     float64 `json:"dns_ms"`
		Connect float64 `json:"connect_ms"`
		Total   float64 `json:"total_ms"`
	}{ms(t.DNS), ms(t.Connect), ms(t.Total)})
}

// Page is one retrieved page. Its JSON form is what `steward read --json`
// prints (times in RFC 3339, omitted when unknown).
type Page struct {
	RequestedURL string      `json:"requested_url"`
	FinalURL     string      `json:"final_url"` // after redirects
	Title        string      `json:"title,omitempty"`
	Description  string      `json:"description,omitempty"`
	Authors      []string    `json:"authors,omitempty"`
	Language     string      `json:"language,omitempty"`
	Published    time.Time   `json:"published,omitzero"` // zero when unknown
	Modified     time.Time   `json:"modified,omitzero"`  // zero when unknown
	ContentKind  ContentKind `json:"content_kind"`
	// Markdown is the extracted main content (HTMLPage) or the document
	// (TextDocument), untruncated and unfiltered.
	Markdown  string `json:"markdown"`
	MediaType string `json:"media_type"` // without parameters, e.g. "text/html"
	// RequiredConfidence is policy.High when an allow-listed private host
	// was read, else policy.None.
	RequiredConfidence policy.Confidence `json:"required_confidence"`
	// PrivateTarget reports that some hop resolved to a non-public address
	// (possible under AllowList and UserChosen).
	PrivateTarget bool `json:"private_target"`
	// OriginalChars is the length of Markdown in runes (Unicode code
	// points), for reporting truncation.
	OriginalChars int       `json:"original_chars"`
	StatusCode    int       `json:"status_code"`
	Redirects     int       `json:"redirects"`
	RetrievedAt   time.Time `json:"retrieved_at"`
	Timings       Timings   `json:"timings"`
	// SignedIn reports that the final answer came to a request with the
	// operating-system sign-in.
	SignedIn bool `json:"signed_in,omitempty"`
}

// pin is what a hop's check decided for one host:port.
type pin struct {
	ips   []netip.Addr
	class addrClass // the worst class among ips; policy already accepted it
	user  bool      // accepted because the user chose the target
}

// call is the state of one Retrieve: the pins the dialer may use.
type call struct {
	s    *Service
	mu   sync.Mutex
	pins map[string]pin // key: host:port as net/http dials it
	dns  time.Duration
	conn time.Duration
}

func (c *call) setPin(hostport string, p pin) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pins[hostport] = p
}

// dialContext is the transport's dialer. It never resolves: it dials only
// the addresses the hop check validated for this host:port, in order, and
// re-checks each one right before dialing.
func (c *call) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	p, ok := c.pins[addr]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("web: no checked addresses for this host; refusing to dial")
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range p.ips {
		if err := allowedToDial(ip, p); err != nil {
			errs = append(errs, err)
			continue
		}
		start := time.Now()
		conn, err := c.s.dialIP(ctx, network, net.JoinHostPort(ip.String(), port), p)
		c.mu.Lock()
		c.conn += time.Since(start)
		c.mu.Unlock()
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// allowedToDial re-applies the policy decision to one address.
func allowedToDial(ip netip.Addr, p pin) error {
	if p.user {
		return nil
	}
	switch classify(ip) {
	case classNever:
		return ErrNeverAllowedAddress
	case classPrivate:
		if p.class != classPrivate {
			return ErrPrivateHostNotAllowed
		}
	}
	return nil
}

// dialIP connects to one checked address. In production the net.Dialer's
// Control function checks the address once more at the socket, after
// whatever Go did to it, so nothing but a checked address is connected.
// The connect timeout bounds the attempt through its context, for the
// production dialer and an injected one alike.
func (s *Service) dialIP(ctx context.Context, network, addr string, p pin) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, s.connectTimeout)
	defer cancel()
	var conn net.Conn
	var err error
	if s.dial != nil {
		conn, err = s.dial(dctx, network, addr)
	} else {
		d := &net.Dialer{Control: controlFor(p)}
		conn, err = d.DialContext(dctx, network, addr)
	}
	if err != nil && ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
		if conn != nil {
			conn.Close()
		}
		return nil, connectTimeoutError{err}
	}
	return conn, err
}

// connectTimeoutError is a connection attempt that ran out of the connect
// timeout while the retrieval still had time.
type connectTimeoutError struct{ err error }

func (e connectTimeoutError) Error() string   { return ErrConnectTimeout.Error() }
func (e connectTimeoutError) Unwrap() error   { return e.err }
func (e connectTimeoutError) Timeout() bool   { return true }
func (e connectTimeoutError) Temporary() bool { return true }
func (e connectTimeoutError) Is(target error) bool {
	return target == ErrConnectTimeout
}

// controlFor returns the socket-level check for a pin: public pins go
// through the ssrf guardian; allow-listed private pins may not reach a
// never-allowed address; user-chosen pins are not restricted.
func controlFor(p pin) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if p.user {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("web: refusing to dial %q: %w", network, err)
		}
		if p.class == classPublic {
			if err := publicGuard.Safe(network, address, nil); err != nil {
				return ErrPrivateHostNotAllowed
			}
		}
		return allowedToDial(ap.Addr(), p)
	}
}

// Retrieve reads rawURL under o's policy and returns the page's main content
// as Markdown (HTML) or the document as sent (text). Every hop is checked
// before it is connected; refusals are *BlockedError values.
func (s *Service) Retrieve(ctx context.Context, rawURL string, o Options) (*Page, error) {
	start := time.Now()
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	maxBytes := o.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	timeoutOr := func(err error) error { return s.timeoutOr(parent, ctx, timeout, err) }

	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, ErrInvalidAddress
	}
	c := &call{s: s, pins: map[string]pin{}}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            c.dialContext,
		TLSHandshakeTimeout:    s.connectTimeout,
		ResponseHeaderTimeout:  s.headerTimeout,
		DisableCompression:     true,
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: 256 << 10,
		IdleConnTimeout:        time.Second,
		// A page is read whole: fewer, larger reads of the connection.
		ReadBufferSize: 64 << 10,
	}
	if s.opts.TLSConfig != nil {
		tr.TLSClientConfig = s.opts.TLSConfig.Clone()
	}
	defer tr.CloseIdleConnections()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{
		Transport: tr,
		Jar:       jar,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}

	page := &Page{RequestedURL: rawURL}
	seen := map[string]bool{}
	cur := u
	var first *url.URL // the first request, for the sign-in rule
	var resp *http.Response
	var hc hopContext
	for hop := 0; ; hop++ {
		hc.redirect = hop > 0
		reqURL, p, err := s.checkHop(ctx, c, cur, o, hc)
		if err != nil {
			return nil, timeoutOr(err)
		}
		if first == nil {
			first = reqURL
			// What the user typed decides where its redirects may go.
			hc.userNamedLocal = p.class != classPublic
		}
		if p.class != classPublic {
			page.PrivateTarget = true
			if p.class == classPrivate && !p.user {
				page.RequiredConfidence = policy.High
			}
		}
		seen[redirectKey(reqURL)] = true
		s.log.DebugContext(ctx, "web: requesting", "url", RedactURL(reqURL), "hop", hop, "policy", o.Policy.String())
		resp, err = s.do(ctx, client, reqURL, hop, nil)
		if err != nil {
			return nil, timeoutOr(err)
		}
		page.SignedIn = false
		if challengesNegotiate(resp) && signInPermitted(first, reqURL, p, o) {
			drainAndClose(resp.Body)
			s.log.DebugContext(ctx, "web: signing in with the operating-system sign-in", "url", RedactURL(reqURL), "hop", hop)
			resp, err = s.do(ctx, client, reqURL, hop, o.SignIn)
			if err != nil {
				return nil, timeoutOr(err)
			}
			if resp.StatusCode == http.StatusUnauthorized {
				drainAndClose(resp.Body)
				s.log.InfoContext(ctx, "web: the server refused the operating-system sign-in", "url", RedactURL(reqURL))
				return nil, ErrSignInRefused
			}
			page.SignedIn = true
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified {
			loc := resp.Header.Get("Location")
			drainAndClose(resp.Body)
			if loc == "" {
				return nil, ErrRedirectWithoutLocation
			}
			next, err := reqURL.Parse(loc)
			if err != nil {
				return nil, ErrBadRedirect
			}
			next.Fragment, next.RawFragment = "", ""
			if hop >= MaxRedirects {
				return nil, fmt.Errorf("%w (more than %d)", ErrTooManyRedirects, MaxRedirects)
			}
			if seen[redirectKey(next)] {
				return nil, ErrRedirectLoop
			}
			page.Redirects++
			cur = next
			continue
		}
		page.FinalURL = reqURL.String()
		break
	}
	defer resp.Body.Close()
	page.StatusCode = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		drainAndClose(resp.Body)
		return nil, &StatusError{Code: resp.StatusCode, Status: http.StatusText(resp.StatusCode), RetryAfter: resp.Header.Get("Retry-After")}
	}
	final, _ := url.Parse(page.FinalURL)
	if err := s.readContent(ctx, resp, final, maxBytes, page); err != nil {
		return nil, timeoutOr(err)
	}
	page.OriginalChars = utf8.RuneCountInString(page.Markdown)
	page.RetrievedAt = s.now().UTC()
	c.mu.Lock()
	page.Timings = Timings{DNS: c.dns, Connect: c.conn, Total: time.Since(start)}
	c.mu.Unlock()
	return page, nil
}

// timeoutOr turns a deadline of the retrieval into ErrTimeout. When the
// caller's own context ran out (an overall budget), the error also wraps
// the caller's context error, so the caller can tell the two apart.
func (s *Service) timeoutOr(parent, ctx context.Context, timeout time.Duration, err error) error {
	if IsBlocked(err) {
		return err
	}
	if perr := parent.Err(); perr != nil {
		if errors.Is(perr, context.DeadlineExceeded) {
			return fmt.Errorf("%w: the caller's time budget ran out: %w", ErrTimeout, perr)
		}
		return err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w after %s", ErrTimeout, formatSeconds(timeout))
	}
	if errors.Is(err, ErrConnectTimeout) || strings.Contains(err.Error(), "TLS handshake timeout") {
		return fmt.Errorf("%w: %w after %s", ErrTimeout, ErrConnectTimeout, formatSeconds(s.connectTimeout))
	}
	var ne net.Error
	// net/http does not export its header-timeout error; its text is the
	// only way to tell it from other timeouts.
	if errors.As(err, &ne) && ne.Timeout() && strings.Contains(err.Error(), "timeout awaiting response headers") {
		return fmt.Errorf("%w: %w after %s", ErrTimeout, ErrHeaderTimeout, formatSeconds(s.headerTimeout))
	}
	if errors.As(err, &ne) && ne.Timeout() && !IsBlocked(err) {
		return fmt.Errorf("%w: %v", ErrTimeout, ne)
	}
	return err
}

func formatSeconds(d time.Duration) string {
	if d%time.Second == 0 {
		n := int(d / time.Second)
		if n == 1 {
			return "1 second"
		}
		return strconv.Itoa(n) + " seconds"
	}
	return d.String()
}

// hopContext is what a hop's check needs to know of the hops before it.
type hopContext struct {
	// redirect is true for every hop after the first.
	redirect bool
	// userNamedLocal is true when the first address of a user-chosen
	// retrieval was itself private or loopback: its redirects may stay in
	// such space.
	userNamedLocal bool
}

// checkHop runs the per-hop checks of the reference in order and records
// the validated addresses for the dialer. It returns the URL to request:
// host normalized to ASCII, userinfo and fragment removed.
func (s *Service) checkHop(ctx context.Context, c *call, u *url.URL, o Options, hc hopContext) (*url.URL, pin, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		// url.Parse lower-cases the scheme already.
		return nil, pin{}, ErrUnsupportedScheme
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, pin{}, ErrInvalidAddress
	}
	h, err := normalizeHost(u.Hostname())
	if err != nil {
		return nil, pin{}, err
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, pin{}, ErrInvalidAddress
		}
	}
	req := *u
	req.User = nil // never send credentials a URL carries
	req.Fragment, req.RawFragment = "", ""
	if h.ip.Is6() {
		req.Host = "[" + h.name + "]"
	} else {
		req.Host = h.name
	}
	if port != "" {
		req.Host += ":" + port
	}
	if o.IsTargetAllowed != nil && !o.IsTargetAllowed(&req) {
		return nil, pin{}, ErrTargetNotAllowed
	}
	user := o.Policy == UserChosen
	userRedirect := user && hc.redirect
	if (!user || userRedirect) && !h.ip.IsValid() {
		if metadataHostNames[h.name] {
			s.log.InfoContext(ctx, "web: refused a metadata host", "url", RedactURL(&req), "redirect", hc.redirect)
			return nil, pin{}, ErrMetadataHost
		}
		if isLocalHostName(h.name) {
			if !user {
				return nil, pin{}, ErrLocalHostName
			}
			if !hc.userNamedLocal {
				s.log.InfoContext(ctx, "web: refused a redirect from a public page to this computer", "url", RedactURL(&req))
				return nil, pin{}, ErrRedirectToLocalNetwork
			}
		}
	}
	ips, err := s.resolve(ctx, c, h)
	if err != nil {
		return nil, pin{}, err
	}
	p := pin{ips: ips, user: user}
	for _, ip := range ips {
		if cl := classify(ip); cl > p.class {
			p.class = cl
		}
	}
	if userRedirect {
		if err := userRedirectAllowed(ips, hc.userNamedLocal); err != nil {
			s.log.InfoContext(ctx, "web: refused a redirect of a page the user chose", "url", RedactURL(&req), "reason", string(err.(*BlockedError).Reason))
			return nil, pin{}, err
		}
	}
	if !user {
		switch p.class {
		case classNever:
			s.log.InfoContext(ctx, "web: refused a never-allowed address", "url", RedactURL(&req))
			return nil, pin{}, ErrNeverAllowedAddress
		case classPrivate:
			if o.Policy != AllowList || o.IsPrivateHostAllowed == nil || !o.IsPrivateHostAllowed(h.name) {
				s.log.InfoContext(ctx, "web: refused a private host", "url", RedactURL(&req))
				return nil, pin{}, ErrPrivateHostNotAllowed
			}
			// Only a HIGH provider reads an allowed private host; being
			// listed as trusted for data-source security is no confidence.
			if o.ProviderConfidence < policy.High {
				if o.OnPrivateHostBlocked != nil {
					o.OnPrivateHostBlocked(h.name)
				}
				return nil, pin{}, ErrInsufficientConfidence
			}
		}
	}
	dialPort := port
	if dialPort == "" {
		dialPort = "80"
		if u.Scheme == "https" {
			dialPort = "443"
		}
	}
	c.setPin(net.JoinHostPort(h.name, dialPort), p)
	return &req, p, nil
}

// userRedirectAllowed decides a redirect of a page the user chose: public
// addresses are fine; loopback and private ones only when the user named
// such an address first; link-local, metadata, multicast, unspecified and
// reserved addresses never. Every address of the host must pass, since
// the dialer may use any of them.
func userRedirectAllowed(ips []netip.Addr, userNamedLocal bool) error {
	for _, ip := range ips {
		switch classify(ip) {
		case classPublic:
		case classPrivate:
			if !userNamedLocal {
				return ErrRedirectToLocalNetwork
			}
		default:
			if !ip.Unmap().IsLoopback() {
				return ErrNeverAllowedAddress
			}
			if !userNamedLocal {
				return ErrRedirectToLocalNetwork
			}
		}
	}
	return nil
}

// resolve returns the host's distinct addresses in answer order.
func (s *Service) resolve(ctx context.Context, c *call, h host) ([]netip.Addr, error) {
	if h.ip.IsValid() {
		return []netip.Addr{h.ip}, nil
	}
	start := time.Now()
	answers, err := s.resolver.LookupIPAddr(ctx, h.name)
	c.mu.Lock()
	c.dns += time.Since(start)
	c.mu.Unlock()
	if err != nil {
		return nil, &ResolveError{Err: err}
	}
	var ips []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, a := range answers {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if seen[ip] {
			continue
		}
		seen[ip] = true
		ips = append(ips, ip)
	}
	if len(ips) == 0 {
		return nil, ErrNoAddresses
	}
	return ips, nil
}

// do sends one GET with the reference's navigation headers, signed in
// with signIn when it is not nil.
func (s *Service) do(ctx context.Context, client *http.Client, u *url.URL, hop int, signIn SignIn) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, ErrInvalidAddress
	}
	req.Header.Set("User-Agent", s.opts.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Language", "en-US,en;q=0.9")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	req.Header.Set("Upgrade-Insecure-Requests", "1")
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Sec-Fetch-User", "?1")
	if hop == 0 {
		req.Header.Set("Sec-Fetch-Site", "none")
	} else {
		req.Header.Set("Sec-Fetch-Site", "cross-site")
	}
	if signIn != nil {
		if err := signIn.Authorize(req); err != nil {
			return nil, &SignInError{Err: err}
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error would repeat the URL with its query
		}
		if IsBlocked(err) {
			return nil, err
		}
		return nil, &FetchError{Err: err}
	}
	return resp, nil
}

// drainAndClose reads a little of a body we do not use, so the connection
// can be reused, and closes it.
func drainAndClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	_ = body.Close()
}

// redirectKey identifies a request for loop detection: scheme and host
// lower-cased, path and query exact, no fragment or userinfo.
func redirectKey(u *url.URL) string {
	k := *u
	k.User = nil
	k.Fragment, k.RawFragment = "", ""
	return k.String()
}
