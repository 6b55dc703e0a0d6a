package confluencetest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Layout is the deployment the fake imitates.
type Layout int

const (
	// Cloud serves under /wiki (and /ex/confluence/<CloudID>/wiki), pages
	// REST results with cursors and refuses the deprecated start.
	Cloud Layout = iota + 1
	// DataCenter serves under Options.Context, pages with start and limit,
	// and has the search page dosearchsite.action and a login page.
	DataCenter
)

// SignInMode says what the fake's web pages (the search page and the wiki
// pages, not the REST API) ask of a visitor.
type SignInMode int

const (
	// Anonymous serves every page to everyone.
	Anonymous SignInMode = iota
	// Negotiate answers 401 with "WWW-Authenticate: Negotiate" until a
	// request carries "Authorization: Negotiate <token>".
	Negotiate
	// LoginRedirect sends a visitor without the Negotiate sign-in to the
	// login page (302 to login.action?os_destination=…).
	LoginRedirect
)

// Options configure the fake.
type Options struct {
	Layout Layout
	// Context is the Data Center context path, "" or e.g. "/confluence".
	// Cloud always uses /wiki.
	Context string
	// Email and APIToken are the Cloud credential the REST API accepts as
	// "Basic base64(email:token)"; blank accepts anonymous requests.
	Email, APIToken string
	// PAT is the Data Center personal access token accepted as "Bearer
	// <PAT>"; blank accepts anonymous requests.
	PAT string
	// CloudID, when set, also serves the Cloud API under
	// /ex/confluence/<CloudID>/wiki, the path of scoped tokens on
	// api.atlassian.com.
	CloudID string
	// Pages are the wiki's content; nil means Fixture().
	Pages []Page
	// MaxLimit caps the limit of a REST search (default 25), the way
	// "fixed system limits" do.
	MaxLimit int
	// PageSize is how many hits the search page shows (default 10).
	PageSize int
	// PageSignIn is what the web pages ask of a visitor.
	PageSignIn SignInMode
}

// Scenario makes the fake misbehave for matching requests.
type Scenario struct {
	// Path, when set, limits the scenario to request paths containing it.
	Path string
	// Times limits how many requests the scenario answers; 0 means all.
	Times int
	// After lets that many matching requests through before the scenario
	// starts.
	After int
	// Status answers with this HTTP status, RetryAfter as the Retry-After
	// header and Body (JSON) as the body; a blank Body takes Confluence's
	// message for the status.
	Status     int
	RetryAfter string
	Body       string
	// Location answers with a redirect there (RedirectStatus, default 302).
	Location       string
	RedirectStatus int
	// RejectSiteSearch answers 400 to every query using siteSearch, as
	// servers that do not know the field do.
	RejectSiteSearch bool
	// Captcha makes a failed REST sign-in on Data Center report
	// X-Seraph-LoginReason: AUTHENTICATION_DENIED (a CAPTCHA is due).
	Captcha bool
}

// Request is one request the fake received.
type Request struct {
	Method string
	Host   string
	// Path is the decoded path; Query the parsed query.
	Path   string
	Query  url.Values
	Header http.Header
	// CQL is the cql parameter as received (decoded), if any.
	CQL string
	// Status is what the fake answered.
	Status int
}

// Server is the fake Confluence; it is an http.Handler.
type Server struct {
	o     Options
	pages []Page

	mu       sync.Mutex
	requests []Request
	scenario Scenario
	left     int
	passed   int
}

// New returns the fake for o.
func New(o Options) *Server {
	if o.Layout == 0 {
		o.Layout = DataCenter
	}
	if o.MaxLimit <= 0 {
		o.MaxLimit = 25
	}
	if o.PageSize <= 0 {
		o.PageSize = 10
	}
	o.Context = strings.TrimSuffix(o.Context, "/")
	s := &Server{o: o, pages: o.Pages}
	if s.pages == nil {
		s.pages = Fixture()
	}
	return s
}

// Set starts a scenario, replacing the one before.
func (s *Server) Set(sc Scenario) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenario, s.left, s.passed = sc, sc.Times, 0
}

// Reset ends the scenario and forgets the requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenario, s.left, s.passed, s.requests = Scenario{}, 0, 0, nil
}

// Requests returns what the fake received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// CQLs returns the cql parameters of the REST searches and search pages
// received, in order.
func (s *Server) CQLs() []string {
	var out []string
	for _, r := range s.Requests() {
		if r.CQL != "" {
			out = append(out, r.CQL)
		}
	}
	return out
}

// WebPath is the site-relative web address of p in the fake's layout,
// escaped, below the context (what the REST API reports as _links.webui).
func (s *Server) WebPath(p Page) string { return webPath(s.o.Layout, p) }

func webPath(l Layout, p Page) string {
	title := url.QueryEscape(p.Title)
	if l == Cloud {
		if p.Type == "blogpost" {
			return fmt.Sprintf("/spaces/%s/blog/%s/%s/%s", url.PathEscape(p.SpaceKey), p.LastModified.Format("2006/01/02"), p.ID, title)
		}
		return fmt.Sprintf("/spaces/%s/pages/%s/%s", url.PathEscape(p.SpaceKey), p.ID, title)
	}
	if p.Type == "page" {
		return "/display/" + url.PathEscape(p.SpaceKey) + "/" + title
	}
	return "/pages/viewpage.action?pageId=" + p.ID
}

// prefixes returns the path prefixes the fake serves under.
func (s *Server) prefixes() []string {
	if s.o.Layout == Cloud {
		p := []string{"/wiki"}
		if s.o.CloudID != "" {
			p = append(p, "/ex/confluence/"+s.o.CloudID+"/wiki")
		}
		return p
	}
	return []string{s.o.Context}
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// ServeHTTP answers like Confluence.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w}
	s.serve(rec, r)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.Query(),
		Header: r.Header.Clone(), CQL: r.URL.Query().Get("cql"), Status: rec.status})
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if sc, ok := s.takeScenario(r); ok {
		switch {
		case sc.Location != "":
			st := sc.RedirectStatus
			if st == 0 {
				st = http.StatusFound
			}
			w.Header().Set("Location", sc.Location)
			w.WriteHeader(st)
			return
		case sc.Status != 0:
			if sc.RetryAfter != "" {
				w.Header().Set("Retry-After", sc.RetryAfter)
			}
			body := sc.Body
			if body == "" {
				body = defaultBody(sc.Status)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(sc.Status)
			fmt.Fprint(w, body)
			return
		}
	}
	path := ""
	matched := false
	for _, p := range s.prefixes() {
		if rest, ok := strings.CutPrefix(r.URL.Path, p); ok && (rest == "" || rest[0] == '/') {
			path, matched = rest, true
			break
		}
	}
	if !matched {
		http.NotFound(w, r)
		return
	}
	switch {
	case path == "/rest/api/search":
		s.restSearch(w, r)
	case strings.HasPrefix(path, "/rest/api/content/"):
		s.restContent(w, r, strings.TrimPrefix(path, "/rest/api/content/"))
	case strings.HasPrefix(path, "/rest/"):
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "null for uri: " + r.URL.Path})
	case s.o.Layout == DataCenter && path == "/login.action":
		writeHTML(w, http.StatusOK, loginPage)
	case s.o.Layout == DataCenter && path == "/dosearchsite.action":
		if s.pageSignIn(w, r) {
			s.searchPage(w, r)
		}
	default:
		p, ok := s.pageAt(r)
		if !ok {
			writeHTML(w, http.StatusNotFound, "<html><head><title>Page not found - Confluence</title></head><body><p>Page not found.</p></body></html>")
			return
		}
		if s.pageSignIn(w, r) {
			writeHTML(w, http.StatusOK, fmt.Sprintf(`<!DOCTYPE html><html><head><title>%s - %s - Confluence</title></head><body>
<header><nav><a href="%s/">Dashboard</a></nav></header>
<main id="main"><div id="main-content" class="wiki-content"><h1>%s</h1>%s</div></main></body></html>`,
				html.EscapeString(p.Title), html.EscapeString(p.SpaceName), s.o.Context, html.EscapeString(p.Title), p.Body))
		}
	}
}

func (s *Server) takeScenario(r *http.Request) (Scenario, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scenario
	if sc.Status == 0 && sc.Location == "" {
		return sc, false
	}
	if sc.Path != "" && !strings.Contains(r.URL.Path, sc.Path) {
		return sc, false
	}
	if s.passed < sc.After {
		s.passed++
		return sc, false
	}
	if sc.Times > 0 {
		if s.left <= 0 {
			return sc, false
		}
		s.left--
	}
	return sc, true
}

func (s *Server) current() Scenario {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scenario
}

func defaultBody(status int) string {
	switch status {
	case http.StatusForbidden:
		return `{"message":"Current user not permitted to use Confluence","statusCode":403}`
	case http.StatusNotFound:
		return `{"statusCode":404,"message":"No space with key : NOPE"}`
	case http.StatusTooManyRequests:
		return `{"statusCode":429,"message":"Rate limit exceeded"}`
	case http.StatusServiceUnavailable:
		return `{"statusCode":503,"message":"Service unavailable"}`
	}
	return fmt.Sprintf(`{"statusCode":%d,"message":%q}`, status, http.StatusText(status))
}

// authorized checks the REST credential of the layout.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	got := r.Header.Get("Authorization")
	want := ""
	switch {
	case s.o.Layout == Cloud && s.o.APIToken != "":
		want = "Basic " + base64.StdEncoding.EncodeToString([]byte(s.o.Email+":"+s.o.APIToken))
	case s.o.Layout == DataCenter && s.o.PAT != "":
		want = "Bearer " + s.o.PAT
	}
	if want == "" || got == want {
		return true
	}
	if s.o.Layout == DataCenter {
		reason := "AUTHENTICATED_FAILED"
		if s.current().Captcha {
			reason = "AUTHENTICATION_DENIED"
		}
		w.Header().Set("X-Seraph-LoginReason", reason)
	}
	writeJSON(w, http.StatusUnauthorized, map[string]any{"statusCode": 401, "message": "This request requires authentication"})
	return false
}

// pageSignIn applies PageSignIn to a web page; false means it answered.
func (s *Server) pageSignIn(w http.ResponseWriter, r *http.Request) bool {
	signedIn := strings.HasPrefix(r.Header.Get("Authorization"), "Negotiate ") && len(r.Header.Get("Authorization")) > len("Negotiate ")
	switch s.o.PageSignIn {
	case Negotiate:
		if !signedIn {
			w.Header().Set("WWW-Authenticate", "Negotiate")
			writeHTML(w, http.StatusUnauthorized, "<html><body><p>Unauthorized</p></body></html>")
			return false
		}
	case LoginRedirect:
		if !signedIn {
			dest := strings.TrimPrefix(r.URL.RequestURI(), s.o.Context)
			loc := s.o.Context + "/login.action?os_destination=" + url.QueryEscape(dest) + "&permissionViolation=true"
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusFound)
			return false
		}
	}
	return true
}

func (s *Server) pageAt(r *http.Request) (Page, bool) {
	path := r.URL.Path
	for _, p := range s.prefixes() {
		if rest, ok := strings.CutPrefix(path, p); ok {
			path = rest
			break
		}
	}
	for _, p := range s.pages {
		if p.Type == "attachment" {
			continue
		}
		u, err := url.Parse(webPath(s.o.Layout, p))
		if err != nil {
			continue
		}
		if u.Path == path && (u.RawQuery == "" || u.Query().Get("pageId") == r.URL.Query().Get("pageId")) {
			return p, true
		}
	}
	return Page{}, false
}

// errBadQuery is a query the fake's search cannot run; its text is what
// Confluence says.
type errBadQuery string

func (e errBadQuery) Error() string { return string(e) }

// search runs cql over the pages and returns the matches, best first.
func (s *Server) search(cql string) ([]Page, []string, error) {
	e, err := ParseCQL(cql)
	if err != nil {
		return nil, nil, errBadQuery("Could not parse cql : " + cql)
	}
	var terms []string
	var check func(Expr) error
	check = func(e Expr) error {
		switch x := e.(type) {
		case *And:
			if err := check(x.Left); err != nil {
				return err
			}
			return check(x.Right)
		case *Or:
			if err := check(x.Left); err != nil {
				return err
			}
			return check(x.Right)
		case *Not:
			return check(x.X)
		case *Clause:
			switch strings.ToLower(x.Field) {
			case "sitesearch":
				if s.current().RejectSiteSearch {
					return errBadQuery("Could not parse cql : " + cql + " (unknown field siteSearch)")
				}
				fallthrough
			case "text", "title":
				if x.Op != "~" && x.Op != "!~" {
					return errBadQuery("Could not parse cql : " + cql)
				}
				v := x.Values[0]
				// Lucene's own syntax inside the value: an unbalanced
				// quote or a leading wildcard does not parse.
				if strings.Count(v, `"`)%2 == 1 || strings.HasPrefix(strings.TrimSpace(v), "*") || strings.HasPrefix(strings.TrimSpace(v), "?") {
					return errBadQuery("Could not parse cql : " + cql)
				}
				terms = append(terms, words(v)...)
			case "space", "type", "id":
			default:
				return errBadQuery("Could not parse cql : " + cql + " (unknown field " + x.Field + ")")
			}
		}
		return nil
	}
	if err := check(e); err != nil {
		return nil, nil, err
	}
	type scored struct {
		p     Page
		score int
		i     int
	}
	var hits []scored
	for i, p := range s.pages {
		if eval(e, p) {
			hits = append(hits, scored{p, score(p, terms), i})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	out := make([]Page, len(hits))
	for i, h := range hits {
		out[i] = h.p
	}
	return out, terms, nil
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// text is a page's body as plain text.
func text(p Page) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(p.Body, " "))), " ")
}

func words(v string) []string {
	return strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func matchesText(p Page, v string, titleOnly bool) bool {
	hay := strings.ToLower(p.Title)
	if !titleOnly {
		hay += " " + strings.ToLower(text(p))
	}
	ws := words(v)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

func score(p Page, terms []string) int {
	n := 0
	title := strings.ToLower(p.Title)
	for _, t := range terms {
		if strings.Contains(title, t) {
			n += 3
		}
	}
	return n
}

func eval(e Expr, p Page) bool {
	switch x := e.(type) {
	case *And:
		return eval(x.Left, p) && eval(x.Right, p)
	case *Or:
		return eval(x.Left, p) || eval(x.Right, p)
	case *Not:
		return !eval(x.X, p)
	case *Clause:
		var field string
		switch strings.ToLower(x.Field) {
		case "sitesearch", "text":
			m := matchesText(p, x.Values[0], false)
			return m == (x.Op == "~")
		case "title":
			m := matchesText(p, x.Values[0], true)
			return m == (x.Op == "~")
		case "space":
			field = p.SpaceKey
		case "type":
			field = p.Type
		case "id":
			field = p.ID
		}
		in := false
		for _, v := range x.Values {
			if strings.EqualFold(v, field) {
				in = true
			}
		}
		switch x.Op {
		case "=", "in":
			return in
		case "!=", "not in":
			return !in
		}
	}
	return false
}

// highlight wraps each term in Confluence's highlight markers.
func highlight(s string, terms []string) string {
	if len(terms) == 0 {
		return s
	}
	low := strings.ToLower(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		hit := 0
		for _, t := range terms {
			if t != "" && strings.HasPrefix(low[i:], t) && len(t) > hit {
				hit = len(t)
			}
		}
		if hit == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		// The rest of the word is highlighted too, as stemming does.
		for i+hit < len(s) && isWordByte(s[i+hit]) {
			hit++
		}
		b.WriteString("@@@hl@@@" + s[i:i+hit] + "@@@endhl@@@")
		i += hit
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func excerptOf(p Page, terms []string) string {
	t := text(p)
	if r := []rune(t); len(r) > 240 {
		t = string(r[:240]) + " …"
	}
	return highlight(html.EscapeString(t), terms)
}

func (s *Server) restSearch(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	q := r.URL.Query()
	cql := q.Get("cql")
	if cql == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "CQL query parameter is required but was empty"})
		return
	}
	if s.o.Layout == Cloud && q.Has("start") {
		writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "The start parameter is deprecated; follow the cursor in _links.next"})
		return
	}
	limit := 25
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "limit must be a positive number"})
			return
		}
		limit = n
	}
	if limit > s.o.MaxLimit {
		limit = s.o.MaxLimit
	}
	start := 0
	if s.o.Layout == Cloud {
		if c := q.Get("cursor"); c != "" {
			b, err := base64.RawURLEncoding.DecodeString(c)
			n, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
			if err != nil || err2 != nil || !strings.HasPrefix(string(b), "offset:") {
				writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "invalid cursor"})
				return
			}
			start = n
		}
	} else if v := q.Get("start"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "start must be a positive number"})
			return
		}
		start = n
	}
	hits, terms, err := s.search(cql)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": err.Error()})
		return
	}
	expandSpace := strings.Contains(q.Get("expand"), "content.space")
	highlighted := q.Get("excerpt") == "" || strings.HasPrefix(q.Get("excerpt"), "highlight")
	end := min(start+limit, len(hits))
	if start > len(hits) {
		start = len(hits)
	}
	ctxPath := s.o.Context
	prefix := strings.TrimSuffix(r.URL.Path, "/rest/api/search")
	if s.o.Layout == Cloud {
		ctxPath = "/wiki"
	}
	base := "https://" + r.Host + prefix
	results := []any{}
	for _, p := range hits[start:end] {
		web := webPath(s.o.Layout, p)
		content := map[string]any{"id": p.ID, "type": p.Type, "status": "current", "title": p.Title,
			"_links": map[string]any{"webui": web, "self": base + "/rest/api/content/" + p.ID}}
		if expandSpace {
			content["space"] = map[string]any{"key": p.SpaceKey, "name": p.SpaceName}
		}
		title, excerpt := p.Title, html.EscapeString(text(p))
		if highlighted {
			title, excerpt = highlight(p.Title, terms), excerptOf(p, terms)
		}
		results = append(results, map[string]any{
			"content": content, "title": title, "excerpt": excerpt, "url": web,
			"resultGlobalContainer": map[string]any{"title": p.SpaceName, "displayUrl": spaceURL(s.o.Layout, p.SpaceKey)},
			"breadcrumbs":           []any{}, "entityType": "content", "iconCssClass": "aui-icon content-type-" + p.Type,
			"lastModified": p.LastModified.Format("2006-01-02T15:04:05.000Z07:00"), "friendlyLastModified": p.LastModified.Format("Jan 02, 2006"),
			"score": 3.5,
		})
	}
	links := map[string]any{"base": base, "context": ctxPath, "self": base + "/rest/api/search?" + r.URL.RawQuery}
	if end < len(hits) {
		next := url.Values{"cql": {cql}, "limit": {strconv.Itoa(limit)}}
		if s.o.Layout == Cloud {
			next.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte("offset:"+strconv.Itoa(end))))
		} else {
			next.Set("start", strconv.Itoa(end))
		}
		links["next"] = "/rest/api/search?" + next.Encode()
	}
	page := map[string]any{"results": results, "start": start, "limit": limit, "size": len(results),
		"cqlQuery": cql, "searchDuration": 12, "_links": links}
	if s.o.Layout == DataCenter {
		page["totalSize"] = len(hits)
	}
	writeJSON(w, http.StatusOK, page)
}

func spaceURL(l Layout, key string) string {
	if l == Cloud {
		return "/spaces/" + url.PathEscape(key)
	}
	return "/display/" + url.PathEscape(key)
}

func (s *Server) restContent(w http.ResponseWriter, r *http.Request, id string) {
	if !s.authorized(w, r) {
		return
	}
	for _, p := range s.pages {
		if p.ID != id {
			continue
		}
		base := "https://" + r.Host + strings.TrimSuffix(r.URL.Path, "/rest/api/content/"+id)
		out := map[string]any{"id": p.ID, "type": p.Type, "status": "current", "title": p.Title,
			"space":  map[string]any{"key": p.SpaceKey, "name": p.SpaceName},
			"_links": map[string]any{"webui": webPath(s.o.Layout, p), "base": base}}
		if strings.Contains(r.URL.Query().Get("expand"), "body.view") {
			out["body"] = map[string]any{"view": map[string]any{"value": p.Body, "representation": "view"}}
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "No content found with id: " + id})
}

// searchPage renders dosearchsite.action the way Data Center's
// server-rendered search does: the results as a list with their space and
// date, and a link to the next page while there are more.
func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cql, qs := q.Get("cql"), q.Get("queryString")
	startIndex, _ := strconv.Atoi(q.Get("startIndex"))
	if startIndex < 0 {
		startIndex = 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><title>Search - Confluence</title></head><body>
<header id="header"><nav class="aui-header"><a href="%[1]s/">Dashboard</a> <a href="%[1]s/spacedirectory/view.action">Spaces</a></nav></header>
<main id="main" role="main"><h1>Search</h1>
`, s.o.Context)
	hits, terms, err := s.search(cql)
	switch {
	case err != nil:
		b.WriteString(`<div class="aui-message error"><p>The search could not be performed: the query could not be parsed.</p></div>`)
	case len(hits) == 0:
		fmt.Fprintf(&b, `<p class="search-results-count">No results found for <strong>%s</strong>.</p>`, html.EscapeString(qs))
	default:
		fmt.Fprintf(&b, `<p class="search-results-count">%d results for <strong>%s</strong></p><ol class="search-results">`, len(hits), html.EscapeString(qs))
		end := min(startIndex+s.o.PageSize, len(hits))
		for _, p := range hits[min(startIndex, len(hits)):end] {
			hl := strings.NewReplacer("@@@hl@@@", "<strong>", "@@@endhl@@@", "</strong>").Replace(excerptOf(p, terms))
			fmt.Fprintf(&b, `<li class="search-result"><h3><a href="%s%s">%s</a></h3><div class="highlights">%s</div>
<div class="search-result-meta"><span class="space">%s</span> &#8226; <span class="date">%s</span></div></li>
`, s.o.Context, html.EscapeString(webPath(s.o.Layout, p)), html.EscapeString(p.Title), hl,
				html.EscapeString(p.SpaceName), p.LastModified.Format("Jan 02, 2006"))
		}
		b.WriteString("</ol>")
		if end < len(hits) {
			next := url.Values{"cql": {cql}, "queryString": {qs}, "startIndex": {strconv.Itoa(end)}}
			fmt.Fprintf(&b, `<ol class="aui-nav aui-nav-pagination"><li class="aui-nav-next"><a href="%s/dosearchsite.action?%s">Next page of results</a></li></ol>`,
				s.o.Context, html.EscapeString(next.Encode()))
		}
	}
	b.WriteString(`</main><footer><p>Powered by Atlassian Confluence</p></footer></body></html>`)
	writeHTML(w, http.StatusOK, b.String())
}

const loginPage = `<!DOCTYPE html><html><head><title>Log In - Confluence</title></head><body><main><h1>Log in</h1>
<form method="post" action="dologin.action"><label>Username <input name="os_username"></label><label>Password <input type="password" name="os_password"></label>
<button>Log in</button></form></main></body></html>`

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeHTML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprint(w, body)
}
