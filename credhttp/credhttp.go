package credhttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
)

// MaxRedirects is how many redirects within the origin a request follows.
const MaxRedirects = 10

// RedirectError is a redirect that was not followed because it would have
// taken the request, and the secret it carries, to another origin.
type RedirectError struct {
	// Setting names the configuration the request was built from, such as
	// "web_search.brave.baseUrl" or "provider anthropic (--base-url)".
	Setting string
	// From is the origin the request was sent to; To is the origin the
	// server redirected it to.
	From, To string
	// Status is the redirect's HTTP status.
	Status int
}

func (e *RedirectError) Error() string {
	answer := "a redirect"
	if e.Status != 0 {
		answer = fmt.Sprintf("HTTP %d, a redirect,", e.Status)
	}
	return fmt.Sprintf("%s: the server at %s answered with %s to %s, another origin; Steward does not follow it with your credentials, so nothing was sent there",
		e.Setting, e.From, answer, e.To)
}

// Client returns a copy of base (nil: a new client) whose redirects stay
// within the origin of the request that started them. A redirect elsewhere
// makes Do return an error wrapping *RedirectError that names setting.
// base's own CheckRedirect, if any, still runs for redirects within the
// origin.
func Client(base *http.Client, setting string) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) == 0 {
			return nil
		}
		from, to := Origin(via[0].URL), Origin(req.URL)
		if from != to {
			rerr := &RedirectError{Setting: setting, From: from, To: to}
			if req.Response != nil {
				rerr.Status = req.Response.StatusCode
			}
			return rerr
		}
		if len(via) >= MaxRedirects {
			return fmt.Errorf("%s: stopped after %d redirects within %s", setting, MaxRedirects, from)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &c
}

// AsRedirectError returns the RedirectError inside err, if there is one.
func AsRedirectError(err error) (*RedirectError, bool) {
	var r *RedirectError
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// Origin returns scheme://host[:port] of u in lower case, without the
// scheme's default port, the way a browser compares origins.
func Origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// secretHeaders are the headers Steward carries secrets in, canonical.
var secretHeaders = []string{
	"Authorization",
	"Proxy-Authorization",
	"Cookie",
	"X-Api-Key",            // Anthropic
	"Api-Key",              // Azure OpenAI
	"X-Goog-Api-Key",       // Google
	"X-Subscription-Token", // Brave Search
	"Token",                // ERI v1: the token /auth returned
	"Password",             // ERI v1: USERNAME_PASSWORD's default field
}

// secretFields are the JSON body fields Steward carries secrets in.
var secretFields = []string{
	"api_key",
	"password",
	"client_secret",
	"access_token",
	"refresh_token",
	"token", // ERI v1: /auth's answer
}

// IsSecretHeader reports whether Steward carries secrets in the header
// name, compared case-insensitively.
func IsSecretHeader(name string) bool {
	c := textproto.CanonicalMIMEHeaderKey(name)
	for _, h := range secretHeaders {
		if h == c {
			return true
		}
	}
	return false
}

// SecretHeaders lists the headers Steward carries secrets in.
func SecretHeaders() []string { return append([]string(nil), secretHeaders...) }

// SecretFields lists the JSON body fields Steward carries secrets in.
func SecretFields() []string { return append([]string(nil), secretFields...) }
