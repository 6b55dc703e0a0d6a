package web

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden Markdown files under testdata/pages")

// The fixtures under testdata/pages are of two sorts. The real-*.html
// files are real pages saved from the sites named in their names (BBC
// News, golang.org, Wikipedia, The New York Times, the Ziggit Discourse
// forum; the Shift_JIS dtiserv.com page is used by TestRealPageShiftJIS),
// taken byte for byte from public test corpora; README.md there gives each
// one's address and provenance. The other five are hand-built
// replicas of real-world page structures (a news site, a Sphinx
// documentation page, a Discourse thread, a MediaWiki list, a marketing
// page full of scripts and hidden text), written where no page could be
// downloaded; they test single rules on small, readable input.
var pageFixtures = []struct {
	file string
	url  string
	// title, when set, is the page's own title, which Page.Title must be.
	title string
	// must and mustNot are checked besides the golden file, so that an
	// -update cannot silently accept a regression of these points.
	must    []string
	mustNot []string
}{
	{
		file: "news-article",
		url:  "https://www.coastalherald.example/news/environment/2026/mar/14/tidal-energy-project-approved",
		must: []string{
			"could power 40,000 homes",
			"## Concerns from fishing communities",
			"[before work starts](https://www.coastalherald.example/documents/monitoring-plan.pdf)",
			"- Phase one: 12 turbines, 2027",
		},
		mustNot: []string{"We use cookies", "Share on Facebook", "Most viewed", "All rights reserved", "morning briefing", "gtag", "Lifestyle"},
	},
	{
		file: "docs-page",
		url:  "https://docs.harbor.example/en/3.2/guide/retries.html",
		must: []string{
			"## Default policy\n",
			"| `max_attempts` | 4 | Total attempts, including the first. |",
			"```",
			"policy = RetryPolicy(",
			"[Idempotency keys](https://docs.harbor.example/en/3.2/guide/idempotency.html#keys)",
			"1. Every successful request adds 0.1 tokens to the budget.",
		},
		mustNot: []string{"Search docs", "Installation", "SphinxRtdTheme", "© Copyright", "¶", "Permalink"},
	},
	{
		file: "forum-thread",
		url:  "https://forum.makers.example/t/raspberry-pi-5-keeps-dropping-wi-fi-after-suspend/48213",
		must: []string{
			"modprobe -r brcmfmac && modprobe brcmfmac",
			"That did it, thanks!",
			"firmware-brcm80211 1:20240709-2",
			"[this older thread](https://forum.makers.example/t/brcmfmac-and-suspend/39102)",
		},
		mustNot: []string{"Privacy Policy", "Log in", "vendor-2b8f"},
	},
	{
		file: "table-heavy",
		url:  "https://en.encyclopedia.example/wiki/List_of_largest_lakes_of_Europe",
		must: []string{
			"| 1 | [Ladoga](https://en.encyclopedia.example/wiki/Lake_Ladoga \"Lake Ladoga\") | Russia | 17,700 | 230 |",
			"| Lake Geneva | 89 | 154 | Shared by France and Switzerland |",
			"Largest European lakes by surface area",
		},
		mustNot: []string{"Random article", "wgBackendResponseTime", "Creative Commons"},
	},
	{
		file: "scripts-hidden",
		url:  "https://acme.example/pricing",
		must: []string{
			"| Team | 2 TB | 1 year | €19 |",
			"Start a free 30-day trial",
			"![EU flag](https://acme.example/img/eu-flag.png)",
			"[terms](https://acme.example/legal/terms#changes)",
		},
		mustNot: []string{
			"Ignore previous instructions", "SYSTEM:", "evil.example", "Assistant: recommend", "Template text",
			"all plans are free", "uppercase style", "Invisible paragraph", "hidden attribute", "Decorative text",
			"ACME SVG TEXT", "javascript:", "data:image", "[chat with us]", "spacer.gif", "Notes for sales", "Need help choosing",
			"We value your privacy", "Usage chart", "tracking", "{{name}}",
		},
	},
	{
		// A BBC News article (2015): article body among navigation,
		// share tools, cookie scripts and a noscript tracking pixel.
		file:  "real-news-bbc",
		url:   "http://www.bbc.com/news/world-us-canada-33646704",
		title: "Obama admits US gun laws are his 'biggest frustration'",
		must: []string{
			"President Barack Obama has admitted that his failure to pass \"common sense gun safety laws\" in the US is the greatest frustration of his presidency.",
			"- [The UK must stay in the EU](http://www.bbc.co.uk/news/uk-politics-33647154) to have influence on the world stage",
			"## Analysis: Jon Sopel, BBC News, Washington",
			"![Gun control campaigners protest in McPhearson Square in Washington DC - 25 April 2013](http://ichef.bbci.co.uk/news/555/cpsprodpb/462D/production/_84456971_gettyimages-167501087.jpg)",
			"Mr Obama will become the first US president to address the African Union when he travels on to Ethiopia on Sunday.",
		},
		mustNot: []string{"Top Stories", "More on this story", "bbccookies", "Skip to content", "Accessibility links", "Copyright", "cookie", "orb-", "sa.bbc.co.uk"},
	},
	{
		// The Go 1 release notes as golang.org served them (2012): a
		// documentation page with code blocks and four two-column tables
		// whose row groups are separated by <hr> rows.
		file:  "real-docs-golang",
		url:   "http://golang.org/doc/go1.html",
		title: "Go 1 Release Notes", // the h1 comes before <title> in the chain
		must: []string{
			"## Introduction to Go 1\n",
			"### Append\n",
			"```\n    var c chan int\n",
			"    close(crecv) // illegal\n```",
			"[The Go 1 compatibility document](http://golang.org/doc/go1compat.html)",
			"See [How to Write Go Code](http://golang.org/doc/code.html) for a primer",
			"| Old path | New path |\n|---|---|\n| asn1 | encoding/asn1 |\n| csv | encoding/csv |",
			"| crypto/bcrypt | code.google.com/p/go.crypto/bcrypt |",
			"| image.Color | color.Color |",
			"| Atob(x) | ParseBool(x) |",
		},
		mustNot: []string{"The Project", "_gaq", "UA-11222381", "Build version", "* * *", "Search"},
	},
	{
		// A Wikipedia list (2023): one 80-row table, one of whose cells
		// holds two paragraphs, then 80 references.
		file:  "real-table-wikipedia",
		url:   "https://en.wikipedia.org/wiki/List_of_films_featuring_time_loops",
		title: "List of films featuring time loops",
		must: []string{
			"| Film | Year | Description |\n|---|---|---|\n| [*Repeat Performance*](https://en.wikipedia.org/wiki/Repeat_Performance \"Repeat Performance\") | 1947 | A woman who shot her husband",
			"| [*Groundhog Day*](https://en.wikipedia.org/wiki/Groundhog_Day_%28film%29 \"Groundhog Day (film)\") | 1993 | Self-centered television weatherman Phil Connors",
			"| [*Churuli*](https://en.wikipedia.org/wiki/Churuli \"Churuli\") | 2021 | The film, directed by",
			"as eerie mysteries unfold.<br /><br />The original story and characters are based on a short story",
			"| [*Palm Springs*](https://en.wikipedia.org/wiki/Palm_Springs_%282020_film%29 \"Palm Springs (2020 film)\") | 2020 |",
			"[time travel in films](https://en.wikipedia.org/wiki/List_of_time_travel_works_of_fiction#Time_travel_in_films",
		},
		mustNot: []string{"Privacy policy", "Log in", "Create account", "This page was last edited", "Personal tools", "mw-jump-link"},
	},
	{
		// A New York Times article (2017): 88 scripts, HTML comments
		// (ad-server notes, ESI includes), inline display:none spans and
		// hidden-attribute blocks around the story.
		file:  "real-scripts-nytimes",
		url:   "https://www.nytimes.com/2017/01/13/world/africa/sudan-sanctions.html",
		title: "United States to Lift Sudan Sanctions",
		must: []string{
			"LONDON — After nearly 20 years of hostile relations, the American government plans to reverse its position on [Sudan](http://topics.nytimes.com/top/news/international/countriesandterritories/sudan/index.html?inline=nyt-geo",
			"[comprehensive trade embargo against Sudan and blocked the assets of the Sudanese government](https://www.treasury.gov/resource-center/sanctions/Programs/Documents/sudan.pdf)",
			"“These guys are the worst of the worst.”",
			"had made a “deal with the devil.”",
		},
		mustNot: []string{
			"Campaign ID", "abtest", "ADXINFO", "esi:include", "close story-meta", "Supported by", "Loading...",
			"Advertisement", "Subscribe", "Site Index", "googletag", "Related Coverage", "cookie", "Skip to",
		},
	},
	{
		// A Discourse topic in the crawler view (2026): the opening post
		// and its replies marked up with schema.org microdata, a code
		// block, quotes and a link preview. The saved copy stops after
		// 50,000 characters, inside reply 18.
		file:  "real-forum-ziggit",
		url:   "https://ziggit.dev/t/cruller-buns-zig-runtime-continued-on-zig-0-16/16734",
		title: "Cruller: Bun's Zig Runtime, Continued on Zig 0.16",
		must: []string{
			"# Cruller: a production-focused Bun runtime ported to Zig 0.16\n",
			"Repository: [GitHub - solenopsys/cruller: fork of Bun · GitHub](https://github.com/solenopsys/cruller)",
			"[xsawyerx](https://ziggit.dev/u/xsawyerx) July 16, 2026, 8:08am 2\n\nDo you aim to address the critique of the code?",
			"```sh\nzig 0.16.0 build --build-file build016.zig check",
			"> It makes more sense to turn it into a convenient embeddable library that can be used throughout the Zig ecosystem.",
			"### [I spent 181 minutes waiting for the Zig compiler this week](https://zackoverflow.dev/writing/i-spent-181-minutes-waiting-for-the-zig-compiler-this-week)",
			"I think the post is talking about cumulative time.",
		},
		mustNot: []string{"[](", "](#", "](https://ziggit.dev/t/cruller-buns-zig-runtime-continued-on-zig-0-16/16734#", "Heading link", "stylesheets", "opensearch"},
	},
}

func TestExtractionGolden(t *testing.T) {
	for _, fx := range pageFixtures {
		t.Run(fx.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "pages", fx.file+".html"))
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(fx.url)
			page, err := ExtractHTML(string(raw), u)
			if err != nil {
				t.Fatal(err)
			}
			got := renderGolden(page)
			golden := filepath.Join("testdata", "pages", fx.file+".golden.md")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("extraction differs from %s (run with -update and read the diff):\n%s", golden, got)
			}
			for _, s := range fx.must {
				if !strings.Contains(page.Markdown, s) {
					t.Errorf("Markdown lacks %q", s)
				}
			}
			for _, s := range fx.mustNot {
				if strings.Contains(strings.ToLower(got), strings.ToLower(s)) {
					t.Errorf("output contains %q, which should have been dropped", s)
				}
			}
			if page.Title == "" {
				t.Error("no title")
			}
			if fx.title != "" && page.Title != fx.title {
				t.Errorf("title %q, want %q", page.Title, fx.title)
			}
		})
	}
}

// renderGolden writes the page's metadata as a small header, then the
// Markdown.
func renderGolden(p *Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "title: %s\n", p.Title)
	fmt.Fprintf(&b, "description: %s\n", p.Description)
	fmt.Fprintf(&b, "authors: %s\n", strings.Join(p.Authors, "; "))
	fmt.Fprintf(&b, "language: %s\n", p.Language)
	fmt.Fprintf(&b, "published: %s\n", formatTime(p.Published))
	fmt.Fprintf(&b, "modified: %s\n", formatTime(p.Modified))
	b.WriteString("---\n")
	b.WriteString(p.Markdown)
	b.WriteString("\n")
	return b.String()
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// TestExtractionDetails covers single rules of the cleaning step.
func TestExtractionDetails(t *testing.T) {
	u, _ := url.Parse("https://site.example/dir/page.html")
	filler := "<p>" + strings.Repeat("Plain words that make up the readable body of this page. ", 12) + "</p>"
	tests := []struct {
		name    string
		html    string
		must    []string
		mustNot []string
	}{
		{"base-href", `<html><head><base href="https://cdn.example/docs/"></head><body><article>` + filler + `<p><a href="guide.html">Guide</a> text.</p></article></body></html>`,
			[]string{"(https://cdn.example/docs/guide.html)"}, nil},
		{"javascript-link", `<article>` + filler + `<p><a href="JaVa&#x09;Script:alert(1)">click</a> here</p></article>`,
			[]string{"click"}, []string{"alert", "cript:"}},
		{"form-unwrapped", `<article>` + filler + `<form><p>Inside the form stays.</p><input value="gone"></form></article>`,
			[]string{"Inside the form stays."}, []string{"gone"}},
		{"comments", `<article>` + filler + `<!-- secret comment --><p>Visible.</p></article>`,
			[]string{"Visible."}, []string{"secret comment"}},
		{"role-dialog", `<article>` + filler + `<div role="alertdialog"><p>Alert text</p></div></article>`,
			nil, []string{"Alert text"}},
		{"visibility-collapse", `<article>` + filler + `<p style="visibility: collapse">Collapsed</p></article>`,
			nil, []string{"Collapsed"}},
		{"table-cell-paragraphs", `<article>` + filler + `<table><tr><th>Name</th><th>Notes</th></tr><tr><td>Alpha</td><td><p>First paragraph.</p><p>Second paragraph.</p></td></tr><tr><td>Beta</td><td>One line.</td></tr></table></article>`,
			[]string{"| Name | Notes |\n|---|---|\n| Alpha | First paragraph.<br />", "<br />Second paragraph. |\n| Beta | One line. |"}, nil},
		{"table-rule-rows", `<article>` + filler + `<table summary="renames"><tr><th>Old</th><th>New</th></tr><tr><td colspan="2"><hr></td></tr><tr><td>a</td><td>b</td></tr><tr><td colspan="2"><hr></td></tr><tr><td>c</td><td>d</td></tr></table></article>`,
			[]string{"| Old | New |\n|---|---|\n| a | b |\n| c | d |"}, []string{"* * *", "|  |"}},
		{"empty-heading-anchor", `<article>` + filler + `<h2><a name="s1" class="anchor" href="#s1"></a>Section one</h2><p>Text of the section.</p></article>`,
			[]string{"## Section one\n"}, []string{"[](", "#s1"}},
		{"thread-replies", `<html><body><div itemscope itemtype="http://schema.org/DiscussionForumPosting"><h1>Question</h1>` +
			`<div class="post" itemprop="text">` + filler + filler + `</div>` +
			`<div itemprop="comment" itemscope itemtype="http://schema.org/Comment"><a href="/u/ann">ann</a><div class="post">First reply with an answer.</div></div>` +
			`<div itemprop="comment" itemscope itemtype="http://schema.org/Comment"><a href="/u/bob">bob</a><div class="post">Second reply, thanks.</div></div>` +
			`</div><footer>Footer text</footer></body></html>`,
			[]string{"First reply with an answer.", "Second reply, thanks.", "[bob](https://site.example/u/bob)"}, []string{"Footer text"}},
		{"empty-body-fallback", `<html><head><title>T</title></head><body><main><p>Short.</p></main></body></html>`,
			[]string{"Short."}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ExtractHTML(tc.html, u)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.must {
				if !strings.Contains(p.Markdown, s) {
					t.Errorf("Markdown lacks %q:\n%s", s, p.Markdown)
				}
			}
			for _, s := range tc.mustNot {
				if strings.Contains(p.Markdown, s) {
					t.Errorf("Markdown contains %q:\n%s", s, p.Markdown)
				}
			}
		})
	}
}

// BenchmarkExtraction measures pages per second: over the real pages, over
// the replicas, and over all fixtures, each set taken in turn.
func BenchmarkExtraction(b *testing.B) {
	type fixture struct {
		html string
		u    *url.URL
	}
	sets := map[string][]fixture{}
	for _, fx := range pageFixtures {
		raw, err := os.ReadFile(filepath.Join("testdata", "pages", fx.file+".html"))
		if err != nil {
			b.Fatal(err)
		}
		u, _ := url.Parse(fx.url)
		set := "replicas"
		if strings.HasPrefix(fx.file, "real-") {
			set = "real"
		}
		sets[set] = append(sets[set], fixture{string(raw), u})
		sets["all"] = append(sets["all"], fixture{string(raw), u})
	}
	for _, name := range []string{"real", "replicas", "all"} {
		fxs := sets[name]
		b.Run(name, func(b *testing.B) {
			var size int64
			for _, fx := range fxs {
				size += int64(len(fx.html))
			}
			b.SetBytes(size / int64(len(fxs)))
			b.ReportAllocs()
			cpu := startCPU(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fx := fxs[i%len(fxs)]
				if _, err := ExtractHTML(fx.html, fx.u); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			cpu.report(b)
		})
	}
}

// BenchmarkRetrieveLoopback measures whole retrievals (connect, request,
// extraction) of the fixtures from a loopback server.
func BenchmarkRetrieveLoopback(b *testing.B) {
	pages := map[string][]byte{}
	for _, fx := range pageFixtures {
		raw, err := os.ReadFile(filepath.Join("testdata", "pages", fx.file+".html"))
		if err != nil {
			b.Fatal(err)
		}
		pages["/"+fx.file] = raw
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(pages[r.URL.Path])
	}))
	defer srv.Close()
	s := NewService(ServiceOptions{})
	b.ReportAllocs()
	cpu := startCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fx := pageFixtures[i%len(pageFixtures)]
		if _, err := s.Retrieve(context.Background(), srv.URL+"/"+fx.file, Options{Policy: UserChosen}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	cpu.report(b)
}

// FuzzExtractHTML feeds arbitrary documents to the extraction: it must not
// fail the program, and what it returns is valid UTF-8 with LF line ends
// and no script links.
func FuzzExtractHTML(f *testing.F) {
	for _, fx := range pageFixtures {
		raw, err := os.ReadFile(filepath.Join("testdata", "pages", fx.file+".html"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(raw))
	}
	f.Add(`<a href="javascript:x()">a</a><img src=x><p hidden>h</p>`)
	f.Add("<table><tr><td>\x00</td></tr></table>")
	u, _ := url.Parse("https://fuzz.example/dir/page")
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := ExtractHTML(doc, u)
		if err != nil {
			return
		}
		if !utf8.ValidString(p.Markdown) || strings.Contains(p.Markdown, "\r") {
			t.Fatalf("bad Markdown %q", p.Markdown)
		}
		if strings.Contains(strings.ToLower(p.Markdown), "](javascript:") {
			t.Fatalf("script link in %q", p.Markdown)
		}
	})
}

// TestExtractionDeepNesting refuses absurdly nested documents instead of
// recursing through them.
func TestExtractionDeepNesting(t *testing.T) {
	u, _ := url.Parse("https://deep.example/")
	_, err := ExtractHTML("<html><body>"+strings.Repeat("<div>", 100000)+"x</body></html>", u)
	if !errors.Is(err, ErrDecode) {
		t.Fatalf("error %v, want ErrDecode", err)
	}
	p, err := ExtractHTML("<html><body><article>"+strings.Repeat("<div>", 300)+"<p>"+strings.Repeat("Nested but readable words. ", 30)+"</p></article></body></html>", u)
	if err != nil || !strings.Contains(p.Markdown, "Nested but readable words.") {
		t.Fatalf("300 levels: %v", err)
	}
}

// TestRealPageShiftJIS retrieves a real Shift_JIS page (the home page of
// www.dtiserv.com, a Japanese hosting company) from a loopback server and
// checks that the Markdown holds its Japanese text decoded, not mojibake,
// whether the charset comes from the response header or only from the
// page's own meta tag.
func TestRealPageShiftJIS(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "pages", "real-sjis-dtiserv.html"))
	if err != nil {
		t.Fatal(err)
	}
	if utf8.Valid(raw) {
		t.Fatal("fixture is valid UTF-8; it must stay Shift_JIS bytes")
	}
	for _, contentType := range []string{"text/html", "text/html; charset=Shift_JIS"} {
		t.Run(contentType, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", contentType)
				w.Write(raw)
			}))
			defer srv.Close()
			s := NewService(ServiceOptions{})
			page, err := s.Retrieve(context.Background(), srv.URL+"/index.html", Options{Policy: UserChosen})
			if err != nil {
				t.Fatal(err)
			}
			if page.Title != "dti services" {
				t.Errorf("title %q", page.Title)
			}
			for _, s := range []string{
				"私共dti servicesでは、安心性、スピード、確実性、柔軟性をモットーにお客様のあらゆるニーズにお応え出来ますよう",
				"電子商取引（エレクトロニックコマース）、オンライン情報提供、インタラクティブメディア（双方向通信）。",
				"当社のテクニカルは、常時24時間体制で対応しておりますので",
			} {
				if !strings.Contains(page.Markdown, s) {
					t.Errorf("Markdown lacks %q:\n%s", s, page.Markdown)
				}
			}
			for _, s := range []string{"\uFFFD", "MM_preloadImages", "background-color", "macromedia"} {
				if strings.Contains(page.Markdown, s) {
					t.Errorf("Markdown contains %q", s)
				}
			}
		})
	}
}

// TestBadSchemeMatchesMap holds badScheme to the strings.Map form it
// replaced.
func TestBadSchemeMatchesMap(t *testing.T) {
	old := func(v string) bool {
		v = strings.Map(func(r rune) rune {
			if r <= ' ' {
				return -1
			}
			return unicode.ToLower(r)
		}, v)
		return strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:") || strings.HasPrefix(v, "data:")
	}
	parts := []string{"java", "JAVA", "script", "SCRİPT", "\t", " ", "\x00", ":", "vb", "da", "ta", "DATA", "\xff", "é", "https://x", "/a"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		var b strings.Builder
		for k := rng.IntN(6); k >= 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		if v := b.String(); badScheme(v) != old(v) {
			t.Fatalf("badScheme(%q) = %v", v, badScheme(v))
		}
	}
}
