package confluence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/tools/webcontent"
	"github.com/stewardhq/steward/web"
)

// searchPagePath is the Data Center search page, below the base URL.
const searchPagePath = "dosearchsite.action"

// PageResult is what SEARCH_PAGE returns: the extracted search page.
type PageResult struct {
	// SearchURL is the page's final address, after redirects inside the
	// wiki.
	SearchURL   string `json:"search_url"`
	Title       string `json:"title,omitempty"`
	TextContent string `json:"text_content"`
	tool.PageInfo
	// Truncated says the content was cut to the character budget.
	Truncated bool     `json:"truncated,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// searchPageURL builds the search page's address from the base, the CQL
// and the phrase; page n starts at the (n-1)·10th hit.
func searchPageURL(base *url.URL, cql, phrase string, page int) *url.URL {
	u := *base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + searchPagePath
	u.RawPath = ""
	q := url.Values{"cql": {cql}, "queryString": {phrase}}
	if page > 1 {
		q.Set("startIndex", strconv.Itoa((page-1)*pageSize))
	}
	u.RawQuery = q.Encode()
	return &u
}

// searchPage loads the Data Center search page through the page retrieval
// service, the reader read_web_page uses.
func (t *Tool) searchPage(ctx context.Context, cfg config, s search, ec tool.ExecContext) (tool.Result, error) {
	if t.deps.Web == nil {
		return tool.Result{}, errors.New("search_confluence is not wired: the page retrieval service is missing")
	}
	base := cfg.base
	target := searchPageURL(base, buildCQL(fieldSiteSearch, s.phrase, s.space), s.phrase, s.page)
	wikiHost := strings.ToLower(base.Hostname())
	var toLogin, outside bool
	opts := web.Options{
		Policy: web.AllowList,
		// The wiki's own host is the one private host this search may
		// reach; nothing the wiki redirects to elsewhere is followed.
		IsPrivateHostAllowed: func(host string) bool {
			return strings.EqualFold(strings.Trim(host, "[]"), strings.Trim(wikiHost, "[]"))
		},
		ProviderConfidence: ec.ProviderConfidence,
		Timeout:            cfg.timeout,
		// Runs before every hop, the first request included: a hop to
		// the login page or out of the wiki is refused before it is
		// connected, so the query never reaches another host.
		IsTargetAllowed: func(u *url.URL) bool {
			switch {
			case isLoginPage(u):
				toLogin = true
				return false
			case !web.WithinBase(base, u):
				outside = true
				return false
			}
			return true
		},
	}
	var signInProblem error
	switch {
	case !cfg.osSignIn:
		signInProblem = fmt.Errorf("the setting %s is OFF", key(SettingUseOsSignIn))
	case t.deps.SignIn == nil:
		signInProblem = errors.New("this installation has no operating-system sign-in")
	default:
		// web decides hop by hop whether the sign-in may be sent: https,
		// the first request's host and port, all its addresses private and
		// allowed (only the wiki's host is), HIGH confidence. A public
		// wiki host never gets it.
		if si, err := t.deps.SignIn(); err != nil {
			signInProblem = fmt.Errorf("the operating-system sign-in cannot be used: %w", err)
		} else if si == nil {
			signInProblem = errors.New("this installation has no operating-system sign-in")
		} else {
			opts.SignIn = si
		}
	}
	page, err := t.retrieve(ctx, target, opts)
	if err != nil {
		return tool.Result{}, t.pageError(err, s, cfg, toLogin, outside, signInProblem)
	}

	end := t.deps.Guard.BeginAction()
	prep := webcontent.Prepare(ctx, t.deps.Guard, page, cfg.maxChars)
	end()
	if strings.TrimSpace(prep.Markdown) == "" {
		return tool.Result{}, errors.New("the wiki's search page came back without readable results: the page may need JavaScript or a sign-in this tool cannot give. " +
			"Tell the user; searching again will not help")
	}
	startIndex := (s.page - 1) * pageSize
	res := PageResult{
		SearchURL:   page.FinalURL,
		Title:       prep.Title,
		TextContent: prep.Markdown,
		PageInfo:    tool.PageInfo{Page: s.page, HasMore: s.page < s.lastPage && hasMoreResults(page.Markdown, base, startIndex)},
		Truncated:   prep.Truncated,
	}
	if prep.Truncated {
		res.Warnings = append(res.Warnings, fmt.Sprintf("The search page was truncated from %d to %d characters.", prep.OriginalChars, prep.ReturnedChars))
	}
	if n, _ := resultLinks(prep.Markdown, base, startIndex); n == 0 {
		w := "The search page links to no page of the wiki: the search probably found nothing. Try other or fewer words"
		if s.space != "" {
			w += ", or search without " + ArgSpaceKey
		}
		res.Warnings = append(res.Warnings, w+".")
	}
	return tool.Result{
		JSON:               res,
		Sources:            []tool.Source{{Title: "Confluence search for “" + s.phrase + "”", URL: page.FinalURL}},
		RequiredConfidence: policy.High,
	}, nil
}

// retrieve loads the page and, when the wiki asks to wait a little (429 or
// 503 with a short Retry-After), loads it once more.
func (t *Tool) retrieve(ctx context.Context, target *url.URL, opts web.Options) (*web.Page, error) {
	page, err := t.deps.Web.Retrieve(ctx, target.String(), opts)
	var se *web.StatusError
	if err != nil && errors.As(err, &se) && (se.Code == http.StatusTooManyRequests || se.Code == http.StatusServiceUnavailable) {
		if d, ok := parseRetryAfter(se.RetryAfter, time.Now()); ok && d <= maxRetryWait && fitsDeadline(ctx, d) {
			if err := t.sleep(ctx, d); err != nil {
				return nil, err
			}
			return t.deps.Web.Retrieve(ctx, target.String(), opts)
		}
	}
	return page, err
}

// pageError turns a failed load of the search page into what the model
// reads. The web package never puts an address into its messages.
func (t *Tool) pageError(err error, s search, cfg config, toLogin, outside bool, signInProblem error) error {
	var se *web.StatusError
	var sie *web.SignInError
	switch {
	case toLogin:
		return t.missingSignIn("sent the search to its login page", signInProblem)
	case outside:
		return tool.Blocked("The wiki redirected the search to an address outside the configured wiki (" + key(SettingBaseURL) +
			"); the redirect was refused before it was followed, so the search went nowhere else. Nothing was found; tell the user the wiki's address may have changed.")
	case errors.Is(err, web.ErrSignInRefused):
		return errors.New("the wiki refused the operating-system sign-in (HTTP 401): the signed-in user may have no access to the wiki, or the wiki does not accept this user's Kerberos ticket. Tell the user; searching again will not help")
	case errors.As(err, &sie):
		return t.missingSignIn("asks for a sign-in", sie)
	case errors.As(err, &se) && se.Code == http.StatusUnauthorized:
		return t.missingSignIn("asks for a sign-in (HTTP 401)", signInProblem)
	case errors.As(err, &se):
		d, known := parseRetryAfter(se.RetryAfter, time.Now())
		return statusMessage(se.Code, d, known, s, cfg, "")
	case errors.Is(err, web.ErrTimeout):
		return fmt.Errorf("searching the wiki timed out after %s (setting %s)", seconds(cfg.timeout), key(SettingTimeoutSeconds))
	case web.IsBlocked(err):
		return tool.Blocked("The wiki's search page was not loaded: " + err.Error() + ".")
	}
	return fmt.Errorf("the wiki's search page could not be loaded: %w", err)
}

// missingSignIn reports a search the wiki answered with a sign-in.
func (t *Tool) missingSignIn(what string, why error) error {
	msg := "the wiki " + what + ": Steward is not signed in to it, so nothing was searched (this is not an empty result). " +
		"Steward signs in with the operating-system sign-in (Kerberos) only over https, only to the wiki's own host, and only when all its addresses are private"
	if why != nil {
		msg += "; here " + why.Error()
	}
	return errors.New(msg + ". Tell the user to sign in (e.g. kinit) or to ask the administrator; searching again will not help until then")
}

var markdownLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\]\((https?://[^)\s]+)\)`) })

// resultLinks reads the extracted search page: how many distinct pages
// inside the wiki it links to (other than the search page and the login
// page), and whether it links to the search page with a startIndex beyond
// this page's.
func resultLinks(markdown string, base *url.URL, startIndex int) (results int, later bool) {
	seen := map[string]bool{}
	for _, m := range markdownLink().FindAllStringSubmatch(markdown, -1) {
		u, err := url.Parse(m[1])
		if err != nil || !web.WithinBase(base, u) || isLoginPage(u) {
			continue
		}
		if strings.HasSuffix(u.Path, "/"+searchPagePath) {
			if n, err := strconv.Atoi(u.Query().Get("startIndex")); err == nil && n > startIndex {
				later = true
			}
			continue
		}
		u.Fragment = ""
		seen[u.String()] = true
	}
	return len(seen), later
}

// hasMoreResults tells from the extracted search page whether a later page
// of results exists: the page links to the search page with a later
// startIndex, or it lists a full page of results (pageSize distinct links
// to content inside the wiki), since the extraction may drop the page's
// pagination. A full last page then reads as has_more, and the next page
// says it found nothing.
func hasMoreResults(markdown string, base *url.URL, startIndex int) bool {
	n, later := resultLinks(markdown, base, startIndex)
	return later || n >= pageSize
}
