package web

import (
	"bytes"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"

	"github.com/stewardhq/steward/internal/realpages"
)

// TestPruneBoilerplate extracts an article that carries the furniture the
// pruning rules are for, and checks what goes and what stays.
func TestPruneBoilerplate(t *testing.T) {
	para := func(s string) string {
		return "<p>" + s + " " + strings.Repeat("The council met for a long session and voted on many items. ", 4) + "</p>"
	}
	doc := `<html><head><title>Council votes</title></head><body><article>
<h1>Council votes</h1>
<p class="byline">By Ana Ruiz - 11/18/19 11:04 PM EST</p>
<figure><img src="https://img.example/a.jpg" alt="The hall"><figcaption>The hall on Monday. Credit: Jo Bloggs</figcaption><div>6</div></figure>
` + para("First paragraph of the story.") + `
<div>Advertisement</div>
<p><strong>READ MORE:</strong> <a href="/other">Another story about something else</a></p>
` + para("By 2020, the council had grown.") + `
<ul><li><a href="/a">Related story one</a></li><li><a href="/b">Related story two</a></li></ul>
<ul><li><a href="/c">Day Break</a>, a 2006 television series</li><li><a href="/d">Groundhog Day</a>, a 1993 film</li></ul>
<h3>Close</h3>
` + para("The close of the meeting came late.") + `
<table><tr><th>Item</th><th>Votes</th></tr><tr><td>Budget</td><td>4</td></tr></table>
<div class="share-tools"><a href="/share">Share this article</a></div>
<p>Please <a href="/share">share</a> your views with the council.</p>
` + para("Last paragraph of the story.") + `
<p><em>Have a tip? Write to <a href="mailto:ana@example.com">ana@example.com</a>.</em></p>
<p>© 2019 The Example Times. All rights reserved.</p>
</article></body></html>`
	u, _ := url.Parse("https://news.example/council")
	p, err := ExtractHTML(doc, u)
	if err != nil {
		t.Fatal(err)
	}
	md := p.Markdown
	for _, gone := range []string{"By Ana Ruiz", "The hall on Monday", "Credit:", "Advertisement", "READ MORE",
		"Related story one", "Share this article", "Have a tip?", "© 2019"} {
		if strings.Contains(md, gone) {
			t.Errorf("Markdown keeps %q:\n%s", gone, md)
		}
	}
	for _, kept := range []string{"First paragraph", "By 2020, the council had grown.", "![The hall](https://img.example/a.jpg)",
		"Day Break", "a 2006 television series", "### Close", "| Budget | 4 |", "Please [share](https://news.example/share) your views",
		"Last paragraph"} {
		if !strings.Contains(md, kept) {
			t.Errorf("Markdown lacks %q:\n%s", kept, md)
		}
	}
}

// TestWidgetNameMatchesPattern holds widgetName to the regular expression
// it replaced, over every class and id of the benchmark pages and over
// random names built from the widget words.
func TestWidgetNameMatchesPattern(t *testing.T) {
	marker := regexp.MustCompile(`(^|[-_ ])(share|sharing|social|related|recommended|recirc|newsletter|subscribe|subscription|signup|sign-up|promo|advert|advertisement|ads?|sponsor(ed)?|comments?|byline|author|bio|dateline|timestamp|caption|credit|breadcrumbs?|tags?|taglist|sidebar|rail|outbrain|taboola|read-?more|more-stories|trending|popular|most-read|cookie|cookies|consent|gdpr)([-_ ]|$)`)
	hump := regexp.MustCompile(`(\p{Ll})(\p{Lu})`)
	want := func(v string) bool { return marker.MatchString(strings.ToLower(hump.ReplaceAllString(v, "$1-$2"))) }
	var names []string
	pages, err := realpages.Pages()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		root, err := html.Parse(bytes.NewReader(p.HTML))
		if err != nil {
			continue
		}
		walk(root, func(n *html.Node) bool {
			for _, a := range n.Attr {
				if a.Key == "class" || a.Key == "id" {
					names = append(names, a.Val)
				}
			}
			return true
		})
	}
	parts := []string{"sign", "up", "Up", "read", "More", "more", "stories", "most", "Read", "share", "Share", "ads", "ad",
		"x", "É", "é", "ÉCLAIR", "sponsored", "sponsoredX", "tag", "tags", "tagsy", "advertisementadvertisement", "sidebarWidget"}
	seps := []string{"", "-", "_", " ", "--", "\t", ".", ":"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for k := rng.IntN(5); k >= 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		names = append(names, b.String())
	}
	matched := 0
	for _, v := range names {
		if got := widgetName(v); got != want(v) {
			t.Errorf("widgetName(%q) = %v, the pattern says %v", v, got, !got)
		} else if got {
			matched++
		}
	}
	t.Logf("%d names, %d widget names", len(names), matched)
}

// TestShortLabel holds shortLabel and wordCount to the functions they
// replaced (the whole normalised label, len(strings.Fields)).
func TestShortLabel(t *testing.T) {
	normalized := func(s string) string {
		s = strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsNumber(r) {
				return unicode.ToLower(r)
			}
			return ' '
		}, s)
		return strings.Join(strings.Fields(s), " ")
	}
	parts := []string{"Read", "more", ":", " ", "\u00a0", "\n", "É", "1", "—", "\xff", "on", "x", "com", "  ", "Share"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for k := rng.IntN(24); k >= 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		s := b.String()
		full := normalized(s)
		label, cut := shortLabel(s)
		words := strings.Fields(full)
		if n := min(len(words), labelWords); label != strings.Join(words[:n], " ") || cut != (len(words) > labelWords) {
			t.Fatalf("shortLabel(%q) = %q, %v; the label is %q", s, label, cut, full)
		}
		if wordCount(s) != len(strings.Fields(s)) {
			t.Fatalf("wordCount(%q) = %d, want %d", s, wordCount(s), len(strings.Fields(s)))
		}
		if hasWordRune(s) != (full != "") {
			t.Fatalf("hasWordRune(%q) = %v", s, hasWordRune(s))
		}
	}
}
