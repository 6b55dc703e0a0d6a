package web

import (
	"encoding/json"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Limits on the JSON-LD a page may make us read (the reference's figures).
const (
	maxJSONLDScripts = 20        // application/ld+json scripts read, in document order
	maxJSONLDBytes   = 256 << 10 // a larger script is skipped
	maxJSONLDDepth   = 32        // a script nested deeper is skipped
	maxJSONLDObjects = 1000      // candidate objects kept over all scripts
)

// JSON-LD candidate scores of the reference.
const (
	scoreArticle     = 100
	scorePage        = 20
	scoreURLMatch    = 50
	scoreURLMismatch = -80
	scoreTitle       = 10
)

// articleTypes are the schema.org types that describe a page's main text:
// Article and its subtypes (news, blog, tech, scholarly, report, social
// media and forum postings). They score scoreArticle.
var articleTypes = map[string]bool{
	"Article": true, "AdvertiserContentArticle": true, "NewsArticle": true,
	"AnalysisNewsArticle": true, "AskPublicQuestionArticle": true, "BackgroundNewsArticle": true,
	"OpinionNewsArticle": true, "ReportageNewsArticle": true, "ReviewNewsArticle": true,
	"SatiricalArticle": true, "ScholarlyArticle": true, "MedicalScholarlyArticle": true,
	"Report": true, "TechArticle": true, "APIReference": true,
	"BlogPosting": true, "LiveBlogPosting": true, "SocialMediaPosting": true,
	"DiscussionForumPosting": true,
}

// pageTypes are schema.org WebPage and its subtypes. They score scorePage.
var pageTypes = map[string]bool{
	"WebPage": true, "AboutPage": true, "CheckoutPage": true, "CollectionPage": true,
	"ContactPage": true, "FAQPage": true, "ItemPage": true, "MedicalWebPage": true,
	"ProfilePage": true, "QAPage": true, "RealEstateListing": true, "SearchResultsPage": true,
	"MediaGallery": true, "ImageGallery": true, "VideoGallery": true,
}

// jsonLD is what the best JSON-LD object of a page says.
type jsonLD struct {
	headline, name string
	description    string
	authors        []string
	published      string
	modified       string
}

// readJSONLD reads the page's application/ld+json scripts under the limits
// above and returns the fields of the best-scored object, or ok false when
// there is none. A malformed, oversized or too deeply nested script is
// skipped; it never fails the page.
func readJSONLD(root *html.Node, pageURL *url.URL) (ld jsonLD, ok bool) {
	var objs []map[string]any
	scripts := 0
	walk(root, func(n *html.Node) bool {
		if scripts >= maxJSONLDScripts {
			return false
		}
		if n.Type != html.ElementNode || n.DataAtom != atom.Script {
			return true
		}
		if t, _ := attr(n, "type"); !isJSONLDType(t) {
			return false
		}
		scripts++
		objs = append(objs, parseJSONLD(textOf(n))...)
		return false
	})
	if len(objs) > maxJSONLDObjects {
		objs = objs[:maxJSONLDObjects]
	}
	byID := map[string]map[string]any{}
	for _, o := range objs {
		if id, _ := o["@id"].(string); id != "" {
			if _, dup := byID[id]; !dup {
				byID[id] = o
			}
		}
	}
	page := normalizeForMatch(pageURL, "")
	best, bestScore := map[string]any(nil), 0
	for _, o := range objs {
		s, typed := scoreJSONLD(o, pageURL, page)
		// Only an article or a page describes the page; an Organization,
		// WebSite or BreadcrumbList describes the publisher or the site.
		// A page-typed object that names another page is not this one.
		if typed && s > 0 && (best == nil || s > bestScore) {
			best, bestScore = o, s
		}
	}
	if best == nil {
		return jsonLD{}, false
	}
	ld.headline = ldString(best["headline"])
	ld.name = ldString(best["name"])
	ld.description = ldString(best["description"])
	ld.published = ldString(best["datePublished"])
	ld.modified = ldString(best["dateModified"])
	seen := map[string]bool{}
	for _, a := range ldList(best["author"]) {
		ld.authors = appendAuthor(ld.authors, seen, ldAuthorName(a, byID))
	}
	return ld, true
}

func isJSONLDType(t string) bool {
	t, _, _ = strings.Cut(t, ";")
	return strings.EqualFold(strings.TrimSpace(t), "application/ld+json")
}

// parseJSONLD returns the candidate objects of one script: the script's
// object, the objects of a top-level array, and the objects of any @graph
// among them. It returns nothing for a script that is too large, too deep
// or not JSON.
func parseJSONLD(text string) []map[string]any {
	if len(text) > maxJSONLDBytes {
		return nil
	}
	text = strings.TrimSpace(text)
	// Some sites wrap the JSON in an HTML comment or CDATA section.
	for _, w := range [][2]string{{"<!--", "-->"}, {"//<![CDATA[", "//]]>"}, {"<![CDATA[", "]]>"}} {
		if strings.HasPrefix(text, w[0]) && strings.HasSuffix(text, w[1]) {
			text = strings.TrimSpace(text[len(w[0]) : len(text)-len(w[1])])
		}
	}
	text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
	if jsonDepth(text) > maxJSONLDDepth {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil
	}
	var out []map[string]any
	var add func(v any, level int)
	add = func(v any, level int) {
		switch x := v.(type) {
		case []any:
			if level > 1 {
				return
			}
			for _, e := range x {
				add(e, level+1)
			}
		case map[string]any:
			g, hasGraph := x["@graph"].([]any)
			if !hasGraph || x["@type"] != nil {
				out = append(out, x)
			}
			if hasGraph && level <= 1 {
				for _, e := range g {
					if m, ok := e.(map[string]any); ok {
						out = append(out, m)
					}
				}
			}
		}
	}
	add(v, 0)
	return out
}

// jsonDepth is the deepest nesting of arrays and objects in s, counted
// without parsing, so that a hostile script is refused before a decoder
// recurses into it.
func jsonDepth(s string) int {
	depth, maxDepth := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				maxDepth = depth
			}
		case '}', ']':
			depth--
		}
	}
	return maxDepth
}

// scoreJSONLD scores one candidate as the reference does: article types
// +100 or page types +20 (an object typed as both counts as an article);
// a url, @id or mainEntityOfPage equal to the page's URL +50, such
// addresses present but none equal -80; a headline or name +10.
// typed reports an article or page type.
func scoreJSONLD(o map[string]any, pageURL *url.URL, page string) (score int, typed bool) {
	article, webPage := false, false
	for _, t := range ldList(o["@type"]) {
		s, _ := t.(string)
		s = strings.TrimSpace(s)
		for _, p := range []string{"https://schema.org/", "http://schema.org/", "schema:"} {
			s = strings.TrimPrefix(s, p)
		}
		article = article || articleTypes[s]
		webPage = webPage || pageTypes[s]
	}
	switch {
	case article:
		score += scoreArticle
	case webPage:
		score += scorePage
	}
	if page != "" {
		var urls []string
		for _, k := range []string{"url", "@id", "mainEntityOfPage"} {
			for _, v := range ldList(o[k]) {
				switch x := v.(type) {
				case string:
					urls = append(urls, x)
				case map[string]any:
					if s := ldString(x["@id"]); s != "" {
						urls = append(urls, s)
					} else if s := ldString(x["url"]); s != "" {
						urls = append(urls, s)
					}
				}
			}
		}
		present, match := false, false
		for _, u := range urls {
			n := normalizeForMatch(pageURL, u)
			if n == "" {
				continue
			}
			present = true
			if n == page {
				match = true
			}
		}
		switch {
		case match:
			score += scoreURLMatch
		case present:
			score += scoreURLMismatch
		}
	}
	if ldString(o["headline"]) != "" || ldString(o["name"]) != "" {
		score += scoreTitle
	}
	return score, article || webPage
}

// normalizeForMatch resolves ref against base (base itself when ref is
// empty) and returns a comparable form: scheme and host lower-case, no
// userinfo or fragment, no trailing slash on the path. It returns "" for
// anything that is not an absolute http(s) address.
func normalizeForMatch(base *url.URL, ref string) string {
	if base == nil {
		return ""
	}
	u := base
	if ref = strings.TrimSpace(ref); ref != "" {
		r, err := base.Parse(ref)
		if err != nil {
			return ""
		}
		u = r
	}
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	if (c.Scheme != "http" && c.Scheme != "https") || c.Host == "" {
		return ""
	}
	c.Host = strings.ToLower(c.Host)
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	c.Path = strings.TrimRight(c.Path, "/")
	c.RawPath = strings.TrimRight(c.RawPath, "/")
	c.ForceQuery = false
	return c.String()
}

// ldList turns a JSON-LD value into a list: an array as it is, anything
// else as a list of one (nil as none).
func ldList(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

// ldString is a JSON-LD value as text: a string, the first string of an
// array, or the @value of a value object; HTML character references are
// decoded and spaces collapsed.
func ldString(v any) string {
	switch x := v.(type) {
	case string:
		return collapseSpace(html.UnescapeString(x))
	case []any:
		for _, e := range x {
			if s := ldString(e); s != "" {
				return s
			}
		}
	case map[string]any:
		if _, ok := x["@value"]; ok {
			return ldString(x["@value"])
		}
	}
	return ""
}

// ldAuthorName is an author's name: a string, or the name of a Person or
// Organization object, looked up by @id when the object only refers to
// one elsewhere in the page's JSON-LD.
func ldAuthorName(v any, byID map[string]map[string]any) string {
	switch x := v.(type) {
	case string:
		return collapseSpace(html.UnescapeString(x))
	case map[string]any:
		if s := ldString(x["name"]); s != "" {
			return s
		}
		if id, _ := x["@id"].(string); id != "" {
			if o, ok := byID[id]; ok {
				return ldString(o["name"])
			}
		}
	}
	return ""
}
