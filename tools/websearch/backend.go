package websearch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// Backend names, in the fixed order in which they are asked.
const (
	NameSearxng = "SEARXNG"
	NameBrave   = "BRAVE"
	NameTavily  = "TAVILY"
)

func backendNames() []string { return []string{NameSearxng, NameBrave, NameTavily} }

// displayName is how notes name a backend.
func displayName(name string) string {
	switch name {
	case NameSearxng:
		return "SearXNG"
	case NameBrave:
		return "Brave Search"
	case NameTavily:
		return "Tavily"
	}
	return name
}

// maxAPIResponse caps what a search service may send.
const maxAPIResponse = 1 << 20

// maxExcerpt is how much of an error body a message quotes.
const maxExcerpt = 400

// query is one search as a backend receives it.
type query struct {
	text      string
	language  string // a tag, or "all"
	timeRange string // "", "day", "month" or "year"
	safe      string // "", OFF, MODERATE or STRICT
	page      int
	limit     int
}

// hit is one search result as a backend found it.
type hit struct {
	url, title, snippet, date string
}

// answer is what one backend returned.
type answer struct {
	hits []hit
	// more says the backend could serve a further page.
	more  bool
	notes []string
}

// backend is one search service.
type backend interface {
	name() string
	// maxPage is the deepest page the service serves.
	maxPage() int
	// canFilter reports whether the service applies safe search as
	// configured.
	canFilter() bool
	search(ctx context.Context, q query) (answer, error)
}

// apiError is a failed request to a search service. Its message never
// holds an API key; it may quote the service's answer, which is filtered
// like everything else before the model sees it.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// do sends req and reads a JSON answer into v, with the hints of a service
// for its status codes.
func do(client *http.Client, req *http.Request, v any, hints map[int]string) error {
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error repeats the address, which holds the query.
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("the service did not answer in time")
		}
		return fmt.Errorf("the request failed: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIResponse+1))
	if err != nil {
		return fmt.Errorf("reading the answer failed: %w", err)
	}
	if len(body) > maxAPIResponse {
		return fmt.Errorf("the answer is larger than %d bytes", maxAPIResponse)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if h := hints[resp.StatusCode]; h != "" {
			msg += ": " + h
		}
		if ex := excerpt(body); ex != "" {
			msg += ". The service answered: " + ex
		}
		return &apiError{status: resp.StatusCode, msg: msg}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		if h := hints[0]; h != "" {
			return &apiError{status: resp.StatusCode, msg: fmt.Sprintf("the answer is %s, not JSON: %s", mt, h)}
		}
		return &apiError{status: resp.StatusCode, msg: fmt.Sprintf("the answer is %s, not JSON", mt)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the answer is not the expected JSON: %w", err)
	}
	return nil
}

// excerpt makes an error body fit for a message: control characters become
// spaces, whitespace is collapsed, and at most 400 characters are kept.
func excerpt(body []byte) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range string(bytes.ToValidUTF8(body, []byte("?"))) {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		if n >= maxExcerpt {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// primarySubtag returns the lower-case primary subtag of a language tag.
func primarySubtag(tag string) string {
	p, _, _ := strings.Cut(tag, "-")
	return strings.ToLower(p)
}

// ---- SearXNG ----

type searxng struct {
	client   *http.Client
	endpoint string
}

// searxngEndpoint turns a configured base URL into the search endpoint:
// a trailing "/" and "/search" are dropped, then "/search" is appended;
// query and fragment are dropped.
func searxngEndpoint(base string) (string, error) {
	if err := checkBaseURL(stripQuery(base)); err != nil {
		return "", err
	}
	u, _ := url.Parse(base)
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/search")
	u.Path = strings.TrimRight(p, "/") + "/search"
	u.RawPath = ""
	return u.String(), nil
}

func stripQuery(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		return s[:i]
	}
	return s
}

func (*searxng) name() string    { return NameSearxng }
func (*searxng) maxPage() int    { return 20 }
func (*searxng) canFilter() bool { return true }

type searxngResponse struct {
	Results []struct {
		URL            string          `json:"url"`
		Title          string          `json:"title"`
		Content        string          `json:"content"`
		Score          *float64        `json:"score"`
		PublishedDate  json.RawMessage `json:"publishedDate"`
		PublishedDate2 json.RawMessage `json:"published_date"`
	} `json:"results"`
	UnresponsiveEngines []json.RawMessage `json:"unresponsive_engines"`
}

var searxngHints = map[int]string{
	0:   "enable json in search.formats of the instance's settings.yml",
	401: "the instance refuses JSON requests (json missing from search.formats) or a bot check blocked the request",
	403: "the instance refuses JSON requests (json missing from search.formats) or a bot check blocked the request",
	429: "the instance limits how often it may be asked; wait, or allow Steward in its limiter",
}

func (s *searxng) search(ctx context.Context, q query) (answer, error) {
	v := url.Values{}
	v.Set("q", q.text)
	v.Set("format", "json")
	if q.language != languageAll {
		v.Set("language", q.language)
	}
	if q.timeRange != "" {
		v.Set("time_range", q.timeRange)
	}
	if q.page > 1 {
		v.Set("pageno", fmt.Sprint(q.page))
	}
	switch q.safe {
	case SafeOff:
		v.Set("safesearch", "0")
	case SafeModerate:
		v.Set("safesearch", "1")
	case SafeStrict:
		v.Set("safesearch", "2")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint+"?"+v.Encode(), nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Accept", "application/json")
	var r searxngResponse
	if err := do(s.client, req, &r, searxngHints); err != nil {
		return answer{}, err
	}
	type scored struct {
		hit
		score    float64
		hasScore bool
	}
	var list []scored
	anyScore := false
	for _, res := range r.Results {
		sc := scored{hit: hit{url: res.URL, title: res.Title, snippet: res.Content, date: rawString(res.PublishedDate)}}
		if sc.date == "" {
			sc.date = rawString(res.PublishedDate2)
		}
		if res.Score != nil {
			sc.score, sc.hasScore, anyScore = *res.Score, true, true
		}
		list = append(list, sc)
	}
	if anyScore {
		slices.SortStableFunc(list, func(a, b scored) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return strings.Compare(a.title, b.title)
		})
	}
	var a answer
	for _, sc := range list {
		a.hits = append(a.hits, sc.hit)
	}
	a.more = len(r.Results) >= q.limit && q.page < s.maxPage()
	if names := unresponsive(r.UnresponsiveEngines); len(names) > 0 {
		a.notes = append(a.notes, "These engines of the instance did not answer: "+strings.Join(names, ", ")+".")
	}
	return a, nil
}

// rawString reads a JSON string, or "" for null or anything else.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	return ""
}

// unresponsive reads SearXNG's unresponsive engines: pairs of name and
// reason, or plain names in old versions.
func unresponsive(raw []json.RawMessage) []string {
	var out []string
	for _, r := range raw {
		var pair []string
		if json.Unmarshal(r, &pair) == nil && len(pair) > 0 {
			s := pair[0]
			if len(pair) > 1 && pair[1] != "" {
				s += " (" + pair[1] + ")"
			}
			out = append(out, s)
			continue
		}
		if s := rawString(r); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ---- Brave Search ----

type brave struct {
	client *http.Client
	base   string
	key    string
}

func (*brave) name() string    { return NameBrave }
func (*brave) maxPage() int    { return 10 } // offset 0 to 9, in pages of count
func (*brave) canFilter() bool { return true }

// braveMaxQuery are Brave's limits on a query.
const (
	braveMaxQueryChars = 400
	braveMaxQueryWords = 50
)

// braveLanguages maps a primary subtag to Brave's search_lang code where
// Brave spells it differently; other supported codes are used as they are.
var braveLanguages = map[string]string{"ja": "jp", "zh": "zh-hans", "pt": "pt-pt", "no": "nb"}

// braveSupported are Brave's search_lang codes.
var braveSupported = map[string]bool{
	"ar": true, "eu": true, "bn": true, "bg": true, "ca": true, "zh-hans": true, "zh-hant": true, "hr": true, "cs": true, "da": true,
	"nl": true, "en": true, "en-gb": true, "et": true, "fi": true, "fr": true, "gl": true, "de": true, "gu": true, "he": true, "hi": true,
	"hu": true, "is": true, "it": true, "jp": true, "kn": true, "ko": true, "lv": true, "lt": true, "ms": true, "ml": true, "mr": true,
	"nb": true, "pl": true, "pt-br": true, "pt-pt": true, "pa": true, "ro": true, "ru": true, "sr": true, "sk": true, "sl": true, "es": true,
	"sv": true, "ta": true, "te": true, "th": true, "tr": true, "uk": true, "vi": true,
}

// braveLanguage maps a language tag to Brave's code, or "" when Brave has
// none for it.
func braveLanguage(tag string) string {
	t := strings.ToLower(tag)
	switch t {
	case "en-gb", "pt-br", "zh-hant", "zh-tw", "zh-hk":
		if t == "zh-tw" || t == "zh-hk" {
			return "zh-hant"
		}
		return t
	}
	p := primarySubtag(t)
	if m, ok := braveLanguages[p]; ok {
		p = m
	}
	if braveSupported[p] {
		return p
	}
	return ""
}

type braveResponse struct {
	Query struct {
		Original             string `json:"original"`
		Altered              string `json:"altered"`
		MoreResultsAvailable bool   `json:"more_results_available"`
	} `json:"query"`
	Web struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			PageAge     string `json:"page_age"`
			Age         string `json:"age"`
		} `json:"results"`
	} `json:"web"`
}

var braveHints = map[int]string{
	401: "the API key was refused; check brave.apiKey",
	403: "the API key may not use the Web Search API; check its plan",
	422: "the service refused the parameters of the search",
	429: "the rate limit or the monthly quota of the API key is used up; wait or raise the plan",
}

func (b *brave) search(ctx context.Context, q query) (answer, error) {
	if n := len([]rune(q.text)); n > braveMaxQueryChars {
		return answer{}, fmt.Errorf("the query has %d characters; Brave Search takes at most %d", n, braveMaxQueryChars)
	}
	if n := len(strings.Fields(q.text)); n > braveMaxQueryWords {
		return answer{}, fmt.Errorf("the query has %d words; Brave Search takes at most %d", n, braveMaxQueryWords)
	}
	var a answer
	v := url.Values{}
	v.Set("q", q.text)
	count := min(q.limit, 20)
	v.Set("count", fmt.Sprint(count))
	if q.page > 1 {
		v.Set("offset", fmt.Sprint(q.page-1))
	}
	v.Set("text_decorations", "false")
	switch q.safe {
	case SafeOff:
		v.Set("safesearch", "off")
	case SafeModerate:
		v.Set("safesearch", "moderate")
	case SafeStrict:
		v.Set("safesearch", "strict")
	}
	switch q.timeRange {
	case "day":
		v.Set("freshness", "pd")
	case "month":
		v.Set("freshness", "pm")
	case "year":
		v.Set("freshness", "py")
	}
	if q.language != languageAll {
		if l := braveLanguage(q.language); l != "" {
			v.Set("search_lang", l)
		} else {
			a.notes = append(a.notes, "Brave Search cannot restrict the search to this language, so it searched in every language.")
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/res/v1/web/search?"+v.Encode(), nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	var r braveResponse
	if err := do(b.client, req, &r, braveHints); err != nil {
		return answer{}, err
	}
	for _, res := range r.Web.Results {
		a.hits = append(a.hits, hit{url: res.URL, title: res.Title, snippet: res.Description, date: res.PageAge})
	}
	a.more = r.Query.MoreResultsAvailable && q.page < b.maxPage()
	if alt := strings.TrimSpace(r.Query.Altered); alt != "" && alt != q.text {
		a.notes = append(a.notes, fmt.Sprintf("Brave Search corrected the query and searched for '%s' instead.", alt))
	}
	return a, nil
}

// ---- Tavily ----

type tavily struct {
	client *http.Client
	base   string
	key    string
	depth  string
}

func (*tavily) name() string { return NameTavily }
func (*tavily) maxPage() int { return 1 }

// canFilter is false at the fast depths, which ignore safe_search.
func (t *tavily) canFilter() bool { return t.depth == DepthBasic || t.depth == DepthAdvanced }

type tavilyRequest struct {
	Query            string `json:"query"`
	SearchDepth      string `json:"search_depth"`
	MaxResults       int    `json:"max_results"`
	TimeRange        string `json:"time_range,omitempty"`
	Language         string `json:"language,omitempty"`
	FilterByLanguage bool   `json:"filter_by_language,omitempty"`
	SafeSearch       *bool  `json:"safe_search,omitempty"`
}

type tavilyResponse struct {
	Results []struct {
		Title         string `json:"title"`
		URL           string `json:"url"`
		Content       string `json:"content"`
		PublishedDate string `json:"published_date"`
	} `json:"results"`
}

var tavilyHints = map[int]string{
	400: "the service refused the parameters of the search",
	401: "the API key was refused; check tavily.apiKey",
	403: "the API key may not use this endpoint",
	429: "the rate limit of the API key is reached; wait a moment",
	432: "the monthly quota of the plan is used up",
	433: "the spending limit of the account is reached",
}

func (t *tavily) search(ctx context.Context, q query) (answer, error) {
	var a answer
	body := tavilyRequest{Query: q.text, SearchDepth: t.depth, MaxResults: min(q.limit, 20), TimeRange: q.timeRange}
	if q.language != languageAll {
		if p := primarySubtag(q.language); len(p) == 2 {
			body.Language, body.FilterByLanguage = p, true
		} else {
			a.notes = append(a.notes, "Tavily cannot restrict the search to this language, so it searched in every language.")
		}
	}
	switch q.safe {
	case SafeOff:
		f := false
		body.SafeSearch = &f
	case SafeModerate, SafeStrict:
		tr := true
		body.SafeSearch = &tr
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/search", bytes.NewReader(raw))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	var r tavilyResponse
	if err := do(t.client, req, &r, tavilyHints); err != nil {
		return answer{}, err
	}
	for _, res := range r.Results {
		a.hits = append(a.hits, hit{url: res.URL, title: res.Title, snippet: res.Content, date: res.PublishedDate})
	}
	return a, nil
}
