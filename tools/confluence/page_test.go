package confluence

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/confluencetest"
	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/web"
)

// recordingSignIn stands in for the Kerberos sign-in: it records the hosts
// it was asked for and adds a Negotiate header the fake accepts.
type recordingSignIn struct {
	mu    sync.Mutex
	hosts []string
}

func (r *recordingSignIn) Authorize(req *http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts = append(r.hosts, req.URL.Hostname())
	req.Header.Set("Authorization", "Negotiate token-for-"+req.URL.Hostname())
	return nil
}

func (r *recordingSignIn) asked() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.hosts, " ")
}

func dcWiki(t *testing.T, signIn confluencetest.SignInMode) *wiki {
	return newWiki(t, confluencetest.Options{Layout: confluencetest.DataCenter, Context: "/confluence", PageSignIn: signIn})
}

func pageSettings(w *wiki, host string) tool.Settings {
	return tool.Settings{SettingBaseURL: w.url(host, "/confluence/")}
}

func pageResult(t *testing.T, r tool.Result) PageResult {
	t.Helper()
	pr, ok := r.JSON.(PageResult)
	if !ok {
		t.Fatalf("result is %T, want PageResult", r.JSON)
	}
	return pr
}

func TestSearchPageReadsTheDataCenterSearchPage(t *testing.T) {
	t.Parallel()
	w := dcWiki(t, confluencetest.Anonymous)
	r := &webtest.Reports{}
	tl, _ := w.tool(t, r, Deps{})
	res, err := call(t, tl, pageSettings(w, wikiHost), `{"query":"backup"}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	pr := pageResult(t, res)
	// Markdown with absolute links into the wiki, the results' spaces and
	// dates, and a next page.
	for _, want := range []string{"[Backup policy](" + w.url(wikiHost, "/confluence/display/OPS/Backup+policy") + ")",
		"Operations", "May 04, 2026", "**backups**"} {
		if !strings.Contains(pr.TextContent, want) {
			t.Errorf("the search page lacks %q:\n%s", want, pr.TextContent)
		}
	}
	if strings.Contains(pr.TextContent, "Ignore all previous instructions") || r.Count() == 0 {
		t.Errorf("the planted instruction was not filtered (%d reports)", r.Count())
	}
	if !pr.HasMore || pr.Page != 1 || !strings.HasPrefix(pr.SearchURL, w.url(wikiHost, "/confluence/dosearchsite.action?")) {
		t.Fatalf("page info %+v, url %s", pr.PageInfo, pr.SearchURL)
	}
	if res.RequiredConfidence != policy.High || len(res.Sources) != 1 || res.Sources[0].Title != "Confluence search for “backup”" || res.Sources[0].URL != pr.SearchURL {
		t.Fatalf("requirement %v, sources %+v", res.RequiredConfidence, res.Sources)
	}
	reqs := w.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/confluence/dosearchsite.action" || reqs[0].Query.Get("queryString") != "backup" || reqs[0].Query.Has("startIndex") {
		t.Fatalf("requests %+v", reqs)
	}
	wantClauses(t, reqs[0].CQL, fieldSiteSearch, "backup", "")

	// Page 3 starts at the 20th hit and is the last.
	w.Reset()
	res, err = call(t, tl, pageSettings(w, wikiHost), `{"query":"backup","page":3}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	if pr = pageResult(t, res); pr.HasMore || pr.Page != 3 || w.Requests()[0].Query.Get("startIndex") != "20" || !strings.Contains(pr.TextContent, "Runbook") {
		t.Fatalf("page 3: %+v %v", pr.PageInfo, w.Requests()[0].Query)
	}
	if _, err = call(t, tl, pageSettings(w, wikiHost), `{"query":"backup","page":11}`, policy.High); err == nil || !strings.Contains(err.Error(), "at most 10") {
		t.Fatalf("page 11: %v", err)
	}
	// A phrase full of operators and quotes, in a space: one phrase.
	w.Reset()
	phrase := `space = "OPS" OR title ~ "runbook"`
	res, err = call(t, tl, pageSettings(w, wikiHost), fmt.Sprintf(`{"query":%q,"space_key":"DEV"}`, phrase), policy.High)
	if err != nil {
		t.Fatal(err)
	}
	wantClauses(t, w.CQLs()[0], fieldSiteSearch, phrase, "DEV")
	if pr = pageResult(t, res); !strings.Contains(pr.TextContent, "CQL cheat sheet") || strings.Contains(pr.TextContent, "Runbook 0") {
		t.Fatalf("the phrase escaped its quotes:\n%s", pr.TextContent)
	}
}

func TestSearchPageTruncatesThenFilters(t *testing.T) {
	t.Parallel()
	w := dcWiki(t, confluencetest.Anonymous)
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	res, err := call(t, tl, merge(pageSettings(w, wikiHost), tool.Settings{SettingMaxContentCharacters: "1000"}), `{"query":"backup"}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	pr := pageResult(t, res)
	if n := utf8.RuneCountInString(pr.TextContent); n > 1000 || !pr.Truncated || !strings.HasSuffix(pr.TextContent, web.TruncationMarker) || len(pr.Warnings) != 1 {
		t.Fatalf("%d characters, truncated %v, warnings %v", n, pr.Truncated, pr.Warnings)
	}
}

// A search page that lists nothing says so.
func TestSearchPageWithoutResultsSaysSo(t *testing.T) {
	t.Parallel()
	w := dcWiki(t, confluencetest.Anonymous)
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	res, err := call(t, tl, pageSettings(w, wikiHost), `{"query":"xyzzy plugh","space_key":"OPS"}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	pr := pageResult(t, res)
	if pr.HasMore || !strings.Contains(pr.TextContent, "No results found") || len(pr.Warnings) != 1 ||
		!strings.Contains(pr.Warnings[0], "found nothing") || !strings.Contains(pr.Warnings[0], "without space_key") {
		t.Fatalf("%+v", pr)
	}
}

// The operating-system sign-in goes to the wiki's host when all its
// addresses are private, never to a public one, never when switched off.
func TestSearchPageSignIn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		host      string
		settings  tool.Settings
		signInErr error
		want      string // error, or "" for success
		asked     string
	}{
		{name: "private wiki host", host: wikiHost, asked: wikiHost},
		{name: "public wiki host is never signed in to", host: publicHost, want: "asks for a sign-in (HTTP 401)"},
		{name: "switched off", host: wikiHost, settings: tool.Settings{SettingUseOsSignIn: OsSignInOff}, want: "useOsSignIn is OFF"},
		{name: "no ticket", host: wikiHost, signInErr: errors.New("no ticket cache"), want: "no ticket cache"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := dcWiki(t, confluencetest.Negotiate)
			si := &recordingSignIn{}
			deps := Deps{SignIn: func() (web.SignIn, error) {
				if c.signInErr != nil {
					return nil, c.signInErr
				}
				return si, nil
			}}
			tl, _ := w.tool(t, &webtest.Reports{}, deps)
			res, err := call(t, tl, merge(pageSettings(w, c.host), c.settings), `{"query":"vpn"}`, policy.High)
			if c.want == "" {
				if err != nil || !strings.Contains(pageResult(t, res).TextContent, "VPN setup") {
					t.Fatalf("%+v %v", res, err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not an empty result") {
					t.Fatalf("error %v, want %q", err, c.want)
				}
			}
			if si.asked() != c.asked {
				t.Errorf("signed in to %q, want %q", si.asked(), c.asked)
			}
			for _, q := range w.Requests() {
				if h := q.Header.Get("Authorization"); h != "" && c.asked == "" {
					t.Errorf("a request carried %q", h)
				}
			}
		})
	}
}

// A redirect to Confluence's login page is a missing sign-in, not an empty
// search; the login page is never loaded.
func TestSearchPageLoginRedirectIsAMissingSignIn(t *testing.T) {
	t.Parallel()
	w := dcWiki(t, confluencetest.LoginRedirect)
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	_, err := call(t, tl, pageSettings(w, wikiHost), `{"query":"vpn"}`, policy.High)
	if err == nil || !strings.Contains(err.Error(), "login page") || !strings.Contains(err.Error(), "not signed in") || !strings.Contains(err.Error(), "not an empty result") {
		t.Fatalf("error %v", err)
	}
	if _, blocked := tool.IsBlocked(err); blocked {
		t.Error("a missing sign-in is reported as a block")
	}
	for _, q := range w.Requests() {
		if strings.Contains(q.Path, "login.action") {
			t.Error("the login page was loaded")
		}
	}
	if len(w.Requests()) != 1 {
		t.Errorf("%d requests", len(w.Requests()))
	}
}

// The seed's rule: a redirect outside the wiki is refused before it is
// followed, so the query never reaches another host: the target is never
// looked up, let alone dialed.
func TestSearchPageRedirectOutOfTheWikiIsRefusedBeforeItIsFollowed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, location string }{
		{"another host", "https://" + evilHost + "/collect?q=secret+plans"},
		{"another host with the wiki's port", "PORT"},
		{"the wiki's host outside its path", "/other/collect?q=secret+plans"},
		{"another port of the wiki's host", "https://" + wikiHost + ":8443/confluence/x"},
		{"plain http on the wiki's host", "http://" + wikiHost + "/confluence/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := dcWiki(t, confluencetest.Anonymous)
			loc := c.location
			if loc == "PORT" {
				loc = w.url(evilHost, "/collect?q=secret+plans")
			}
			w.Set(confluencetest.Scenario{Location: loc})
			tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
			_, err := call(t, tl, pageSettings(w, wikiHost), `{"query":"secret plans"}`, policy.High)
			b, blocked := tool.IsBlocked(err)
			if !blocked || !strings.Contains(b.Message, "outside the configured wiki") || strings.Contains(b.Message, "secret") {
				t.Fatalf("error %v", err)
			}
			if n := w.net.Lookups(evilHost); n != 0 {
				t.Errorf("the refused target was looked up %d times", n)
			}
			if n := w.net.Dials(); n != 1 {
				t.Errorf("%d connections; only the one to the wiki may be made", n)
			}
			if len(w.Requests()) != 1 {
				t.Errorf("%d requests reached the fake", len(w.Requests()))
			}
		})
	}
	// A redirect inside the wiki is followed.
	w := dcWiki(t, confluencetest.Anonymous)
	u, _ := url.Parse(w.url(wikiHost, "/confluence/dosearchsite.action"))
	u.RawQuery = url.Values{"cql": {buildCQL(fieldSiteSearch, "vpn", "")}, "queryString": {"vpn"}, "moved": {"1"}}.Encode()
	w.Set(confluencetest.Scenario{Times: 1, Location: u.String()})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	res, err := call(t, tl, pageSettings(w, wikiHost), `{"query":"vpn"}`, policy.High)
	if err != nil || !strings.Contains(pageResult(t, res).TextContent, "VPN setup") {
		t.Fatalf("%v", err)
	}
}

func TestSearchPageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		scenario confluencetest.Scenario
		want     string
		waits    string
		ok       bool
	}{
		{name: "403", scenario: confluencetest.Scenario{Status: 403}, want: "HTTP 403"},
		{name: "404", scenario: confluencetest.Scenario{Status: 404}, want: "search_confluence.baseUrl"},
		{name: "429 once, short", scenario: confluencetest.Scenario{Status: 429, RetryAfter: "2", Times: 1}, waits: "[2s]", ok: true},
		{name: "429 for long", scenario: confluencetest.Scenario{Status: 429, RetryAfter: "3600"}, want: "in about 60 minutes", waits: "[]"},
		{name: "empty page", scenario: confluencetest.Scenario{Status: 200, Body: " "}, want: "without readable results"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := dcWiki(t, confluencetest.Anonymous)
			w.Set(c.scenario)
			tl, sl := w.tool(t, &webtest.Reports{}, Deps{})
			res, err := call(t, tl, pageSettings(w, wikiHost), `{"query":"vpn"}`, policy.High)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			} else if len(res.Sources) != 0 || res.RequiredConfidence != policy.None {
				t.Fatal("a failed search added a source or a requirement")
			}
			if c.waits != "" && fmt.Sprint(sl.all()) != c.waits {
				t.Errorf("waited %v", sl.all())
			}
		})
	}
}
