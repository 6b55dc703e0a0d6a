package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/stewardhq/steward/policy"
)

// SignIn is the operating-system sign-in (Kerberos through SPNEGO, the
// "Negotiate" scheme) that a retrieval may use on hops that qualify; see
// Options.SignIn. web/kerberos implements it.
type SignIn interface {
	// Authorize adds the Authorization header for the server req goes to,
	// whose service principal is HTTP/<req.URL.Hostname()>. It is called
	// once per qualifying hop that the server challenged, with the request
	// about to be sent. Its error must not contain tickets or keys.
	Authorize(req *http.Request) error
}

// ErrSignInRefused is the answer HTTP 401 to a request that carried the
// operating-system sign-in: the server did not accept the signed-in user.
var ErrSignInRefused = errors.New("the server refused the operating-system sign-in (HTTP 401 Unauthorized): " +
	"the signed-in user may have no access to this page, or the server does not accept this user's Kerberos ticket")

// SignInError is a sign-in that could not be made: no ticket cache, no
// ticket for the server, or an unreadable Kerberos configuration. The page
// was not requested with credentials.
type SignInError struct{ Err error }

// Error returns "the operating-system sign-in could not be used: <cause>".
func (e *SignInError) Error() string {
	return "the operating-system sign-in could not be used: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *SignInError) Unwrap() error { return e.Err }

// signInPermitted reports whether the hop to hop, whose checked addresses
// are in p, may carry the operating-system sign-in. All of these must hold
// (the reference's rule, without its exception for providers trusted by
// configuration, which are no more confident for it): a SignIn is
// configured; the provider has HIGH confidence; the hop is https, on the scheme, host and port
// of the first request; the host is not a local name; and its addresses are
// either all private with the host on the private-host allowlist, or all
// public with the host named by IsSignInAllowedForPublicHost. Loopback,
// link-local and the other never-allowed addresses never get it, not even
// when the user chose the address.
func signInPermitted(first, hop *url.URL, p pin, o Options) bool {
	if o.SignIn == nil || hop.Scheme != "https" {
		return false
	}
	if o.ProviderConfidence < policy.High {
		return false
	}
	name := hop.Hostname()
	if first.Scheme != hop.Scheme || first.Hostname() != name || portOrDefault(first) != portOrDefault(hop) {
		return false
	}
	if name == "" || isLocalHostName(name) || len(p.ips) == 0 {
		return false
	}
	allPrivate, allPublic := true, true
	for _, ip := range p.ips {
		switch classify(ip) {
		case classPublic:
			allPrivate = false
		case classPrivate:
			allPublic = false
		default:
			return false
		}
	}
	switch {
	case allPrivate:
		return o.IsPrivateHostAllowed != nil && o.IsPrivateHostAllowed(name)
	case allPublic:
		return o.IsSignInAllowedForPublicHost != nil && o.IsSignInAllowedForPublicHost(name)
	}
	return false
}

// portOrDefault returns u's port, or the scheme's default.
func portOrDefault(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// challengesNegotiate reports whether a 401 answer offers the Negotiate
// scheme in one of its WWW-Authenticate headers.
func challengesNegotiate(resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized {
		return false
	}
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		for _, part := range strings.Split(v, ",") {
			scheme, _, _ := strings.Cut(strings.TrimSpace(part), " ")
			if strings.EqualFold(scheme, "Negotiate") {
				return true
			}
		}
	}
	return false
}
