package web

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
)

const ldPage = "https://news.example/2026/05/story"

// ldScript wraps JSON in a JSON-LD script element.
func ldScript(json string) string {
	return `<script type="application/ld+json">` + json + `</script>`
}

// ldDoc is a page whose head holds head and whose body holds an article.
func ldDoc(head, body string) string {
	if body == "" {
		body = `<article><p>` + strings.Repeat("The council voted on the harbour plan after a long debate. ", 12) + `</p></article>`
	}
	return "<!doctype html><html lang=\"en\"><head>" + head + "</head><body>" + body + "</body></html>"
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func readLD(t *testing.T, doc string) (jsonLD, bool) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return readJSONLD(root, mustURL(t, ldPage))
}

// nested is a JSON value nested depth arrays and objects deep in total,
// counting the enclosing object as one.
func nested(depth int) string {
	inner := `"x"`
	for i := 1; i < depth; i++ {
		inner = "[" + inner + "]"
	}
	return inner
}

func TestJSONLDScoring(t *testing.T) {
	article := func(headline, u string) string {
		return fmt.Sprintf(`{"@context":"https://schema.org","@type":"Article","headline":%q,"url":%q}`, headline, u)
	}
	webPage := fmt.Sprintf(`{"@context":"https://schema.org","@type":"WebPage","name":"The page","url":%q}`, ldPage)
	big := fmt.Sprintf(`{"@type":"NewsArticle","headline":"Too big","url":%q,"description":%q}`, ldPage, strings.Repeat("a", 300<<10))
	var twenty strings.Builder
	for i := 0; i < 20; i++ { // the reference's limit, written out
		twenty.WriteString(ldScript(fmt.Sprintf(`{"@type":"Organization","name":"Org %d"}`, i)))
	}
	var nineteen strings.Builder
	for i := 0; i < 19; i++ {
		nineteen.WriteString(ldScript(fmt.Sprintf(`{"@type":"Organization","name":"Org %d"}`, i)))
	}
	cases := []struct {
		name    string
		head    string
		want    string // headline or name of the chosen object; "" for none
		authors []string
	}{
		{"article beats web page", ldScript(webPage) + ldScript(article("The article", ldPage)), "The article", nil},
		{"article beats web page, reversed", ldScript(article("The article", ldPage)) + ldScript(webPage), "The article", nil},
		{"url match beats mismatch", ldScript(article("Other story", "https://news.example/2026/05/other")) + ldScript(article("This story", ldPage)), "This story", nil},
		{"mismatched article loses to matching page", ldScript(article("Other story", "https://news.example/other")) + ldScript(webPage), "The page", nil},
		{"mismatched page is not used", ldScript(`{"@type":"WebPage","name":"Elsewhere","url":"https://else.example/"}`), "", nil},
		{"mismatched article still used alone", ldScript(article("Syndicated", "https://wire.example/story")), "Syndicated", nil},
		{"ties go to the first", ldScript(article("First", ldPage)) + ldScript(article("Second", ldPage)), "First", nil},
		{"url normalized: case, slash, fragment", ldScript(article("Normalized", "HTTPS://NEWS.example/2026/05/story/#main")) + ldScript(article("Plain", "")), "Normalized", nil},
		{"relative url resolved", ldScript(`{"@type":"Article","headline":"Relative","url":"/2026/05/story"}`) + ldScript(article("Elsewhere", "https://news.example/x")), "Relative", nil},
		{"mainEntityOfPage object", ldScript(article("No", "https://news.example/x")) + ldScript(fmt.Sprintf(`{"@type":"BlogPosting","headline":"Yes","mainEntityOfPage":{"@type":"WebPage","@id":%q}}`, ldPage)), "Yes", nil},
		{"type array and schema prefix", ldScript(webPage) + ldScript(`{"@type":["https://schema.org/TechArticle","Thing"],"headline":"Typed"}`), "Typed", nil},
		{"title adds ten", ldScript(`{"@type":"Article"}`) + ldScript(`{"@type":"Article","headline":"Titled"}`), "Titled", nil},
		{"organization alone is not the page", ldScript(`{"@type":"Organization","name":"News Co"}`), "", nil},
		{"graph", ldScript(fmt.Sprintf(`{"@context":"https://schema.org","@graph":[
			{"@type":"WebSite","@id":"https://news.example/#site","name":"News"},
			{"@type":"WebPage","@id":%q,"name":"Story page"},
			{"@type":"NewsArticle","@id":"%s#article","headline":"Graph story","mainEntityOfPage":{"@id":%q},"author":[{"@id":"https://news.example/#ana"},{"@type":"Person","name":"Li Wei"}]},
			{"@type":"Person","@id":"https://news.example/#ana","name":"Ana Ruiz"}]}`, ldPage, ldPage, ldPage)), "Graph story", []string{"Ana Ruiz", "Li Wei"}},
		{"top-level array", ldScript(`[{"@type":"Organization","name":"News Co"},{"@type":"ScholarlyArticle","headline":"In an array","author":"Mia Chen"}]`), "In an array", []string{"Mia Chen"}},
		{"malformed skipped", ldScript(`{"@type":"Article","headline":"Broken",`) + ldScript(article("Valid", ldPage)), "Valid", nil},
		{"only malformed", ldScript(`{"@type":"Article" "headline":"Broken"}`), "", nil},
		{"comment-wrapped", ldScript(`<!-- {"@type":"Report","headline":"Wrapped"} -->`), "Wrapped", nil},
		{"300 KiB script skipped", ldScript(big) + ldScript(webPage), "The page", nil},
		{"depth 40 skipped", ldScript(fmt.Sprintf(`{"@type":"Article","headline":"Deep","url":%q,"x":%s}`, ldPage, nested(39))) + ldScript(webPage), "The page", nil},
		{"depth 32 read", ldScript(fmt.Sprintf(`{"@type":"Article","headline":"Deep enough","url":%q,"x":%s}`, ldPage, nested(31))) + ldScript(webPage), "Deep enough", nil},
		{"brackets in strings are not depth", ldScript(fmt.Sprintf(`{"@type":"Article","headline":"Brackets","x":%q}`, strings.Repeat("[{", 50))), "Brackets", nil},
		{"21st script not read", twenty.String() + ldScript(article("Twenty-first", ldPage)), "", nil},
		{"20th script read", nineteen.String() + ldScript(article("Twentieth", ldPage)), "Twentieth", nil},
		{"other script types ignored", `<script type="application/json">{"@type":"Article","headline":"Not LD"}</script>`, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ld, ok := readLD(t, ldDoc(c.head, ""))
			got := ld.headline
			if got == "" {
				got = ld.name
			}
			if ok != (c.want != "") || got != c.want {
				t.Fatalf("chose %q (found %v), want %q", got, ok, c.want)
			}
			if c.authors != nil && strings.Join(ld.authors, "|") != strings.Join(c.authors, "|") {
				t.Errorf("authors %q, want %q", ld.authors, c.authors)
			}
		})
	}
}

func TestJSONDepth(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{`"x"`, 0}, {`{}`, 1}, {`{"a":[1,{"b":[]}]}`, 4}, {`{"a":"[[[[\"]]"}`, 1}, {nested(40), 39},
	} {
		if got := jsonDepth(c.in); got != c.want {
			t.Errorf("jsonDepth(%s) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestNormalizeForMatch(t *testing.T) {
	base := mustURL(t, "https://Example.COM/a/b/")
	for _, c := range []struct{ ref, want string }{
		{"", "https://example.com/a/b"},
		{"HTTPS://EXAMPLE.com/a/b#x", "https://example.com/a/b"},
		{"/a/b/", "https://example.com/a/b"},
		{"https://user@example.com/a/b?q=1", "https://example.com/a/b?q=1"},
		{"http://example.com/a/b", "http://example.com/a/b"},
		{"mailto:someone@example.com", ""},
	} {
		if got := normalizeForMatch(base, c.ref); got != c.want {
			t.Errorf("normalizeForMatch(%q) = %q, want %q", c.ref, got, c.want)
		}
	}
	if normalizeForMatch(nil, "https://example.com/") != "" {
		t.Error("no page URL must match nothing")
	}
}

// chainStep is one source of a metadata chain: markup for the head, or
// for the body when body is set.
type chainStep struct {
	name   string
	markup string
	body   bool
}

// runChain checks that each step of a chain wins when it and the steps
// after it are present: the page with steps[i:] must yield want[i].
func runChain(t *testing.T, steps []chainStep, want []string, field func(*Page) string) {
	t.Helper()
	for i := range steps {
		t.Run(steps[i].name, func(t *testing.T) {
			var head, body strings.Builder
			for _, s := range steps[i:] {
				if s.body {
					body.WriteString(s.markup)
				} else {
					head.WriteString(s.markup)
				}
			}
			body.WriteString(`<article><p>` + strings.Repeat("The council voted on the harbour plan after a long debate. ", 12) + `</p></article>`)
			p, err := ExtractHTML(ldDoc(head.String(), body.String()), mustURL(t, ldPage))
			if err != nil {
				t.Fatal(err)
			}
			if got := field(p); got != want[i] {
				t.Errorf("got %q, want %q", got, want[i])
			}
		})
	}
}

func TestMetadataTitleChain(t *testing.T) {
	steps := []chainStep{
		{name: "json-ld", markup: ldScript(`{"@type":"NewsArticle","headline":"LD title"}`)},
		{name: "og", markup: `<meta property="og:title" content="OG title">`},
		{name: "citation", markup: `<meta name="citation_title" content="Citation title">`},
		{name: "dc", markup: `<meta name="DC.title" content="DC title">`},
		{name: "itemprop", markup: `<div itemscope itemtype="https://schema.org/Article"><span itemprop="headline">Itemprop title</span></div>`, body: true},
		{name: "h1", markup: `<div style="display:none"><h1>Hidden h1</h1></div><h1>H1 title<a class="headerlink" href="#t">¶</a></h1>`, body: true},
		{name: "twitter", markup: `<meta name="twitter:title" content="Twitter title">`},
		{name: "title", markup: `<title>Document title</title>`},
	}
	want := []string{"LD title", "OG title", "Citation title", "DC title", "Itemprop title", "H1 title", "Twitter title", "Document title"}
	runChain(t, steps, want, func(p *Page) string { return p.Title })
}

// TestMetadataLDHeadlineOrName prefers the JSON-LD name over the headline
// only when the <title> confirms the name (Wikipedia's headline is a
// description of the page kind).
func TestMetadataLDHeadlineOrName(t *testing.T) {
	for _, c := range []struct{ ld, title, want string }{
		{`{"@type":"Article","headline":"Wikimedia list article","name":"List of lakes"}`, "List of lakes - Wikipedia", "List of lakes"},
		{`{"@type":"Article","headline":"Headline","name":"Name"}`, "Something else", "Headline"},
		{`{"@type":"Article","headline":"Headline","name":"Head"}`, "Headline - Site", "Headline"},
		{`{"@type":"Article","name":"Only a name"}`, "T", "Only a name"},
	} {
		p, err := ExtractHTML(ldDoc(ldScript(c.ld)+"<title>"+c.title+"</title>", ""), mustURL(t, ldPage))
		if err != nil {
			t.Fatal(err)
		}
		if p.Title != c.want {
			t.Errorf("%s with <title> %q: title %q, want %q", c.ld, c.title, p.Title, c.want)
		}
	}
}

func TestMetadataDescriptionChain(t *testing.T) {
	steps := []chainStep{
		{name: "json-ld", markup: ldScript(`{"@type":"Article","headline":"T","description":"LD &amp; description"}`)},
		{name: "og", markup: `<meta property="og:description" content="OG description">`},
		{name: "dc", markup: `<meta name="dc.description" content="DC description">`},
		{name: "itemprop", markup: `<meta itemprop="description" content="Itemprop description">`},
		{name: "twitter", markup: `<meta name="twitter:description" content="Twitter description">`},
		{name: "meta", markup: `<meta name="description" content="Plain description">`},
	}
	want := []string{"LD & description", "OG description", "DC description", "Itemprop description", "Twitter description", "Plain description"}
	runChain(t, steps, want, func(p *Page) string { return p.Description })
}

func TestMetadataDateChains(t *testing.T) {
	rfc := func(p time.Time) string {
		if p.IsZero() {
			return ""
		}
		return p.UTC().Format(time.RFC3339)
	}
	published := []chainStep{
		{name: "json-ld", markup: ldScript(`{"@type":"Article","headline":"T","datePublished":"2026-01-02T03:04:05+01:00"}`)},
		{name: "json-ld unparsable falls through", markup: ldScript(`{"@type":"Article","headline":"T","datePublished":"last Tuesday"}`)},
		{name: "og", markup: `<meta property="article:published_time" content="2025-02-03T04:05:06Z">`},
		{name: "citation", markup: `<meta name="citation_publication_date" content="2024/03/04">`},
		{name: "dc", markup: `<meta name="dcterms.issued" content="2023-04-05">`},
		{name: "itemprop", markup: `<time itemprop="datePublished" datetime="2022-05-06T07:08:09-04:00">May 6</time>`, body: true},
	}
	runChain(t, published, []string{"2026-01-02T02:04:05Z", "2025-02-03T04:05:06Z", "2025-02-03T04:05:06Z", "2024-03-04T00:00:00Z",
		"2023-04-05T00:00:00Z", "2022-05-06T11:08:09Z"}, func(p *Page) string { return rfc(p.Published) })
	modified := []chainStep{
		{name: "json-ld", markup: ldScript(`{"@type":"Article","headline":"T","dateModified":"2026-01-02T03:04:05.123Z"}`)},
		{name: "og", markup: `<meta property="og:updated_time" content="2025-02-03T04:05:06+0000">`},
		{name: "dc", markup: `<meta name="dcterms.modified" content="2024-03-04 05:06:07">`},
		{name: "itemprop", markup: `<meta itemprop="dateModified" content="2023-04-05T06:07">`},
	}
	runChain(t, modified, []string{"2026-01-02T03:04:05Z", "2025-02-03T04:05:06Z", "2024-03-04T05:06:07Z", "2023-04-05T06:07:00Z"},
		func(p *Page) string { return rfc(p.Modified) })
}

func TestMetadataAuthorChain(t *testing.T) {
	steps := []chainStep{
		{name: "json-ld", markup: ldScript(`{"@type":"Article","headline":"T","author":[{"@type":"Person","name":"Ana Ruiz"},"Li Wei",{"@type":"Organization","name":"Desk"}]}`)},
		{name: "meta", markup: `<meta name="author" content="Meta Author"><meta property="article:author" content="https://news.example/by/meta-author"><meta name="citation_author" content="Citation Author">`},
		{name: "itemprop", markup: `<div itemscope itemtype="https://schema.org/Article"><span itemprop="author" itemscope itemtype="https://schema.org/Person"><a itemprop="url" href="/u/k"><span itemprop="name">Kim Item</span></a></span>` +
			`<div itemprop="comment" itemscope itemtype="https://schema.org/Comment"><span itemprop="author">Reply Author</span></div></div>`, body: true},
	}
	want := []string{"Ana Ruiz; Li Wei; Desk", "Meta Author; Citation Author", "Kim Item"}
	runChain(t, steps, want, func(p *Page) string { return strings.Join(p.Authors, "; ") })
}

func TestMetadataCapsAndURLAuthors(t *testing.T) {
	long := strings.Repeat("é", 1500)
	var authors []string
	for i := 0; i < 12; i++ {
		authors = append(authors, fmt.Sprintf(`{"@type":"Person","name":"Author %d"}`, i))
	}
	head := ldScript(fmt.Sprintf(`{"@type":"Article","headline":%q,"description":%q,"author":[%s]}`, long, long, strings.Join(authors, ",")))
	p, err := ExtractHTML(ldDoc(head, ""), mustURL(t, ldPage))
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(p.Title); n != 1000 {
		t.Errorf("title has %d characters, want 1000", n)
	}
	if n := utf8.RuneCountInString(p.Description); n != 1000 {
		t.Errorf("description has %d characters, want 1000", n)
	}
	if len(p.Authors) != 10 || p.Authors[9] != "Author 9" {
		t.Errorf("authors %q, want the first 10", p.Authors)
	}

	// An over-long author is cut; URL authors are dropped wherever they
	// come from, and a JSON-LD list of URLs only falls through to meta.
	p, err = ExtractHTML(ldDoc(ldScript(fmt.Sprintf(`{"@type":"Article","headline":"T","author":[%q,{"@type":"Person","name":"www.example.com/ana","url":"https://x.example/ana"}]}`,
		"https://news.example/by/ana"))+`<meta property="article:author" content="https://www.facebook.com/ana"><meta name="author" content="`+strings.Repeat("b", 250)+`">`, ""),
		mustURL(t, ldPage))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Authors) != 1 || p.Authors[0] != strings.Repeat("b", 200) {
		t.Errorf("authors %q, want one name of 200 characters", p.Authors)
	}
}

// TestRealPageMetadata checks the metadata of the real pages against what
// their markup says.
func TestRealPageMetadata(t *testing.T) {
	cases := []struct {
		file, url, title, authors, published, modified, description string
	}{
		// JSON-LD Article: headline, datePublished; no JSON-LD author,
		// so og:article:author.
		{"real-news-bbc", "http://www.bbc.com/news/world-us-canada-33646704", "Obama admits US gun laws are his 'biggest frustration'",
			"BBC News", "2015-07-24T04:36:09Z", "", `President Barack Obama tells the BBC his failure to pass "common sense gun safety laws" is the greatest frustration of his presidency.`},
		// No JSON-LD: og:title; meta author (article:author is a profile
		// URL); article:published / article:modified.
		{"real-scripts-nytimes", "https://www.nytimes.com/2017/01/13/world/africa/sudan-sanctions.html", "United States to Lift Sudan Sanctions",
			"Jeffrey Gettleman", "2017-01-13T05:00:04Z", "2017-01-13T08:38:38Z", "For the first time since the 1990s, the country will be able to trade extensively with the United States."},
		// JSON-LD Article whose headline is "Wikimedia list article":
		// the name, which the <title> confirms; Organization author.
		{"real-table-wikipedia", "https://en.wikipedia.org/wiki/List_of_films_featuring_time_loops", "List of films featuring time loops",
			"Contributors to Wikimedia projects", "2014-03-27T19:11:24Z", "2024-04-02T13:18:40Z", ""},
		// Discourse: og:title; the opening post's microdata author and
		// dates (article:published_time first for the publication).
		{"real-forum-ziggit", "https://ziggit.dev/t/cruller-buns-zig-runtime-continued-on-zig-0-16/16734", "Cruller: Bun's Zig Runtime, Continued on Zig 0.16",
			"solenopsys", "2026-07-16T08:01:11Z", "2026-07-16T08:03:02Z", ""},
		// Hand-built replicas with JSON-LD.
		{"news-article", "https://www.coastalherald.example/news/environment/2026/mar/14/tidal-energy-project-approved", "Tidal energy project clears final planning hurdle",
			"Morag Fraser", "2026-03-14T07:30:00Z", "2026-03-14T11:02:45Z", "A 30-megawatt tidal array off the north coast has been approved after a four-year consultation."},
		{"forum-thread", "https://forum.makers.example/t/raspberry-pi-5-keeps-dropping-wi-fi-after-suspend/48213", "Raspberry Pi 5 keeps dropping Wi-Fi after suspend",
			"tinkerbee", "2026-01-09T18:22:10Z", "", "After resuming from suspend my Pi 5 shows the wlan0 interface as up but no traffic passes until I restart NetworkManager."},
		// No metadata but an h1 and a <title>: the h1.
		{"real-docs-golang", "http://golang.org/doc/go1.html", "Go 1 Release Notes", "", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "pages", c.file+".html"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := ExtractHTML(string(raw), mustURL(t, c.url))
			if err != nil {
				t.Fatal(err)
			}
			if p.Title != c.title {
				t.Errorf("title %q, want %q", p.Title, c.title)
			}
			if got := strings.Join(p.Authors, "; "); got != c.authors {
				t.Errorf("authors %q, want %q", got, c.authors)
			}
			if got := formatTime(p.Published); got != c.published {
				t.Errorf("published %q, want %q", got, c.published)
			}
			if got := formatTime(p.Modified); got != c.modified {
				t.Errorf("modified %q, want %q", got, c.modified)
			}
			if c.description != "" && p.Description != c.description {
				t.Errorf("description %q, want %q", p.Description, c.description)
			}
		})
	}
}
