package web

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// prune removes from readability's main content the boilerplate it keeps
// around an article: captions and credits of pictures, lists and
// paragraphs that only link to other pages (related stories, "Read more"),
// short blocks that are a widget's label ("Advertisement", "Continue
// Reading Below", "Share"), bylines and datelines, copyright lines and
// footers, and elements whose class or id names a widget (share, related,
// newsletter, comments …). Each rule is about the shape of the markup, not
// about a site, and none removes a block that holds a large part of the
// article's text.
func prune(content *html.Node) {
	// Elements readability made itself (a div turned into a p) carry
	// only their name; the rules below go by atom.
	walk(content, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == 0 {
			n.DataAtom = atom.Lookup([]byte(n.Data))
		}
		return true
	})
	total := textRunes(content)
	if total == 0 {
		return
	}
	var drop []*html.Node
	walk(content, func(n *html.Node) bool {
		if n.Type == html.TextNode && n.Parent != nil && hasBlockChild(n.Parent) && isWidgetLabel(n.Data) {
			// A label left loose between paragraphs ("Advertisement"
			// once its wrapper was unwrapped).
			drop = append(drop, n)
			return false
		}
		if n == content || n.Type != html.ElementNode {
			return true
		}
		if boilerplate(n, total) {
			drop = append(drop, n)
			return false
		}
		return true
	})
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	dropTrailingNotes(content)
	dropOrphanHeadings(content)
}

// dropTrailingNotes removes the run of notes that ends many articles
// after their last paragraph: lines wholly in italics that carry a link
// ("Have a tip? … Follow her on Twitter", "Subscribe to our
// newsletters") and source lines ("Source: News agencies", "Via …").
func dropTrailingNotes(content *html.Node) {
	var paras []*html.Node
	walk(content, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.P {
			paras = append(paras, n)
			return false
		}
		return true
	})
	for i := len(paras) - 1; i >= 0; i-- {
		p := paras[i]
		text := strings.TrimSpace(textOf(p))
		if text == "" {
			continue
		}
		if !(wholeItalicWithLink(p) || wordCount(text) <= 8 && sourceLine().MatchString(text)) {
			break
		}
		if p.Parent != nil {
			p.Parent.RemoveChild(p)
		}
	}
}

var sourceLine = lazyRegexp(`(?i)^(source|sources|via|quelle|fuente|fonte)\b\s*:?`)

// wholeItalicWithLink reports a paragraph whose every word is inside em
// or i, with at least one link.
func wholeItalicWithLink(p *html.Node) bool {
	if links(p) == 0 {
		return false
	}
	plain := 0
	var visit func(n *html.Node, italic bool)
	visit = func(n *html.Node, italic bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				if !italic && hasWordRune(c.Data) {
					plain++
				}
			case c.Type == html.ElementNode:
				visit(c, italic || c.DataAtom == atom.Em || c.DataAtom == atom.I)
			}
		}
	}
	visit(p, false)
	return plain == 0
}

// boilerplate decides one element; total is the content's text length.
func boilerplate(n *html.Node, total int) bool {
	text := textRunes(n)
	// Nothing that holds a fifth of the article goes, whatever it is
	// called.
	if text*5 > total {
		return false
	}
	if insideFigureWithMedia(n) && !holdsMedia(n) {
		return true // a caption, a credit, a gallery counter
	}
	if n.DataAtom == atom.Figcaption {
		return true
	}
	if n.DataAtom == atom.Footer || n.DataAtom == atom.Aside {
		return true
	}
	if holdsMedia(n) {
		// A picture stays; the caption beside it is judged on its own.
		return false
	}
	if widgetMarked(n) {
		return true
	}
	switch n.DataAtom {
	case atom.Ul, atom.Ol:
		return linkList(n)
	case atom.A:
		// A lone "Share", "Skip to content", "Read more" link, alone in
		// its parent: inside a sentence the same word is text.
		if n.Parent == nil {
			return false
		}
		label, cut := shortLabel(textOf(n))
		if cut || !widgetLabels()[label] {
			return false
		}
		parent, cut := shortLabel(textOf(n.Parent))
		return !cut && parent == label
	}
	if isBlock(n) && headingRank(n) == 0 && !hasBlockChild(n) {
		text := textOf(n)
		words := wordCount(text)
		if words == 0 {
			return false
		}
		// t is enough of the label for every rule below: the widget
		// labels and the "Read more" prefixes are shorter.
		t, cut := shortLabel(text)
		if !cut && widgetLabels()[t] || labelPrefix().MatchString(t) && linkRunes(n) > 0 {
			return true
		}
		if !cut && onlyDigits(t) && len(t) <= 3 && !insideList(n) {
			return true // a gallery counter, a share count
		}
		if separatorLine(t, text) {
			return true // "____" drawn between sections
		}
		if (words <= 25 || links(n) >= 2 && words-wordCount(linkText(n)) <= 4) &&
			linkRunes(n)*10 >= textRunes(n)*8 && n.DataAtom != atom.Li && !insideList(n) {
			return true // a paragraph that is one link to another page
		}
		if words <= 40 && copyrightLine().MatchString(strings.TrimSpace(text)) {
			return true
		}
		if words <= 20 && (bylineLine().MatchString(strings.TrimSpace(text)) || holdsTime(n)) {
			return true
		}
	}
	return false
}

// widgetWords are the class and id words of page furniture, and
// widgetPairs the two-word ones written with a hyphen ("sign-up").
// Names are split into words at "-", "_", spaces and camelCase humps
// first ("newsCaption" is "news-caption"), and lower-cased.
var widgetWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`share sharing social related recommended recirc newsletter subscribe
		subscription signup promo advert advertisement ad ads sponsor sponsored comment comments byline author
		bio dateline timestamp caption credit breadcrumb breadcrumbs tag tags taglist sidebar rail outbrain
		taboola readmore trending popular cookie cookies consent gdpr`) {
		m[w] = true
	}
	return m
})

var widgetPairs = [][2]string{{"sign", "up"}, {"read", "more"}, {"more", "stories"}, {"most", "read"}}

func widgetMarked(n *html.Node) bool {
	for _, key := range []string{"class", "id"} {
		if v, ok := attr(n, key); ok && widgetName(v) {
			return true
		}
	}
	return false
}

// widgetName reports whether a class or id value holds a widget word: a
// word of widgetWords, or a pair of widgetPairs joined by a hyphen, words
// being delimited by "-", "_", " " and camelCase humps.
func widgetName(v string) bool {
	words := widgetWords()
	var buf [16]byte
	word := buf[:0]
	long := false // the word outgrew buf: it is no widget word
	var prev [16]byte
	prevLen := 0
	prevHyphen := false
	var last rune
	end := func(hyphen bool) bool {
		if !long {
			if words[string(word)] {
				return true
			}
			if prevHyphen && prevLen > 0 {
				for _, p := range widgetPairs {
					if p[0] == string(prev[:prevLen]) && p[1] == string(word) {
						return true
					}
				}
			}
		}
		prevLen = 0
		if !long {
			prevLen = copy(prev[:], word)
		}
		prevHyphen = hyphen
		word, long = buf[:0], false
		return false
	}
	for _, r := range v {
		switch {
		case r == '-' || r == '_' || r == ' ':
			if end(r == '-') {
				return true
			}
			last = r
			continue
		case unicode.IsUpper(r) && unicode.IsLower(last):
			if end(true) {
				return true
			}
		}
		last = r
		if long {
			continue
		}
		r = unicode.ToLower(r)
		if len(word)+utf8.RuneLen(r) > len(buf) {
			long = true
			continue
		}
		word = utf8.AppendRune(word, r)
	}
	return end(false)
}

// widgetLabels are whole texts of blocks that label a widget, lower case,
// without punctuation.
var widgetLabels = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{
		"advertisement", "advert", "ad", "ads", "sponsored", "sponsored content", "story continues below",
		"continue reading below", "article continues below", "continue reading", "content continues below",
		"story continues below advertisement", "read more", "read more below", "related", "related articles",
		"related stories", "related content", "related posts", "more stories", "you may also like", "recommended",
		"recommended for you", "share", "share this", "share this article", "share this story", "share on facebook",
		"share on twitter", "tweet", "email", "print", "comments", "comment", "leave a comment", "view comments",
		"sign in", "log in", "subscribe", "sign up", "skip to content", "skip to main content", "caption", "close",
		"highlights", "don t miss", "most read", "most popular", "trending", "trending now", "top stories",
		"image", "photo", "video", "watch", "listen", "loading", "advertising", "back to top", "next", "previous",
		"this slideshow requires javascript", "voltar",
	} {
		m[s] = true
	}
	return m
})

// labelPrefix matches the start of a "Read more: …" line.
var labelPrefix = lazyRegexp(`^(read more|read also|also read|more|related|see also|don t miss|watch|listen|recommended|more from|more on|on [a-z]+ com|click here)\b`)

var copyrightLine = lazyRegexp(`(?i)^(©|\(c\)|copyright\b|all rights reserved)`)

// bylineLine matches "By Ana Ruiz - 11/18/19", "Published 4:00 am …"; a
// sentence (ending in a full stop) is not a byline.
var bylineLine = lazyRegexp(`^(?:(?i:by|von|par|por|di|door|av|af)\s+\p{Lu}|(?i:published|updated|posted|last updated|first published)\b)[^\n]*[^.!?…"”]$`)

// separatorLine reports a text of underscores alone (an underscore is a
// word character to the tokenizers that read Steward's output).
func separatorLine(label, text string) bool {
	return label == "" && strings.Trim(strings.TrimSpace(text), "_-*=~ ") == "" && strings.Contains(text, "_")
}

func linkText(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) bool {
		if x.Type == html.ElementNode && x.DataAtom == atom.A {
			b.WriteString(textOf(x))
			b.WriteByte(' ')
			return false
		}
		return true
	})
	return b.String()
}

func onlyDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func links(n *html.Node) int {
	c := 0
	walk(n, func(x *html.Node) bool {
		if x.Type == html.ElementNode && x.DataAtom == atom.A {
			c++
			return false
		}
		return true
	})
	return c
}

// labelWords is how many words of a text shortLabel keeps: more than
// any widget label or "Read more" prefix has.
const labelWords = 8

// shortLabel is the text lower-cased, punctuation replaced with spaces,
// spaces collapsed, cut after its first labelWords words; cut reports
// that words were left out.
func shortLabel(s string) (label string, cut bool) {
	var b strings.Builder
	words, inWord := 0, false
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			inWord = false
			continue
		}
		if !inWord {
			if words == labelWords {
				return b.String(), true
			}
			if words > 0 {
				b.WriteByte(' ')
			}
			words++
			inWord = true
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String(), false
}

// isWidgetLabel reports whether s, normalised, is one of widgetLabels.
func isWidgetLabel(s string) bool {
	label, cut := shortLabel(s)
	return !cut && widgetLabels()[label]
}

// hasWordRune reports whether s has a letter or a digit.
func hasWordRune(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

// linkList reports a list of at least two items that are (nearly) all
// links: related stories, a table of other pages.
func linkList(n *html.Node) bool {
	items := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.Li {
			items++
			if t := textRunes(c); t > 0 && linkRunes(c)*10 < t*8 {
				return false
			}
		}
	}
	return items >= 2 && linkRunes(n) > 0
}

// dropOrphanHeadings removes a heading followed by no content before the
// next heading of the same or a higher rank, or the end: what is left of
// "More from …" once its list is gone.
func dropOrphanHeadings(content *html.Node) {
	var heads []*html.Node
	walk(content, func(n *html.Node) bool {
		if n.Type == html.ElementNode && headingRank(n) > 0 {
			heads = append(heads, n)
			return false
		}
		return true
	})
	for _, h := range heads {
		if orphanHeading(h) {
			h.Parent.RemoveChild(h)
		}
	}
}

func orphanHeading(h *html.Node) bool {
	rank := headingRank(h)
	for n := nextInOrder(h, true); n != nil; n = nextInOrder(n, false) {
		if n.Type == html.ElementNode {
			if r := headingRank(n); r > 0 {
				return r <= rank
			}
			if n.DataAtom == atom.Img || n.DataAtom == atom.Table || n.DataAtom == atom.Pre {
				return false
			}
		}
		if n.Type == html.TextNode && strings.TrimSpace(n.Data) != "" {
			return false
		}
	}
	return true
}

// nextInOrder is the node after n in document order; skip leaves n's
// children out.
func nextInOrder(n *html.Node, skip bool) *html.Node {
	if !skip && n.FirstChild != nil {
		return n.FirstChild
	}
	for ; n != nil; n = n.Parent {
		if n.NextSibling != nil {
			return n.NextSibling
		}
	}
	return nil
}

func headingRank(n *html.Node) int {
	switch n.DataAtom {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

var blockAtoms = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Li: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Span: false, atom.Header: true, atom.Blockquote: false,
	atom.Dd: true, atom.Dt: true, atom.Figure: true,
}

func isBlock(n *html.Node) bool { return blockAtoms[n.DataAtom] }

func hasBlockChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (isBlock(c) || c.DataAtom == atom.Ul || c.DataAtom == atom.Ol ||
			c.DataAtom == atom.Table || c.DataAtom == atom.Blockquote || c.DataAtom == atom.Pre) {
			return true
		}
	}
	return false
}

func insideList(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && (p.DataAtom == atom.Li || p.DataAtom == atom.Td || p.DataAtom == atom.Th) {
			return true
		}
	}
	return false
}

func insideFigureWithMedia(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.DataAtom == atom.Figure {
			return holdsMedia(p)
		}
	}
	return false
}

func holdsMedia(n *html.Node) bool {
	return findFirst(n, func(x *html.Node) bool {
		return x.DataAtom == atom.Img || x.DataAtom == atom.Picture || x.DataAtom == atom.Video
	}) != nil
}

func holdsTime(n *html.Node) bool {
	return findFirst(n, func(x *html.Node) bool { return x.DataAtom == atom.Time }) != nil
}

func textRunes(n *html.Node) int {
	c := 0
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			c += utf8.RuneCountInString(strings.TrimSpace(x.Data))
		}
		return true
	})
	return c
}

func linkRunes(n *html.Node) int {
	c := 0
	walk(n, func(x *html.Node) bool {
		if x.Type == html.ElementNode && x.DataAtom == atom.A {
			c += textRunes(x)
			return false
		}
		return true
	})
	return c
}

// wordCount is len(strings.Fields(s)), without the slice.
func wordCount(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return n
}

// lazyRegexp compiles expr on first use, so that loading the package
// costs nothing for programs that never prune a page.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
