package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/policy"
)

// fakeSignIn records the hosts and paths it was asked to sign in for and
// adds a header the test server recognizes for that host.
type fakeSignIn struct {
	mu    sync.Mutex
	asked []string
	err   error
}

func (f *fakeSignIn) Authorize(req *http.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, req.URL.Hostname()+":"+req.URL.Port()+req.URL.Path)
	if f.err != nil {
		return f.err
	}
	req.Header.Set("Authorization", "Negotiate fake-"+req.URL.Hostname())
	return nil
}

func (f *fakeSignIn) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// signInServer answers like an intranet server that wants Negotiate. It
// records every Authorization header it saw, by host:port.
type signInServer struct {
	mu    sync.Mutex
	auths map[string][]string
	// other is the https base (scheme://host:port) /auth-redirect-other
	// and /auth-redirect-port send to.
	other, otherPort, plain string
}

func (s *signInServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	s.auths[r.Host] = append(s.auths[r.Host], auth)
	s.mu.Unlock()
	signedIn := auth == "Negotiate fake-"+host
	challenge := func() {
		w.Header().Add("WWW-Authenticate", "Basic realm=\"x\"")
		w.Header().Add("WWW-Authenticate", "Negotiate")
		w.WriteHeader(http.StatusUnauthorized)
	}
	switch r.URL.Path {
	case "/open":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "open page")
	case "/protected":
		if !signedIn {
			challenge()
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "protected page for "+host)
	case "/refuse":
		challenge()
	case "/basic":
		w.Header().Set("WWW-Authenticate", "Basic realm=\"x\"")
		w.WriteHeader(http.StatusUnauthorized)
	case "/auth-redirect-same", "/auth-redirect-other", "/auth-redirect-port", "/auth-redirect-http":
		if !signedIn {
			challenge()
			return
		}
		to := map[string]string{
			"/auth-redirect-same":  "/protected",
			"/auth-redirect-other": s.other + "/protected",
			"/auth-redirect-port":  s.otherPort + "/protected",
			"/auth-redirect-http":  s.plain + "/protected",
		}[r.URL.Path]
		http.Redirect(w, r, to, http.StatusFound)
	default:
		http.NotFound(w, r)
	}
}

func (s *signInServer) seen(hostport string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths[hostport]...)
}

// TestSignInConditions reads pages from a made-up intranet (names resolved
// by a fake resolver, private addresses routed to loopback servers) and
// checks for every condition of the sign-in rule which hops were signed in.
func TestSignInConditions(t *testing.T) {
	h := &signInServer{auths: map[string][]string{}}
	tlsA := httptest.NewTLSServer(h)
	defer tlsA.Close()
	tlsB := httptest.NewTLSServer(h)
	defer tlsB.Close()
	plain := httptest.NewServer(h)
	defer plain.Close()
	pA, pB, pPlain := portOf(t, tlsA.URL), portOf(t, tlsB.URL), portOf(t, plain.URL)
	h.other = "https://other.example.com:" + pA
	h.otherPort = "https://intranet.example.com:" + pB
	h.plain = "http://intranet.example.com:" + pPlain

	const (
		intranetIP = "10.1.2.3"
		otherIP    = "10.1.2.4"
		publicIP   = "8.8.8.8" // routed to loopback; never contacted
	)
	rt := newRouter(t)
	for _, ip := range []string{intranetIP, otherIP, publicIP} {
		rt.route(ip, tlsA.URL)
		rt.route(ip, tlsB.URL)
		rt.route(ip, plain.URL)
	}
	res := newResolver(map[string][]string{
		"intranet.example.com": {intranetIP},
		"other.example.com":    {otherIP},
		"www.example.com":      {publicIP},
		"mixed.example.com":    {intranetIP, publicIP},
	})
	pool := x509.NewCertPool()
	pool.AddCert(tlsA.Certificate())
	s := NewService(ServiceOptions{Resolver: res, Dial: rt.dial, TLSConfig: &tls.Config{RootCAs: pool}})

	intranet := "https://intranet.example.com:" + pA
	allowed := allowOnly("intranet.example.com", "other.example.com", "mixed.example.com")
	high := Options{Policy: AllowList, IsPrivateHostAllowed: allowed, ProviderConfidence: policy.High}
	with := func(o Options, f func(*Options)) Options { f(&o); return o }

	tests := []struct {
		name    string
		url     string
		opts    Options
		signErr error
		// want is the page text, or empty when an error is expected.
		want      string
		wantErr   error
		wantCode  int      // a *StatusError with this code
		wantAsked []string // hops the sign-in was asked for
		noAuthAt  string   // a host:port that must never have seen a header
	}{
		{name: "allowed private host, HIGH", url: intranet + "/protected", opts: high,
			want: "protected page for intranet.example.com", wantAsked: []string{"intranet.example.com:" + pA + "/protected"}},
		{name: "no challenge, no sign-in", url: intranet + "/open", opts: high, want: "open page"},
		{name: "redirect on the same host is signed in again", url: intranet + "/auth-redirect-same", opts: high,
			want:      "protected page for intranet.example.com",
			wantAsked: []string{"intranet.example.com:" + pA + "/auth-redirect-same", "intranet.example.com:" + pA + "/protected"}},
		{name: "http hop refused", url: "http://intranet.example.com:" + pPlain + "/protected", opts: high,
			wantCode: 401, noAuthAt: "intranet.example.com:" + pPlain},
		{name: "redirect to another allowed host gets no header", url: intranet + "/auth-redirect-other", opts: high,
			wantCode: 401, wantAsked: []string{"intranet.example.com:" + pA + "/auth-redirect-other"}, noAuthAt: "other.example.com:" + pA},
		{name: "redirect to another port gets no header", url: intranet + "/auth-redirect-port", opts: high,
			wantCode: 401, wantAsked: []string{"intranet.example.com:" + pA + "/auth-redirect-port"}, noAuthAt: "intranet.example.com:" + pB},
		{name: "redirect to http on the same host gets no header", url: intranet + "/auth-redirect-http",
			opts: high, wantCode: 401, wantAsked: []string{"intranet.example.com:" + pA + "/auth-redirect-http"}, noAuthAt: "intranet.example.com:" + pPlain},
		{name: "public host without the explicit allowance", url: "https://www.example.com:" + pA + "/protected",
			opts: high, wantCode: 401, noAuthAt: "www.example.com:" + pA},
		{name: "public host with the explicit allowance", url: "https://www.example.com:" + pA + "/protected",
			opts: with(high, func(o *Options) {
				o.IsSignInAllowedForPublicHost = func(h string) bool { return h == "www.example.com" }
			}),
			want: "protected page for www.example.com", wantAsked: []string{"www.example.com:" + pA + "/protected"}},
		{name: "LOW confidence public host with the allowance", url: "https://www.example.com:" + pA + "/protected",
			opts: with(high, func(o *Options) {
				o.ProviderConfidence = policy.Low
				o.IsSignInAllowedForPublicHost = func(string) bool { return true }
			}),
			wantCode: 401},
		{name: "LOW confidence private host is not read at all", url: intranet + "/protected",
			opts: with(high, func(o *Options) { o.ProviderConfidence = policy.Low }), wantErr: ErrInsufficientConfidence},
		{name: "private and public addresses mixed", url: "https://mixed.example.com:" + pA + "/protected",
			opts:     with(high, func(o *Options) { o.IsSignInAllowedForPublicHost = func(string) bool { return true } }),
			wantCode: 401, noAuthAt: "mixed.example.com:" + pA},
		{name: "only Basic offered", url: intranet + "/basic", opts: high, wantCode: 401},
		{name: "401 after the sign-in", url: intranet + "/refuse", opts: high,
			wantErr: ErrSignInRefused, wantAsked: []string{"intranet.example.com:" + pA + "/refuse"}},
		{name: "sign-in fails", url: intranet + "/protected", opts: high, signErr: errors.New("no ticket cache"),
			wantErr: &SignInError{}, wantAsked: []string{"intranet.example.com:" + pA + "/protected"}},
		{name: "user-chosen without an allowlist", url: intranet + "/protected", opts: Options{Policy: UserChosen, ProviderConfidence: policy.High},
			wantCode: 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSignIn{err: tc.signErr}
			o := tc.opts
			o.SignIn = f
			page, err := s.Retrieve(context.Background(), tc.url, o)
			var se *StatusError
			var sie *SignInError
			switch {
			case tc.want != "":
				if err != nil {
					t.Fatalf("error %v, want the page", err)
				}
				if page.Markdown != tc.want || page.SignedIn != (len(tc.wantAsked) > 0) {
					t.Errorf("page %q signed in %v, want %q", page.Markdown, page.SignedIn, tc.want)
				}
			case tc.wantCode != 0:
				if !errors.As(err, &se) || se.Code != tc.wantCode || errors.Is(err, ErrSignInRefused) {
					t.Fatalf("error %v, want the plain HTTP %d", err, tc.wantCode)
				}
			case errors.As(tc.wantErr, &sie):
				if !errors.As(err, &sie) || !strings.Contains(err.Error(), "operating-system sign-in") || !strings.Contains(err.Error(), "no ticket cache") {
					t.Fatalf("error %v, want a SignInError", err)
				}
			default:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				if errors.As(err, &se) {
					t.Errorf("error %v is also a status error", err)
				}
			}
			if got := f.calls(); strings.Join(got, " ") != strings.Join(tc.wantAsked, " ") {
				t.Errorf("sign-in asked for %q, want %q", got, tc.wantAsked)
			}
			if tc.noAuthAt != "" {
				for _, a := range h.seen(tc.noAuthAt) {
					if a != "" {
						t.Errorf("%s received an Authorization header", tc.noAuthAt)
					}
				}
			}
		})
	}
}

// TestSignInPermitted checks the rule on its own, including the cases the
// policy refuses before the rule is ever reached.
func TestSignInPermitted(t *testing.T) {
	mustURL := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	ips := func(ss ...string) pin {
		var p pin
		for _, s := range ss {
			a := netip.MustParseAddr(s)
			p.ips = append(p.ips, a)
			if c := classify(a); c > p.class {
				p.class = c
			}
		}
		return p
	}
	base := Options{SignIn: &fakeSignIn{}, IsPrivateHostAllowed: allowAll, ProviderConfidence: policy.High}
	first := mustURL("https://wiki.corp")
	tests := []struct {
		name  string
		first *url.URL
		hop   string
		pin   pin
		opts  func(*Options)
		want  bool
	}{
		{"all conditions hold", first, "https://wiki.corp/x", ips("10.0.0.1"), nil, true},
		{"explicit default port equals none", first, "https://wiki.corp:443/x", ips("10.0.0.1", "fd00::1"), nil, true},
		{"no sign-in configured", first, "https://wiki.corp/x", ips("10.0.0.1"), func(o *Options) { o.SignIn = nil }, false},
		{"MEDIUM confidence", first, "https://wiki.corp/x", ips("10.0.0.1"), func(o *Options) { o.ProviderConfidence = policy.Medium }, false},
		{"http hop", mustURL("http://wiki.corp"), "http://wiki.corp/x", ips("10.0.0.1"), nil, false},
		{"other port", first, "https://wiki.corp:8443/x", ips("10.0.0.1"), nil, false},
		{"other host", first, "https://sso.corp/x", ips("10.0.0.1"), nil, false},
		{"local host name", mustURL("https://intra.localhost"), "https://intra.localhost/", ips("10.0.0.1"), nil, false},
		{"no addresses", first, "https://wiki.corp/x", pin{}, nil, false},
		{"loopback address", first, "https://wiki.corp/x", ips("127.0.0.1"), nil, false},
		{"link-local address", first, "https://wiki.corp/x", ips("10.0.0.1", "169.254.169.254"), nil, false},
		{"private host not allowlisted", first, "https://wiki.corp/x", ips("10.0.0.1"), func(o *Options) { o.IsPrivateHostAllowed = allowOnly("other.corp") }, false},
		{"private host without an allowlist", first, "https://wiki.corp/x", ips("10.0.0.1"), func(o *Options) { o.IsPrivateHostAllowed = nil }, false},
		{"public host, allowlist is not enough", first, "https://wiki.corp/x", ips("8.8.8.8"), nil, false},
		{"public host allowed explicitly", first, "https://wiki.corp/x", ips("8.8.8.8"),
			func(o *Options) { o.IsSignInAllowedForPublicHost = allowOnly("wiki.corp") }, true},
		{"public allowance is not a private one", first, "https://wiki.corp/x", ips("10.0.0.1"),
			func(o *Options) { o.IsPrivateHostAllowed = nil; o.IsSignInAllowedForPublicHost = allowAll }, false},
		{"mixed public and private", first, "https://wiki.corp/x", ips("10.0.0.1", "8.8.8.8"),
			func(o *Options) { o.IsSignInAllowedForPublicHost = allowAll }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			if tc.opts != nil {
				tc.opts(&o)
			}
			if got := signInPermitted(tc.first, mustURL(tc.hop), tc.pin, o); got != tc.want {
				t.Errorf("signInPermitted = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChallengesNegotiate(t *testing.T) {
	tests := []struct {
		code    int
		headers []string
		want    bool
	}{
		{401, []string{"Negotiate"}, true},
		{401, []string{"negotiate abc=="}, true},
		{401, []string{"Basic realm=\"a, b\", Negotiate"}, true},
		{401, []string{"Basic realm=\"x\"", "NTLM", "Negotiate"}, true},
		{401, []string{"Basic realm=\"x\""}, false},
		{401, []string{"NegotiateX"}, false},
		{401, nil, false},
		{403, []string{"Negotiate"}, false},
	}
	for _, tc := range tests {
		r := &http.Response{StatusCode: tc.code, Header: http.Header{}}
		for _, h := range tc.headers {
			r.Header.Add("WWW-Authenticate", h)
		}
		if got := challengesNegotiate(r); got != tc.want {
			t.Errorf("%d %q: %v, want %v", tc.code, tc.headers, got, tc.want)
		}
	}
}
