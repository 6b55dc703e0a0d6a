package confluence

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stewardhq/steward/web"
)

// Bounds of the fields of one hit, in characters, before the budget of the
// whole result applies.
const (
	maxTitleChars   = 300
	maxSpaceChars   = 200
	maxExcerptChars = 600
	maxIDChars      = 20
)

// The highlight markers Confluence wraps matched terms in.
const (
	markOpen  = "@@@hl@@@"
	markClose = "@@@endhl@@@"
)

// searchAnswer is the part of a SearchPageResponse the tool reads.
type searchAnswer struct {
	Results []searchResult `json:"results"`
	Links   struct {
		Next string `json:"next"`
	} `json:"_links"`
}

type searchResult struct {
	Content *struct {
		ID    string `json:"id"`
		Type  string `json:"type"`
		Title string `json:"title"`
		Space *struct {
			Key  string `json:"key"`
			Name string `json:"name"`
		} `json:"space"`
		Links struct {
			WebUI string `json:"webui"`
		} `json:"_links"`
	} `json:"content"`
	Title           string `json:"title"`
	Excerpt         string `json:"excerpt"`
	URL             string `json:"url"`
	EntityType      string `json:"entityType"`
	LastModified    string `json:"lastModified"`
	GlobalContainer *struct {
		Title string `json:"title"`
	} `json:"resultGlobalContainer"`
}

// hit is one search result as the tool keeps it: cleaned, not yet
// filtered or cut to the budget.
type hit struct {
	id, kind, title, space, excerpt, modified string
	// plainTitle is the title without emphasis, for the sources list.
	plainTitle string
	// webURL is the page's address inside the wiki, or "" when the answer
	// gave none the tool could trust.
	webURL string
}

// parseSearch reads a REST search answer. Results that are no page or blog
// post are skipped; each field is cleaned (highlight markers turned into
// Markdown emphasis, HTML entities decoded, whitespace collapsed, cut to a
// bound), and each hit's web address is built from the configured wiki
// base and the site-relative path the answer gives, never from an address
// the answer makes up. next is the answer's link to the following results,
// as sent.
func parseSearch(body []byte, wiki *url.URL) (hits []hit, next string, err error) {
	var a searchAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, "", fmt.Errorf("the answer is not JSON (at byte %d)", syn.Offset)
		}
		return nil, "", errors.New("the answer is JSON, but not a Confluence search result (results and _links)")
	}
	for _, r := range a.Results {
		if h, ok := toHit(r, wiki); ok {
			hits = append(hits, h)
		}
	}
	return hits, a.Links.Next, nil
}

func toHit(r searchResult, wiki *url.URL) (hit, bool) {
	if r.Content == nil || (r.EntityType != "" && r.EntityType != "content") {
		return hit{}, false
	}
	c := r.Content
	kind := strings.ToLower(strings.TrimSpace(c.Type))
	if kind != "page" && kind != "blogpost" {
		return hit{}, false
	}
	h := hit{kind: kind}
	if id := strings.TrimSpace(c.ID); id != "" && len(id) <= maxIDChars && strings.Trim(id, "0123456789") == "" {
		h.id = id
	}
	h.title = clean(firstNonBlank(r.Title, c.Title), maxTitleChars)
	h.plainTitle = clean(strings.NewReplacer(markOpen, "", markClose, "").Replace(firstNonBlank(r.Title, c.Title)), maxTitleChars)
	if h.title == "" {
		h.title, h.plainTitle = "(untitled)", "(untitled)"
	}
	switch {
	case c.Space != nil && strings.TrimSpace(c.Space.Name) != "" && strings.TrimSpace(c.Space.Key) != "":
		h.space = clean(c.Space.Name, maxSpaceChars) + " (" + clean(c.Space.Key, maxSpaceChars) + ")"
	case c.Space != nil && strings.TrimSpace(c.Space.Key) != "":
		h.space = clean(c.Space.Key, maxSpaceChars)
	case r.GlobalContainer != nil:
		h.space = clean(r.GlobalContainer.Title, maxSpaceChars)
	}
	h.excerpt = clean(r.Excerpt, maxExcerptChars)
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(r.LastModified)); err == nil {
		h.modified = t.UTC().Format(time.RFC3339)
	}
	h.webURL = webAddress(wiki, firstNonBlank(c.Links.WebUI, r.URL))
	return h, true
}

// webAddress joins the wiki base and a site-relative path the answer gave
// ("/spaces/OPS/pages/1/Title", "/display/IT/VPN+setup",
// "/pages/viewpage.action?pageId=1"). Anything that is not such a path, or
// that would leave the wiki, gives "".
func webAddress(wiki *url.URL, rel string) string {
	rel = strings.TrimSpace(rel)
	if wiki == nil || rel == "" || !strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, "//") ||
		strings.ContainsFunc(rel, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) || strings.ContainsAny(rel, "\\#") {
		return ""
	}
	p, err := url.Parse(rel)
	if err != nil || p.Scheme != "" || p.Host != "" || p.User != nil {
		return ""
	}
	abs, err := url.Parse(strings.TrimSuffix(wiki.String(), "/") + rel)
	if err != nil || !web.WithinBase(wiki, abs) {
		return ""
	}
	return abs.String()
}

// clean turns a field of a search answer into text for the model: the
// highlight markers become Markdown emphasis, HTML entities are decoded
// (the answer escapes excerpts and titles), invalid UTF-8 and control
// characters become spaces, whitespace collapses, and the text is cut to
// max characters at a word where one is near.
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, " ")
	s = emphasize(s)
	s = html.UnescapeString(s)
	// Entities may have spelled the markers out; they carry no meaning now.
	s = strings.NewReplacer(markOpen, "", markClose, "").Replace(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return cut(s, max)
}

// emphasize turns @@@hl@@@term@@@endhl@@@ into **term**. A marker without
// its partner, and an emphasis around nothing, are dropped; spaces at the
// edges of a term move outside the emphasis, so the Markdown stays valid.
func emphasize(s string) string {
	if !strings.Contains(s, markOpen) && !strings.Contains(s, markClose) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, markOpen)
		j := strings.Index(s, markClose)
		if i < 0 {
			// A close without an open is dropped.
			b.WriteString(strings.ReplaceAll(s, markClose, ""))
			return b.String()
		}
		if j >= 0 && j < i {
			b.WriteString(s[:j])
			s = s[j+len(markClose):]
			continue
		}
		b.WriteString(s[:i])
		s = s[i+len(markOpen):]
		j = strings.Index(s, markClose)
		k := strings.Index(s, markOpen)
		if j < 0 || (k >= 0 && k < j) {
			// An open without its close: the marker goes, the text stays.
			continue
		}
		term := s[:j]
		s = s[j+len(markClose):]
		lead := term[:len(term)-len(strings.TrimLeftFunc(term, unicode.IsSpace))]
		trail := term[len(strings.TrimRightFunc(term, unicode.IsSpace)):]
		core := strings.TrimSpace(term)
		b.WriteString(lead)
		if core != "" {
			b.WriteString("**" + core + "**")
		}
		if core != "" || lead == "" {
			b.WriteString(trail)
		}
	}
}

// cut shortens s to at most max characters, at the last space in its second
// half where there is one, and marks the cut with "…".
func cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	head := string(r[:max-1])
	if i := strings.LastIndexByte(head, ' '); i > len(head)/2 {
		head = head[:i]
	}
	return strings.TrimRightFunc(head, unicode.IsSpace) + "…"
}

func firstNonBlank(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// contentAnswer is the part of a content answer the tool reads.
type contentAnswer struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  struct {
		View struct {
			Value string `json:"value"`
		} `json:"view"`
	} `json:"body"`
}

// parseContent reads a content answer (GET /rest/api/content/{id}?expand=
// body.view) and returns the page's rendered HTML.
func parseContent(body []byte) (string, error) {
	var a contentAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return "", errors.New("the answer is not the expected JSON")
	}
	return a.Body.View.Value, nil
}
