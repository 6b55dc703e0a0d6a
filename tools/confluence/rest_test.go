package confluence

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/credhttp"
	"github.com/stewardhq/steward/credhttp/credhttptest"
	"github.com/stewardhq/steward/internal/confluencetest"
	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

func cloudSettings(w *wiki) tool.Settings {
	return tool.Settings{SettingBaseURL: w.url(siteHost, "/wiki/"), SettingMode: ModeREST, SettingEmail: email, SettingAPIToken: apiToken}
}

func newCloud(t *testing.T, o confluencetest.Options) *wiki {
	o.Layout, o.Email, o.APIToken = confluencetest.Cloud, email, apiToken
	return newWiki(t, o)
}

func TestRESTCloudSearchesPagesAndFollowsCursors(t *testing.T) {
	t.Parallel()
	// 20 hits a request at most, so page 3 needs the cursor.
	w := newCloud(t, confluencetest.Options{MaxLimit: 20})
	r := &webtest.Reports{}
	tl, _ := w.tool(t, r, Deps{})
	res, err := call(t, tl, cloudSettings(w), `{"query":"backup"}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	rr := restResult(t, res)
	if len(rr.Hits) != 10 || !rr.HasMore || rr.Page != 1 {
		t.Fatalf("page 1: %d hits, has_more %v, page %d", len(rr.Hits), rr.HasMore, rr.Page)
	}
	first := rr.Hits[0]
	if first.Title != "**Backup** policy" || first.Space != "Operations (OPS)" || first.Type != "page" || first.LastModified != "2026-05-04T08:12:31Z" ||
		first.URL != w.url(siteHost, "/wiki/spaces/OPS/pages/98304/Backup+policy") || !strings.Contains(first.Excerpt, "**backups**") {
		t.Fatalf("first hit %+v", first)
	}
	// The best three hits bring their text, converted to Markdown.
	for i, h := range rr.Hits {
		if (i < DefaultPageBodies) != (h.Content != "") {
			t.Errorf("hit %d content %q", i, h.Content)
		}
	}
	if !strings.Contains(first.Content, "Restores are tested every quarter") {
		t.Errorf("content of the best hit: %q", first.Content)
	}
	// The planted instruction reached nothing the model reads.
	text, _ := tool.MarshalRelaxed(rr)
	if strings.Contains(text, "Ignore all previous instructions") {
		t.Errorf("the planted instruction reached the result: %s", text)
	}
	if r.Count() == 0 {
		t.Error("the filter reported nothing, although a hit planted an instruction")
	}
	if res.RequiredConfidence != policy.High || len(res.Sources) != 10 || res.Sources[0].URL != first.URL || res.Sources[0].Title != "Backup policy" {
		t.Fatalf("requirement %v, sources %v", res.RequiredConfidence, res.Sources)
	}
	for _, q := range w.Requests() {
		if q.Host != net(w, siteHost) {
			t.Errorf("a request went to %s", q.Host)
		}
		if got := q.Header.Get("Authorization"); got != "Basic "+base64.StdEncoding.EncodeToString([]byte(email+":"+apiToken)) {
			t.Errorf("Authorization %q", got)
		}
	}

	// Page 3 needs 31 hits; the fake gives 20 per request, so its cursor
	// is followed, and no request ever carries the deprecated start.
	w.Reset()
	res, err = call(t, tl, cloudSettings(w), `{"query":"backup","page":3}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	rr = restResult(t, res)
	if len(rr.Hits) != 5 || rr.HasMore || rr.Page != 3 {
		t.Fatalf("page 3: %d hits, has_more %v", len(rr.Hits), rr.HasMore)
	}
	var searches []confluencetest.Request
	for _, q := range w.Requests() {
		if strings.HasSuffix(q.Path, "/rest/api/search") {
			searches = append(searches, q)
		}
		if q.Query.Has("start") {
			t.Errorf("a request carries start: %v", q.Query)
		}
	}
	if len(searches) != 2 || searches[0].Query.Get("limit") != "31" || searches[1].Query.Get("cursor") == "" || searches[1].Query.Get("expand") != "content.space" {
		t.Fatalf("searches %+v", searches)
	}
	// The CQL the fake received is the phrase, in pages and blog posts.
	wantClauses(t, searches[0].CQL, fieldSiteSearch, "backup", "")

	// Page 5 lies beyond the 25 hits; page 6 beyond what the tool serves.
	res, err = call(t, tl, cloudSettings(w), `{"query":"backup","page":5}`, policy.High)
	if err != nil || len(restResult(t, res).Hits) != 0 || !strings.Contains(restResult(t, res).Note, "beyond the last hit") || res.RequiredConfidence != policy.None {
		t.Fatalf("page 5: %+v %v", res, err)
	}
	_, err = call(t, tl, cloudSettings(w), `{"query":"backup","page":6}`, policy.High)
	if ae, ok := tool.AsArgumentError(err); !ok || !strings.Contains(ae.Message, "at most 5") {
		t.Fatalf("page 6: %v", err)
	}
}

// net returns host:port as the fake sees it.
func net(w *wiki, host string) string {
	u, _ := url.Parse(w.url(host, "/"))
	return u.Host
}

func TestRESTDataCenterWithTokenAndContextPath(t *testing.T) {
	t.Parallel()
	w := newWiki(t, confluencetest.Options{Layout: confluencetest.DataCenter, Context: "/confluence", PAT: pat, MaxLimit: 10})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	s := tool.Settings{SettingBaseURL: w.url(wikiHost, "/confluence"), SettingMode: ModeREST, SettingPersonalAccessToken: pat, SettingPageBodies: "0"}
	res, err := call(t, tl, s, `{"query":"backup","page":2}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	rr := restResult(t, res)
	if len(rr.Hits) != 10 || !rr.HasMore {
		t.Fatalf("%d hits, has_more %v", len(rr.Hits), rr.HasMore)
	}
	for _, h := range rr.Hits {
		if !strings.HasPrefix(h.URL, w.url(wikiHost, "/confluence/display/OPS/")) || h.Content != "" {
			t.Errorf("hit %+v", h)
		}
	}
	// 21 hits at 10 a request: the server's own next links (start) were
	// followed, twice.
	reqs := w.Requests()
	if len(reqs) != 3 || reqs[1].Query.Get("start") != "10" || reqs[2].Query.Get("start") != "20" {
		t.Fatalf("requests %+v", reqs)
	}
	for _, q := range reqs {
		if q.Header.Get("Authorization") != "Bearer "+pat {
			t.Errorf("Authorization %q", q.Header.Get("Authorization"))
		}
	}
	// A space named by the model; one configured as the default otherwise.
	w.Reset()
	res, err = call(t, tl, s, `{"query":"vpn","space_key":"IT"}`, policy.High)
	if err != nil || len(restResult(t, res).Hits) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	wantClauses(t, w.CQLs()[0], fieldSiteSearch, "vpn", "IT")
	w.Reset()
	if _, err = call(t, tl, merge(s, tool.Settings{SettingDefaultSpaceKey: "OPS"}), `{"query":"vpn"}`, policy.High); err != nil {
		t.Fatal(err)
	}
	wantClauses(t, w.CQLs()[0], fieldSiteSearch, "vpn", "OPS")
}

// Scoped tokens only work on api.atlassian.com: the requests go there with
// the cloud ID, the hits still point at the site, and the site itself never
// sees the token.
func TestRESTScopedTokenGoesToItsOwnHost(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{CloudID: cloudID})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	// No apiBaseUrl: the requests go to Atlassian's own address (port 443,
	// which the made-up network routes to the fake like any other port).
	s := merge(cloudSettings(w), tool.Settings{SettingCloudID: cloudID})
	res, err := call(t, tl, s, `{"query":"vpn"}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	rr := restResult(t, res)
	if len(rr.Hits) != 2 || !strings.HasPrefix(rr.Hits[0].URL, w.url(siteHost, "/wiki/spaces/IT/")) {
		t.Fatalf("hits %+v", rr.Hits)
	}
	if len(w.Requests()) == 0 {
		t.Fatal("no request")
	}
	for _, q := range w.Requests() {
		if q.Host != apiHost || !strings.HasPrefix(q.Path, "/ex/confluence/"+cloudID+"/wiki/rest/api/") {
			t.Errorf("a request went to %s%s", q.Host, q.Path)
		}
	}
	if n := w.net.Lookups(siteHost); n != 0 {
		t.Errorf("the site was looked up %d times; its token goes to the API only", n)
	}
}

func TestRESTErrorsTheModelCanActOn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		layout   confluencetest.Layout
		settings func(*wiki) tool.Settings
		scenario confluencetest.Scenario
		args     string
		want     []string // in the message
		waits    string
		requests int
		argument bool
	}{
		{name: "401 wrong token", layout: confluencetest.Cloud,
			settings: func(w *wiki) tool.Settings {
				return merge(cloudSettings(w), tool.Settings{SettingAPIToken: "ATATT-wrong"})
			},
			want: []string{"HTTP 401", "search_confluence.email and search_confluence.apiToken", "expired"}, requests: 1},
		{name: "401 with a CAPTCHA on Data Center", layout: confluencetest.DataCenter, scenario: confluencetest.Scenario{Captcha: true},
			settings: func(w *wiki) tool.Settings {
				return tool.Settings{SettingBaseURL: w.url(wikiHost, "/"), SettingMode: ModeREST, SettingPersonalAccessToken: "wrong"}
			},
			want: []string{"CAPTCHA", "browser"}, requests: 1},
		{name: "403", layout: confluencetest.Cloud, scenario: confluencetest.Scenario{Status: 403},
			want: []string{"HTTP 403", "search:confluence", "configuration matter"}, requests: 1},
		{name: "404 for a space", layout: confluencetest.Cloud, scenario: confluencetest.Scenario{Status: 404}, args: `{"query":"vpn","space_key":"NOPE"}`,
			want: []string{"HTTP 404", "space NOPE", "without space_key"}, requests: 1},
		{name: "404 without a space", layout: confluencetest.Cloud, scenario: confluencetest.Scenario{Status: 404},
			want: []string{"HTTP 404", "search_confluence.baseUrl"}, requests: 1},
		{name: "429 for Long.MAX seconds", layout: confluencetest.Cloud, scenario: confluencetest.Scenario{Status: 429, RetryAfter: "9223372036854775807"},
			want: []string{"HTTP 429", "try again later"}, requests: 1},
		{name: "429 for 30 seconds", layout: confluencetest.Cloud, scenario: confluencetest.Scenario{Status: 429, RetryAfter: "30"},
			want: []string{"HTTP 429", "in about 30 seconds"}, requests: 1},
		{name: "503 twice with a short wait", layout: confluencetest.Cloud, scenario: confluencetest.Scenario{Status: 503, RetryAfter: "2"},
			want: []string{"HTTP 503", "in about 2 seconds"}, waits: "2s", requests: 2},
		{name: "a phrase the text search cannot read", layout: confluencetest.Cloud, args: `{"query":"\"unbalanced quote"}`,
			want: []string{"HTTP 400", "plain words"}, requests: 2, argument: true},
		{name: "an HTML page instead of JSON", layout: confluencetest.Cloud,
			scenario: confluencetest.Scenario{Status: 200, Body: "<html>sign in</html>"},
			want:     []string{"not JSON"}, requests: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var w *wiki
			if c.layout == confluencetest.Cloud {
				w = newCloud(t, confluencetest.Options{})
			} else {
				w = newWiki(t, confluencetest.Options{Layout: c.layout, PAT: pat})
			}
			w.Set(c.scenario)
			tl, sl := w.tool(t, &webtest.Reports{}, Deps{})
			s := cloudSettings(w)
			if c.settings != nil {
				s = c.settings(w)
			}
			args := c.args
			if args == "" {
				args = `{"query":"vpn gateway"}`
			}
			_, err := call(t, tl, s, args, policy.High)
			if err == nil {
				t.Fatal("the search succeeded")
			}
			msg := err.Error()
			for _, want := range c.want {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			assertNoSecret(t, "the message", msg)
			if strings.Contains(msg, "gateway") || strings.Contains(msg, "unbalanced") || strings.Contains(msg, "Could not parse") {
				t.Errorf("the message repeats the query or the server's words: %s", msg)
			}
			if _, isArg := tool.AsArgumentError(err); isArg != c.argument {
				t.Errorf("argument error %v, want %v: %v", isArg, c.argument, err)
			}
			if got := fmt.Sprint(sl.all()); (c.waits == "" && got != "[]") || (c.waits != "" && got != "["+c.waits+"]") {
				t.Errorf("waited %s", got)
			}
			if n := len(w.Requests()); n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
		})
	}
}

func TestRESTRetriesOnceAfterAShortWait(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	w.Set(confluencetest.Scenario{Status: 429, RetryAfter: "2", Times: 1})
	tl, sl := w.tool(t, &webtest.Reports{}, Deps{})
	res, err := call(t, tl, merge(cloudSettings(w), tool.Settings{SettingPageBodies: "0"}), `{"query":"vpn"}`, policy.High)
	if err != nil || len(restResult(t, res).Hits) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if got := fmt.Sprint(sl.all()); got != "[2s]" {
		t.Fatalf("waited %s, want [2s]", got)
	}
}

// When a further request fails, the hits already fetched still serve a
// page they fill, with has_more true; a page they cannot reach is an error.
func TestRESTKeepsWhatItHasWhenALaterRequestFails(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{MaxLimit: 20})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	s := merge(cloudSettings(w), tool.Settings{SettingPageBodies: "0"})
	w.Set(confluencetest.Scenario{Path: "/rest/api/search", After: 1, Status: 429, RetryAfter: "3600"})
	res, err := call(t, tl, s, `{"query":"backup","page":2}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	if rr := restResult(t, res); len(rr.Hits) != 10 || !rr.HasMore || rr.Page != 2 {
		t.Fatalf("page 2: %d hits, has_more %v", len(rr.Hits), rr.HasMore)
	}
	w.Set(confluencetest.Scenario{Path: "/rest/api/search", After: 1, Status: 429, RetryAfter: "3600"})
	if _, err := call(t, tl, s, `{"query":"backup","page":3}`, policy.High); err == nil || !strings.Contains(err.Error(), "up to page 3") {
		t.Fatalf("page 3: %v", err)
	}
}

// A server that does not know siteSearch is asked once more with text.
func TestRESTFallsBackToTextSearch(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	w.Set(confluencetest.Scenario{RejectSiteSearch: true})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	res, err := call(t, tl, cloudSettings(w), `{"query":"vpn"}`, policy.High)
	if err != nil || len(restResult(t, res).Hits) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	cqls := w.CQLs()
	if len(cqls) != 2 {
		t.Fatalf("cqls %q", cqls)
	}
	wantClauses(t, cqls[0], fieldSiteSearch, "vpn", "")
	wantClauses(t, cqls[1], fieldText, "vpn", "")
}

// The seed's rule on the wire: a phrase full of CQL operators and quotes
// reaches the wiki as one phrase, and the space condition holds.
func TestRESTPhraseWithOperatorsStaysOnePhrase(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	phrase := `space = "OPS" OR title ~ "runbook"`
	args := fmt.Sprintf(`{"query":%q,"space_key":"DEV"}`, phrase)
	res, err := call(t, tl, merge(cloudSettings(w), tool.Settings{SettingPageBodies: "0"}), args, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	wantClauses(t, w.CQLs()[0], fieldSiteSearch, phrase, "DEV")
	// Had the phrase escaped, the OPS runbooks would come back; only the
	// DEV page that holds these words does.
	rr := restResult(t, res)
	if len(rr.Hits) != 1 || rr.Hits[0].Title != "CQL cheat sheet" || !strings.Contains(rr.Hits[0].Space, "(DEV)") {
		t.Fatalf("hits %+v", rr.Hits)
	}
	// The title with a quote and a backslash is found by its own words.
	w.Reset()
	res, err = call(t, tl, cloudSettings(w), fmt.Sprintf(`{"query":%q}`, confluencetest.QuoteTitle), policy.High)
	if err != nil || len(restResult(t, res).Hits) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	wantClauses(t, w.CQLs()[0], fieldSiteSearch, confluencetest.QuoteTitle, "")
	if got := restResult(t, res).Hits[0].Title; !strings.Contains(got, `"**quotes**"`) || !strings.Contains(got, `\`) {
		t.Errorf("title %q", got)
	}
}

func TestRESTEmptyResultSaysSo(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	res, err := call(t, tl, cloudSettings(w), `{"query":"xyzzy plugh","space_key":"OPS"}`, policy.High)
	if err != nil {
		t.Fatal(err)
	}
	rr := restResult(t, res)
	if len(rr.Hits) != 0 || rr.HasMore || !strings.Contains(rr.Note, "no page or blog post matching") || !strings.Contains(rr.Note, "without space_key") {
		t.Fatalf("%+v", rr)
	}
	// Nothing reached the model: no source, no requirement.
	if res.RequiredConfidence != policy.None || len(res.Sources) != 0 {
		t.Fatalf("requirement %v, sources %v", res.RequiredConfidence, res.Sources)
	}
	if text, _ := tool.MarshalRelaxed(rr); !strings.Contains(text, `"hits":[]`) {
		t.Fatalf("JSON %s", text)
	}
}

// The hits and page texts stay within maxContentCharacters, texts cut with
// the truncation marker.
func TestRESTStaysWithinTheBudget(t *testing.T) {
	t.Parallel()
	long := confluencetest.Fixture()
	long[0].Body = "<p>" + strings.Repeat("Backups are verified by restoring a sample every night. ", 200) + "</p>"
	w := newCloud(t, confluencetest.Options{Pages: long})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	for _, budget := range []int{1000, 3000, 30000} {
		res, err := call(t, tl, merge(cloudSettings(w), tool.Settings{SettingMaxContentCharacters: fmt.Sprint(budget)}), `{"query":"backup"}`, policy.High)
		if err != nil {
			t.Fatal(err)
		}
		rr := restResult(t, res)
		n := 0
		for _, h := range rr.Hits {
			n += utf8.RuneCountInString(h.Title) + utf8.RuneCountInString(h.Space) + utf8.RuneCountInString(h.Excerpt) + utf8.RuneCountInString(h.Content)
		}
		if n > budget {
			t.Errorf("budget %d: %d characters", budget, n)
		}
		if budget == 30000 && (!rr.Hits[0].ContentTruncated || !strings.Contains(rr.Hits[0].Content, "[Page content truncated]")) {
			t.Errorf("budget %d: the long page was not cut: %v", budget, rr.Hits[0].ContentTruncated)
		}
		if budget == 1000 && (len(rr.Hits) == 10 || !strings.Contains(rr.Note, "left out")) {
			t.Errorf("budget %d: %d hits, note %q", budget, len(rr.Hits), rr.Note)
		}
	}
}

// restClientFor builds the REST client for a plain-http test server (the
// credhttptest servers), below the settings' https rule.
func restClientFor(t *testing.T, base string) (*restClient, config) {
	t.Helper()
	u, err := url.Parse(base + "/wiki/")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{base: u, mode: ModeREST, email: email, apiToken: apiToken, apiBase: u, apiSetting: key(SettingBaseURL), timeout: 10 * time.Second, maxChars: 30000}
	return newRESTClient(&http.Client{}, cfg, (&sleeper{}).sleep, webtest.Discard()), cfg
}

// Requests carry the token, so a redirect to another origin is never
// followed, for every redirect status: nothing reaches the second server,
// and the error names the setting and the origin.
func TestRESTNeverFollowsARedirectElsewhere(t *testing.T) {
	t.Parallel()
	for _, status := range credhttptest.Statuses() {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			r := credhttptest.NewRedirector(t, status)
			c, cfg := restClientFor(t, r.URL)
			_, err := c.get(context.Background(), c.searchURL(buildCQL(fieldSiteSearch, "secret plans", ""), 11))
			r.AssertNothingLeaked(t)
			if _, ok := credhttp.AsRedirectError(err); !ok {
				t.Fatalf("error %v is no redirect refusal", err)
			}
			msg := (&Tool{log: webtest.Discard()}).restError(err, cfg, search{phrase: "secret plans"}).Error()
			for _, want := range []string{"search_confluence.baseUrl", r.Target} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			assertNoSecret(t, "the message", msg)
			if strings.Contains(msg, "secret") && strings.Contains(msg, "plans") {
				t.Errorf("the message repeats the query: %s", msg)
			}
		})
	}
}

// Redirects within the origin: one below the API's base is followed; one
// elsewhere on the host and one to the login page are refused before they
// are followed.
func TestRESTRedirectsWithinTheOrigin(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	s := merge(cloudSettings(w), tool.Settings{SettingPageBodies: "0"})
	again := url.Values{"cql": {buildCQL(fieldSiteSearch, "vpn", "")}, "limit": {"11"}}
	w.Set(confluencetest.Scenario{Path: "/rest/api/search", Times: 1, Location: "/wiki/rest/api/search?" + again.Encode(), RedirectStatus: 307})
	res, err := call(t, tl, s, `{"query":"vpn"}`, policy.High)
	if err != nil || len(restResult(t, res).Hits) != 2 {
		t.Fatalf("a redirect inside the API was not followed: %+v %v", res, err)
	}

	for _, c := range []struct{ location, want, never string }{
		{"/other/rest/api/search?cql=x", "outside its API", "/other/"},
		{"/wiki/login.action?os_destination=%2Frest%2Fapi%2Fsearch", "login page", "/login.action"},
		{w.url(evilHost, "/collect"), "another origin", "/collect"},
	} {
		w.Reset()
		w.Set(confluencetest.Scenario{Path: "/rest/api/search", Location: c.location})
		_, err := call(t, tl, s, `{"query":"vpn"}`, policy.High)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("redirect to %s: %v", c.location, err)
		}
		assertNoSecret(t, "the message", err.Error())
		for _, q := range w.Requests() {
			if strings.Contains(q.Path, c.never) {
				t.Errorf("the refused redirect to %s was followed", c.location)
			}
		}
	}
	if n := w.net.Lookups(evilHost); n != 0 {
		t.Errorf("the other origin was looked up %d times; the redirect must be refused before", n)
	}
}

func TestNextLinks(t *testing.T) {
	c := &restClient{apiBase: mustURL(t, "https://wiki.example.org/confluence/")}
	for next, want := range map[string]string{
		"/rest/api/search?cql=x&start=10&limit=10":  "https://wiki.example.org/confluence/rest/api/search?cql=x&excerpt=highlight&expand=content.space&limit=10&start=10",
		"/rest/api/search?cql=x&cursor=abc":         "https://wiki.example.org/confluence/rest/api/search?cql=x&cursor=abc&excerpt=highlight&expand=content.space",
		"/confluence/rest/api/search?cql=x&start=5": "https://wiki.example.org/confluence/rest/api/search?cql=x&excerpt=highlight&expand=content.space&start=5",
		"/other/rest/api/search?cql=x&start=5":      "",
		"https://wiki.example.org/confluence/rest/api/search?cql=x&cursor=c&excerpt=none&expand=content.space": "https://wiki.example.org/confluence/rest/api/search?cql=x&cursor=c&excerpt=none&expand=content.space",
		"https://evil.example.com/confluence/rest/api/search?cql=x":                                            "",
		"http://wiki.example.org/confluence/rest/api/search?cql=x":                                             "",
		"//evil.example.com/rest/api/search?cql=x":                                                             "",
		"/rest/api/content?cql=x":                                                                              "",
		"/rest/api/search":                                                                                     "",
		"/rest/api/search?cql=x#f":                                                                             "",
		"https://wiki.example.org/other/rest/api/search?cql=x":                                                 "",
		"": "",
	} {
		u, ok := c.nextURL(next)
		got := ""
		if ok {
			got = u.String()
		}
		if got != want {
			t.Errorf("nextURL(%q) = %q, want %q", next, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{
		"2": "2s", "0": "0s", "9223372036854775807": "8760h0m0s", "99999999999999999999999": "?",
		"-5": "?", "soon": "?", "": "?", "Mon, 01 Jun 2026 12:00:30 GMT": "30s", "Mon, 01 Jun 2026 11:00:00 GMT": "0s",
	} {
		d, ok := parseRetryAfter(in, now)
		got := "?"
		if ok {
			got = d.String()
		}
		if got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
	if retryText(8760*time.Hour, true) != "later" || retryText(90*time.Second, true) != "in about 2 minutes" {
		t.Error("retryText")
	}
}
