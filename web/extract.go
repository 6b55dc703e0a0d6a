package web

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Metadata limits of the reference.
const (
	maxMetaChars   = 1000
	maxAuthors     = 10
	maxAuthorChars = 200
	// maxElements bounds readability's work on hostile pages.
	maxElements = 200_000
)

// extracted is an HTML page reduced to its main content.
type extracted struct {
	title, description string
	authors            []string
	language           string
	published          time.Time
	modified           time.Time
	markdown           string
}

// ExtractHTML turns an HTML document into its main content as Markdown,
// with links made absolute against pageURL, and reads its metadata. It is
// what Retrieve does with an HTML body; it is exported for tools that hold
// HTML they did not fetch through a Service, and for benchmarks.
func ExtractHTML(doc string, pageURL *url.URL) (*Page, error) {
	ex, err := extractHTML(doc, pageURL)
	if err != nil {
		return nil, err
	}
	p := &Page{
		Title: ex.title, Description: ex.description, Authors: ex.authors, Language: ex.language,
		Published: ex.published, Modified: ex.modified, ContentKind: HTMLPage,
		Markdown: ex.markdown, MediaType: "text/html",
		OriginalChars: utf8.RuneCountInString(ex.markdown),
	}
	if pageURL != nil {
		p.FinalURL = pageURL.String()
		p.RequestedURL = p.FinalURL
	}
	return p, nil
}

func extractHTML(doc string, pageURL *url.URL) (ex extracted, err error) {
	// The page is hostile input to third-party parsers; a panic in one of
	// them must fail this page, not the program.
	defer func() {
		if r := recover(); r != nil {
			ex, err = extracted{}, fmt.Errorf("%w: the page could not be processed", ErrDecode)
		}
	}()
	if !utf8.ValidString(doc) {
		doc = strings.ToValidUTF8(doc, "\uFFFD")
	}
	// Script and style text is dropped by clean; leaving it out before
	// parsing spares the tokenizer more than half of a typical page.
	doc = stripRawText(doc)
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		// x/net/html refuses documents nested deeper than 512 open
		// elements, which also keeps the recursive steps below safe.
		return extracted{}, fmt.Errorf("%w: the HTML could not be parsed (%v)", ErrDecode, err)
	}
	pageBase := baseURL(root, pageURL)
	meta := readMeta(root, pageURL)
	clean(root)
	// A discussion thread marked up with schema.org microdata (Discourse,
	// many other forums) keeps its replies beside or inside the opening
	// post; readability scores the opening post best and drops the
	// replies. Measure the whole thread now, before readability changes
	// the tree.
	var replyTexts []string
	if t, replies := threadRoot(root); t != nil {
		for _, r := range replies {
			if s := longestText(r); s != "" {
				replyTexts = append(replyTexts, s)
			}
		}
	}

	parser := readability.NewParser()
	parser.MaxElemsToParse = maxElements
	// prune reads class and id names to find page furniture.
	parser.KeepClasses = true
	article, rerr := parser.ParseAndMutate(root, pageBase)
	content := article.Node
	// The metadata chains of the reference come first; readability's own
	// reading of the page is the last resort of each.
	ex.title = meta.pageTitle()
	ex.published = meta.published()
	ex.modified = meta.modified()
	ex.authors = meta.authors()
	if rerr == nil {
		if ex.title == "" {
			ex.title = article.Title()
		}
		ex.language = article.Language()
		if t, err := article.PublishedTime(); err == nil && ex.published.IsZero() {
			ex.published = t.UTC()
		}
		if t, err := article.ModifiedTime(); err == nil && ex.modified.IsZero() {
			ex.modified = t.UTC()
		}
		if len(ex.authors) == 0 {
			ex.authors = splitByline(article.Byline())
		}
	}
	found := ""
	if content != nil {
		if len(replyTexts) > 0 {
			found = collapseSpace(textOf(content))
		} else if textRunes(content) > 0 {
			found = "-" // only whether there is any text matters
		}
	}
	lost := 0
	for _, r := range replyTexts {
		if !strings.Contains(found, r) {
			lost++
		}
	}
	if found == "" || lost*2 > len(replyTexts) {
		// Readability found nothing, or left out most replies of a
		// thread: take the whole thread, else fall back to the page body.
		// The document was mutated, so parse it again.
		again, err := html.Parse(strings.NewReader(doc))
		if err != nil {
			return extracted{}, fmt.Errorf("%w: %v", ErrDecode, err)
		}
		clean(again)
		if t, _ := threadRoot(again); t != nil && lost*2 > len(replyTexts) {
			content = t
		} else if found == "" {
			content = fallbackRoot(again)
		}
	}
	if content != nil && content == article.Node {
		prune(content)
	}
	if ex.language == "" {
		ex.language = meta.language
	}
	ex.title = limitMeta(ex.title)
	ex.description = limitMeta(meta.description())
	ex.language = limitMeta(ex.language)

	if content != nil {
		conv := converter.NewConverter(converter.WithPlugins(
			base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
			// Minimal padding: aligned columns cost the model tokens and
			// tell it nothing.
			// A cell holding several paragraphs keeps them apart with
			// <br />, instead of the whole table being flattened into
			// loose text; rows left empty (separator rows) are dropped.
			table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
				table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
				table.WithSkipEmptyRows(true))))
		domain := ""
		if pageBase != nil {
			domain = pageBase.String()
		}
		md, err := conv.ConvertNode(content, converter.WithDomain(domain))
		if err != nil {
			return extracted{}, fmt.Errorf("%w: %v", ErrDecode, err)
		}
		s := strings.ReplaceAll(string(md), "\r\n", "\n")
		ex.markdown = strings.TrimSpace(strings.ReplaceAll(s, "\r", "\n"))
	}
	return ex, nil
}

// baseURL is the page URL, or a <base href> resolved against it when it is
// an http(s) address.
func baseURL(root *html.Node, pageURL *url.URL) *url.URL {
	var found string
	walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Base {
			if h, ok := attr(n, "href"); ok && found == "" {
				found = strings.TrimSpace(h)
			}
		}
		return found == ""
	})
	if found == "" || pageURL == nil {
		return pageURL
	}
	b, err := pageURL.Parse(found)
	if err != nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" {
		return pageURL
	}
	return b
}

// removedElements are dropped with their content before extraction.
var removedElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Nav: true,
	atom.Dialog: true, atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
	atom.Svg: true, atom.Button: true, atom.Input: true, atom.Select: true, atom.Textarea: true,
	atom.Frameset: true, atom.Frame: true,
}

var removedRoles = map[string]bool{"navigation": true, "dialog": true, "alertdialog": true}

var removedMarkers = []string{"cookie-banner", "cookie-consent", "consent-banner", "newsletter-popup", "share-buttons", "social-share"}

// clean removes what a reader does not see or should not get: comments,
// scripts and styles (JSON-LD kept for metadata), navigation and
// interactive elements, hidden elements, cookie and share banners, images
// without alternative text, and javascript:, vbscript: and data: links.
// Forms are unwrapped, not removed.
func clean(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.CommentNode:
			n.RemoveChild(c)
		case c.Type == html.ElementNode && shouldRemove(c):
			n.RemoveChild(c)
		case c.Type == html.ElementNode && c.DataAtom == atom.Form:
			clean(c)
			for g := c.FirstChild; g != nil; {
				gn := g.NextSibling
				c.RemoveChild(g)
				n.InsertBefore(g, c)
				g = gn
			}
			n.RemoveChild(c)
		default:
			if c.Type == html.ElementNode {
				scrubLinks(c)
			}
			if c.Type == html.ElementNode && c.DataAtom == atom.A && isPermalinkMarker(c) {
				n.RemoveChild(c)
				break
			}
			clean(c)
		}
		c = next
	}
}

func shouldRemove(n *html.Node) bool {
	if n.DataAtom == atom.Script {
		t, _ := attr(n, "type")
		return !strings.EqualFold(strings.TrimSpace(t), "application/ld+json")
	}
	if removedElements[n.DataAtom] || n.Namespace == "svg" {
		return true
	}
	if _, ok := attr(n, "hidden"); ok {
		return true
	}
	if v, ok := attr(n, "aria-hidden"); ok && strings.EqualFold(strings.TrimSpace(v), "true") {
		return true
	}
	if v, ok := attr(n, "role"); ok && removedRoles[strings.ToLower(strings.TrimSpace(v))] {
		return true
	}
	if v, ok := attr(n, "style"); ok && (hiddenByStyle(v) || visuallyHidden(v)) {
		return true
	}
	for _, key := range []string{"class", "id"} {
		if v, ok := attr(n, key); ok {
			lv := strings.ToLower(v)
			for _, m := range removedMarkers {
				if strings.Contains(lv, m) {
					return true
				}
			}
		}
	}
	if n.DataAtom == atom.Hr && insideTableCell(n) {
		// A rule inside a cell only separates rows visually (Go's release
		// notes draw one per row group); left in, it stops the whole table
		// from becoming a Markdown table.
		return true
	}
	if n.DataAtom == atom.Img {
		alt, _ := attr(n, "alt")
		src, _ := attr(n, "src")
		return strings.TrimSpace(alt) == "" || badScheme(src)
	}
	return false
}

// insideTableCell reports whether n has a td or th ancestor.
func insideTableCell(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && (p.DataAtom == atom.Td || p.DataAtom == atom.Th) {
			return true
		}
	}
	return false
}

// hiddenByStyle reports an inline display:none or visibility:hidden.
func hiddenByStyle(style string) bool {
	for _, decl := range strings.Split(style, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.ToLower(strings.TrimSpace(prop))
		val = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "!important")))
		if (prop == "display" && val == "none") || (prop == "visibility" && (val == "hidden" || val == "collapse")) {
			return true
		}
	}
	return false
}

// scrubLinks removes href, src and poster values with a script or data
// scheme, so they never reach the Markdown. A link that loses its target
// becomes plain text (the converter would otherwise point it at the page).
func scrubLinks(n *html.Node) {
	dropped := false
	for _, a := range n.Attr {
		if linkAttr(a.Key) && badScheme(a.Val) {
			dropped = true
			break
		}
	}
	if !dropped {
		return
	}
	kept := n.Attr[:0]
	for _, a := range n.Attr {
		if linkAttr(a.Key) && badScheme(a.Val) {
			continue
		}
		kept = append(kept, a)
	}
	n.Attr = kept
	if dropped && n.DataAtom == atom.A {
		n.DataAtom, n.Data, n.Attr = atom.Span, "span", nil
	}
}

// isPermalinkMarker reports the "¶" or "#" anchors documentation
// generators put after headings: they only link to the heading itself.
func isPermalinkMarker(a *html.Node) bool {
	if cls, _ := attr(a, "class"); strings.Contains(" "+cls+" ", " headerlink ") {
		return true
	}
	href, _ := attr(a, "href")
	text := strings.TrimSpace(textOf(a))
	if !strings.HasPrefix(href, "#") {
		return false
	}
	// Discourse and others put an empty anchor before each heading.
	empty := text == "" && findFirst(a, func(x *html.Node) bool { return x.DataAtom == atom.Img }) == nil
	return empty || text == "¶" || text == "#" || text == "§"
}

// linkAttr reports the attributes that hold an address scrubLinks checks.
func linkAttr(key string) bool {
	switch strings.ToLower(key) {
	case "href", "src", "poster", "srcset", "action":
		return true
	}
	return false
}

func badScheme(v string) bool {
	// Browsers ignore ASCII whitespace and control characters inside the
	// scheme ("java\tscript:"), so they are skipped before comparing; only
	// the first 11 other characters are lower-cased, the longest scheme
	// being "javascript:".
	var buf [11 * utf8.UTFMax]byte
	b := buf[:0]
	kept := 0
	for _, r := range v {
		if r <= ' ' {
			continue
		}
		if kept == 11 {
			break
		}
		b = utf8.AppendRune(b, unicode.ToLower(r))
		kept++
	}
	return bytes.HasPrefix(b, []byte("javascript:")) || bytes.HasPrefix(b, []byte("vbscript:")) || bytes.HasPrefix(b, []byte("data:"))
}

// threadRoot finds a discussion thread by its schema.org microdata: the
// opening post (itemtype DiscussionForumPosting or Question) and its
// replies (itemprop comment, suggestedAnswer or acceptedAnswer). It
// returns the closest element holding the opening post and every reply,
// and the replies, or nil when the page has no such thread.
func threadRoot(doc *html.Node) (*html.Node, []*html.Node) {
	var posting *html.Node
	var replies []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if t, ok := attr(n, "itemtype"); ok && posting == nil {
			t = strings.TrimRight(strings.TrimSpace(t), "/")
			if strings.HasSuffix(t, "schema.org/DiscussionForumPosting") || strings.HasSuffix(t, "schema.org/Question") {
				posting = n
			}
		}
		if p, ok := attr(n, "itemprop"); ok {
			for _, f := range strings.Fields(p) {
				if f == "comment" || f == "suggestedAnswer" || f == "acceptedAnswer" {
					replies = append(replies, n)
					break
				}
			}
		}
		return true
	})
	if posting == nil || len(replies) == 0 {
		return nil, nil
	}
	common := posting
	for _, r := range replies {
		common = commonAncestor(common, r)
		if common == nil {
			return nil, nil
		}
	}
	if common.Type != html.ElementNode || common.DataAtom == atom.Html {
		return nil, nil
	}
	return common, replies
}

// longestText is the longest text node under n, spaces collapsed, cut to
// 60 runes: a sample to look for in what readability kept.
func longestText(n *html.Node) string {
	best := ""
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			if t := collapseSpace(x.Data); len(t) > len(best) {
				best = t
			}
		}
		return true
	})
	if r := []rune(best); len(r) > 60 {
		best = string(r[:60])
	}
	return best
}

// commonAncestor is the closest node that is a or b or holds both.
func commonAncestor(a, b *html.Node) *html.Node {
	seen := map[*html.Node]bool{}
	for n := a; n != nil; n = n.Parent {
		seen[n] = true
	}
	for n := b; n != nil; n = n.Parent {
		if seen[n] {
			return n
		}
	}
	return nil
}

// fallbackRoot picks the reference's root when readability found nothing:
// the largest main / [role=main] / article with at least 200 characters
// that is a main element or holds half the body's text; otherwise the body
// without asides and footers outside main and article.
func fallbackRoot(doc *html.Node) *html.Node {
	body := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if body == nil {
		return doc
	}
	bodyLen := len([]rune(strings.TrimSpace(textOf(body))))
	var best *html.Node
	bestLen, count := 0, 0
	walk(body, func(n *html.Node) bool {
		if count >= 100 || n.Type != html.ElementNode {
			return count < 100
		}
		role, _ := attr(n, "role")
		if n.DataAtom == atom.Main || n.DataAtom == atom.Article || strings.EqualFold(role, "main") {
			count++
			if l := len([]rune(strings.TrimSpace(textOf(n)))); l > bestLen {
				best, bestLen = n, l
			}
		}
		return true
	})
	if best != nil && bestLen >= 200 && (best.DataAtom == atom.Main || 2*bestLen >= bodyLen) {
		return best
	}
	var drop []*html.Node
	walk(body, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if n.DataAtom == atom.Main || n.DataAtom == atom.Article {
			return false
		}
		role, _ := attr(n, "role")
		role = strings.ToLower(role)
		if n.DataAtom == atom.Aside || n.DataAtom == atom.Footer || role == "contentinfo" || role == "complementary" {
			drop = append(drop, n)
			return false
		}
		return true
	})
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
	return body
}

// pageMeta is what the page's markup says about it, read before cleaning.
type pageMeta struct {
	title    string              // the <title> element
	h1       string              // the first non-empty h1
	language string              // <html lang>
	values   map[string][]string // meta name or property, lower-cased → contents in order
	itemprop map[string][]string // microdata itemprop → values in order
	// itemAuthors are the itemprop="author" names of the first item that
	// has any.
	itemAuthors []string
	ld          jsonLD
	hasLD       bool
}

// itemprops are the microdata properties the metadata chains use.
var itemprops = map[string]bool{"headline": true, "description": true, "datePublished": true, "dateModified": true}

func readMeta(root *html.Node, pageURL *url.URL) pageMeta {
	m := pageMeta{values: map[string][]string{}, itemprop: map[string][]string{}}
	m.ld, m.hasLD = readJSONLD(root, pageURL)
	var authorItem *html.Node
	walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Html:
			if l, ok := attr(n, "lang"); ok {
				m.language = strings.TrimSpace(l)
			}
		case atom.Title:
			if m.title == "" && n.Namespace == "" {
				m.title = collapseSpace(textOf(n))
			}
		case atom.H1:
			if m.h1 == "" && !removedByClean(n) {
				m.h1 = visibleText(n)
			}
		case atom.Meta:
			if content, ok := attr(n, "content"); ok {
				for _, key := range []string{"name", "property"} {
					if k, ok := attr(n, key); ok {
						k = strings.ToLower(strings.TrimSpace(k))
						m.values[k] = append(m.values[k], collapseSpace(content))
					}
				}
			}
		}
		props, ok := attr(n, "itemprop")
		if !ok {
			return true
		}
		for _, p := range strings.Fields(props) {
			switch {
			case itemprops[p]:
				if v := itempropValue(n); v != "" {
					m.itemprop[p] = append(m.itemprop[p], v)
				}
			case p == "author":
				owner := itemOwner(n)
				if authorItem == nil {
					authorItem = owner
				}
				if owner == authorItem {
					m.itemAuthors = append(m.itemAuthors, itemAuthorName(n))
				}
			}
		}
		return true
	})
	return m
}

// itempropValue is a microdata property's value: a meta's content, a
// time's datetime (else its text), otherwise the element's text.
func itempropValue(n *html.Node) string {
	switch n.DataAtom {
	case atom.Meta:
		v, _ := attr(n, "content")
		return collapseSpace(v)
	case atom.Time:
		if v, ok := attr(n, "datetime"); ok && strings.TrimSpace(v) != "" {
			return collapseSpace(v)
		}
	case atom.Link, atom.A, atom.Img, atom.Script, atom.Style:
		return ""
	}
	return limitMeta(visibleText(n))
}

// itemOwner is the item a microdata property belongs to: the closest
// ancestor with itemscope, or nil at the top level.
func itemOwner(n *html.Node) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if _, ok := attr(p, "itemscope"); ok && p.Type == html.ElementNode {
			return p
		}
	}
	return nil
}

// itemAuthorName is an itemprop="author" element's name: its own
// itemprop="name" when it is an item (a Person), else its value.
func itemAuthorName(n *html.Node) string {
	if _, ok := attr(n, "itemscope"); ok {
		name := findFirst(n, func(x *html.Node) bool {
			p, _ := attr(x, "itemprop")
			return itemOwner(x) == n && slicesContains(strings.Fields(p), "name")
		})
		if name == nil {
			return ""
		}
		return itempropValue(name)
	}
	return itempropValue(n)
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// removedByClean reports whether clean would drop n with itself or an
// ancestor (a hidden heading is not the page's title).
func removedByClean(n *html.Node) bool {
	for x := n; x != nil; x = x.Parent {
		if x.Type == html.ElementNode && shouldRemove(x) {
			return true
		}
	}
	return false
}

// visibleText is n's text without scripts, styles, hidden elements and
// heading permalink markers, spaces collapsed.
func visibleText(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) bool {
		switch x.Type {
		case html.TextNode:
			b.WriteString(x.Data)
		case html.ElementNode:
			if x != n && (shouldRemove(x) || (x.DataAtom == atom.A && isPermalinkMarker(x))) {
				return false
			}
		}
		return true
	})
	return collapseSpace(b.String())
}

func (m pageMeta) first(keys ...string) string {
	for _, k := range keys {
		for _, v := range m.values[k] {
			if v != "" {
				return v
			}
		}
	}
	return ""
}

func (m pageMeta) firstItemprop(p string) string {
	for _, v := range m.itemprop[p] {
		if v != "" {
			return v
		}
	}
	return ""
}

// Meta keys of each step of the fallback chains.
var (
	ogTitleKeys       = []string{"og:title"}
	scholarTitleKeys  = []string{"citation_title", "dc.title", "dcterms.title"}
	ogDescKeys        = []string{"og:description"}
	scholarDescKeys   = []string{"citation_abstract", "dc.description", "dcterms.description", "dcterms.abstract"}
	ogPublishedKeys   = []string{"article:published_time", "og:article:published_time", "article:published"}
	scholarPubKeys    = []string{"citation_publication_date", "citation_date", "citation_online_date", "dc.date.issued", "dcterms.issued", "dc.date", "dcterms.date", "dcterms.created"}
	ogModifiedKeys    = []string{"article:modified_time", "og:article:modified_time", "og:updated_time", "article:modified"}
	scholarModKeys    = []string{"dcterms.modified", "dc.date.modified"}
	metaAuthorKeys    = []string{"author", "article:author", "og:article:author", "citation_author", "dc.creator", "dcterms.creator", "parsely-author", "sailthru.author"}
	twitterTitleKeys  = []string{"twitter:title"}
	twitterDescKeys   = []string{"twitter:description"}
	plainDescKeys     = []string{"description"}
	maxDateCandidates = 8
)

// pageTitle follows the title chain: JSON-LD (headline, or name when the
// headline is missing or the <title> contains the name but not the
// headline) → og:title → citation_title / dc.title → itemprop headline →
// first h1 → twitter:title → <title>.
func (m pageMeta) pageTitle() string {
	if m.hasLD {
		h, n := m.ld.headline, m.ld.name
		switch {
		case h == "":
			if n != "" {
				return n
			}
		case n != "" && n != h && strings.Contains(m.title, n) && !strings.Contains(m.title, h):
			return n
		default:
			return h
		}
	}
	for _, v := range []string{m.first(ogTitleKeys...), m.first(scholarTitleKeys...), m.firstItemprop("headline"),
		m.h1, m.first(twitterTitleKeys...), m.title} {
		if v != "" {
			return v
		}
	}
	return ""
}

// description follows the chain JSON-LD → og:description → citation /
// dc → itemprop description → twitter:description → meta description.
func (m pageMeta) description() string {
	for _, v := range []string{m.ld.description, m.first(ogDescKeys...), m.first(scholarDescKeys...),
		m.firstItemprop("description"), m.first(twitterDescKeys...), m.first(plainDescKeys...)} {
		if v != "" {
			return v
		}
	}
	return ""
}

// published and modified follow JSON-LD → article:/og: → citation / dc →
// itemprop; a value that is not a recognisable date is passed over.
func (m pageMeta) published() time.Time {
	return firstDate(m.ld.published, m.values, ogPublishedKeys, scholarPubKeys, m.itemprop["datePublished"])
}

func (m pageMeta) modified() time.Time {
	return firstDate(m.ld.modified, m.values, ogModifiedKeys, scholarModKeys, m.itemprop["dateModified"])
}

func firstDate(ld string, values map[string][]string, og, scholar, itemprop []string) time.Time {
	var cands []string
	cands = append(cands, ld)
	for _, keys := range [][]string{og, scholar} {
		for _, k := range keys {
			cands = append(cands, values[k]...)
		}
	}
	if len(itemprop) > 0 {
		cands = append(cands, itemprop[0])
	}
	tried := 0
	for _, c := range cands {
		if c == "" {
			continue
		}
		if tried++; tried > maxDateCandidates {
			break
		}
		if t, ok := parseDate(c); ok {
			return t
		}
	}
	return time.Time{}
}

// dateLayouts are the date forms pages use in metadata.
var dateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05Z0700", "2006-01-02 15:04:05 Z0700",
	"2006-01-02 15:04:05", "2006-01-02", "2006/01/02", "2006/01/02 15:04:05", "2006-01", "2006",
	time.RFC1123Z, time.RFC1123,
}

// parseDate reads a metadata date; a value without a zone is UTC.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			if t.Year() < 1000 {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// authors follows the author chain: JSON-LD author → meta author /
// article:author / citation_author / dc.creator (and parsely / sailthru)
// → itemprop author. URLs are excluded; at most ten names of at most 200
// characters each.
func (m pageMeta) authors() []string {
	if len(m.ld.authors) > 0 {
		return m.ld.authors
	}
	var out []string
	seen := map[string]bool{}
	for _, k := range metaAuthorKeys {
		for _, v := range m.values[k] {
			out = appendAuthor(out, seen, v)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, v := range m.itemAuthors {
		out = appendAuthor(out, seen, v)
	}
	return out
}

func appendAuthor(out []string, seen map[string]bool, v string) []string {
	v = collapseSpace(v)
	if v == "" || len(out) >= maxAuthors || strings.Contains(v, "://") || strings.HasPrefix(v, "www.") {
		return out
	}
	v = limitRunes(v, maxAuthorChars)
	if seen[strings.ToLower(v)] {
		return out
	}
	seen[strings.ToLower(v)] = true
	return append(out, v)
}

// splitByline turns readability's byline ("By Ana Ruiz and Li Wei") into
// author names.
func splitByline(b string) []string {
	b = collapseSpace(b)
	for _, p := range []string{"By ", "by ", "Von ", "von ", "Par ", "par "} {
		b = strings.TrimPrefix(b, p)
	}
	if b == "" {
		return nil
	}
	fields := strings.FieldsFunc(strings.NewReplacer(" and ", ",", " & ", ",", " und ", ",", ";", ",").Replace(b),
		func(r rune) bool { return r == ',' })
	var out []string
	seen := map[string]bool{}
	for _, f := range fields {
		out = appendAuthor(out, seen, f)
	}
	return out
}

func limitMeta(s string) string { return limitRunes(collapseSpace(s), maxMetaChars) }

func limitRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n]))
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

// walk visits n and its descendants depth-first; f returning false skips
// the children of that node.
func walk(n *html.Node, f func(*html.Node) bool) {
	if !f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func findFirst(n *html.Node, pred func(*html.Node) bool) *html.Node {
	var found *html.Node
	walk(n, func(x *html.Node) bool {
		if found != nil {
			return false
		}
		if x.Type == html.ElementNode && pred(x) {
			found = x
			return false
		}
		return true
	})
	return found
}

func textOf(n *html.Node) string {
	var b bytes.Buffer
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		return true
	})
	return b.String()
}
