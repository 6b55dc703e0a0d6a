package confluence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/web"
)

// Bounds of the REST conversation of one call.
const (
	// maxAnswerBytes caps one answer of the API.
	maxAnswerBytes = 5 << 20
	// maxRetryWait is the longest Retry-After the tool waits for before it
	// asks once more; a longer one is reported to the model instead.
	maxRetryWait = 10 * time.Second
	// requestLimit is the limit one search request asks for; servers may
	// give fewer ("fixed system limits"), and the tool follows their next
	// links then.
	requestLimit = 50
	// maxSearchRequests bounds the requests of one search, next links
	// included.
	maxSearchRequests = 8
)

// restClient asks one wiki's REST API. Its requests carry the credential,
// so they go through credhttp's client: a redirect to another origin is
// never followed. A redirect within the origin is followed only while it
// stays below the API's base, and one to the login page is reported as a
// missing sign-in.
type restClient struct {
	http    *http.Client
	apiBase *url.URL
	auth    string // the Authorization header; never logged
	sleep   func(ctx context.Context, d time.Duration) error
	log     *slog.Logger
}

// Errors of a request that never got an answer from the API itself.
var (
	errLoginRedirect = errors.New("the wiki sent the request to its login page")
	errOutsideBase   = errors.New("the wiki redirected the request to an address outside its API")
)

// apiError is an answer of the API with a status outside 2xx. It holds
// nothing the server wrote except the status and the headers the tool
// acts on: a server's message may echo the query, which must not reach a
// log.
type apiError struct {
	status int
	// retryAfter is the parsed Retry-After; retryKnown is false when the
	// header was absent or unreadable.
	retryAfter time.Duration
	retryKnown bool
	// loginReason is Data Center's X-Seraph-LoginReason.
	loginReason string
	// html is true when the answer was an HTML page rather than JSON.
	html bool
}

func (e *apiError) Error() string { return fmt.Sprintf("the wiki answered HTTP %d", e.status) }

// newRESTClient builds the client for one call.
func newRESTClient(base *http.Client, cfg config, sleep func(context.Context, time.Duration) error, log *slog.Logger) *restClient {
	c := &restClient{apiBase: cfg.apiBase, auth: cfg.authorization(), sleep: sleep, log: log}
	c.http = secretClient(base, cfg.apiSetting, func(req *http.Request, via []*http.Request) error {
		if isLoginPage(req.URL) {
			return errLoginRedirect
		}
		if !web.WithinBase(c.apiBase, req.URL) {
			return errOutsideBase
		}
		return nil
	})
	return c
}

// get asks for u and returns the body of a 2xx JSON answer. A 429 or 503
// whose Retry-After fits maxRetryWait and the call's deadline is waited out
// and asked once more.
func (c *restClient) get(ctx context.Context, u *url.URL) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		body, err := c.once(ctx, u)
		var ae *apiError
		if attempt == 0 && errors.As(err, &ae) && (ae.status == http.StatusTooManyRequests || ae.status == http.StatusServiceUnavailable) &&
			ae.retryKnown && ae.retryAfter <= maxRetryWait && fitsDeadline(ctx, ae.retryAfter) {
			c.log.Info("search_confluence: the wiki asks to wait before the next request", "status", ae.status, "wait", ae.retryAfter.String())
			if err := c.sleep(ctx, ae.retryAfter); err != nil {
				return nil, err
			}
			continue
		}
		return body, err
	}
}

// fitsDeadline reports whether waiting d still leaves a second for the
// request after it.
func fitsDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) > d+time.Second
}

func (c *restClient) once(ctx context.Context, u *url.URL) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, errors.New("the request address could not be built")
	}
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", web.DefaultUserAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error repeats the address, and with it the query.
			err = ue.Err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the wiki's answer failed: %w", err)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	isHTML := mt == "text/html" || mt == "application/xhtml+xml"
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := &apiError{status: resp.StatusCode, loginReason: resp.Header.Get("X-Seraph-LoginReason"), html: isHTML}
		ae.retryAfter, ae.retryKnown = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return nil, ae
	}
	if len(body) > maxAnswerBytes {
		return nil, fmt.Errorf("the wiki's answer is larger than %d bytes", maxAnswerBytes)
	}
	if mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, &apiError{status: resp.StatusCode, html: isHTML}
	}
	return body, nil
}

// parseRetryAfter reads Retry-After as whole seconds or an HTTP date.
// Absurd values (Long.MAX, as some servers send) are reported as known but
// longer than any wait, never as an overflow.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		const maxSeconds = uint64(365 * 24 * 3600)
		if n > maxSeconds {
			n = maxSeconds
		}
		return time.Duration(n) * time.Second, true
	}
	if strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }) == 0 && v[0] != '-' {
		if t, err := http.ParseTime(v); err == nil {
			d := t.Sub(now)
			if d < 0 {
				d = 0
			}
			return d.Round(time.Second), true
		}
	}
	return 0, false
}

// searchURL is the first request of a search.
func (c *restClient) searchURL(cql string, limit int) *url.URL {
	u := *c.apiBase
	u.Path = strings.TrimSuffix(u.Path, "/") + "/rest/api/search"
	u.RawPath = ""
	// The whole cql value is percent-encoded: some servers break their own
	// next links on a cql sent unencoded.
	u.RawQuery = url.Values{"cql": {cql}, "limit": {strconv.Itoa(limit)}, "excerpt": {"highlight"}, "expand": {"content.space"}}.Encode()
	return &u
}

// nextURL resolves a next link of an answer. It is followed only when it
// leads to the search endpoint below the API's base: a path relative to the
// base ("/rest/api/search?…", as Cloud and Data Center send it) or an
// absolute address below it. The tool never builds an offset itself (Cloud
// deprecated start); it only adds the excerpt and expand parameters when a
// server left them out.
func (c *restClient) nextURL(next string) (*url.URL, bool) {
	next = strings.TrimSpace(next)
	if next == "" {
		return nil, false
	}
	n, err := url.Parse(next)
	if err != nil || n.User != nil || n.Fragment != "" {
		return nil, false
	}
	var u url.URL
	switch {
	case n.Scheme == "" && n.Host == "":
		// Relative to the base (as documented), or, from servers that
		// write it so, to the host with the base's own path in front.
		withBase := strings.TrimSuffix(c.apiBase.Path, "/") + "/rest/api/search"
		if (n.Path != "/rest/api/search" && n.Path != withBase) || strings.HasPrefix(next, "//") {
			return nil, false
		}
		u = *c.apiBase
		u.Path = strings.TrimSuffix(u.Path, "/") + "/rest/api/search"
		u.RawPath = ""
	default:
		if !web.WithinBase(c.apiBase, n) || !strings.HasSuffix(n.Path, "/rest/api/search") ||
			strings.TrimSuffix(n.Path, "/rest/api/search") != strings.TrimSuffix(c.apiBase.Path, "/") {
			return nil, false
		}
		u = *n
	}
	q := n.Query()
	if q.Get("cql") == "" {
		return nil, false
	}
	if !q.Has("excerpt") {
		q.Set("excerpt", "highlight")
	}
	if !q.Has("expand") {
		q.Set("expand", "content.space")
	}
	u.RawQuery = q.Encode()
	return &u, true
}

// contentURL is the request for a page's rendered body.
func (c *restClient) contentURL(id string) *url.URL {
	u := *c.apiBase
	u.Path = strings.TrimSuffix(u.Path, "/") + "/rest/api/content/" + id
	u.RawPath = ""
	u.RawQuery = url.Values{"expand": {"body.view"}}.Encode()
	return &u
}

// isLoginPage reports whether u is Confluence's login page, or a sign-in
// page that will send the visitor back (os_destination).
func isLoginPage(u *url.URL) bool {
	p := strings.ToLower(u.Path)
	if strings.HasSuffix(p, "/login.action") || strings.HasSuffix(p, "/dologin.action") {
		return true
	}
	for k := range u.Query() {
		if strings.EqualFold(k, "os_destination") {
			return true
		}
	}
	return false
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
