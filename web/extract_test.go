package web

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden Markdown files under testdata/pages")

// The fixtures under testdata/pages are hand-built replicas of real-world
// page structures (a news site, a Sphinx documentation page, a Discourse
// thread, a MediaWiki list, a marketing page full of scripts and hidden
// text); no real page could be downloaded where they were written.
var pageFixtures = []struct {
	file string
	url  string
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

// BenchmarkExtraction measures pages per second over the five fixtures.
func BenchmarkExtraction(b *testing.B) {
	type fixture struct {
		html string
		u    *url.URL
	}
	var fxs []fixture
	var size int64
	for _, fx := range pageFixtures {
		raw, err := os.ReadFile(filepath.Join("testdata", "pages", fx.file+".html"))
		if err != nil {
			b.Fatal(err)
		}
		u, _ := url.Parse(fx.url)
		fxs = append(fxs, fixture{string(raw), u})
		size += int64(len(raw))
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
