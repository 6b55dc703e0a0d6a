package bench

import (
	"bytes"
	"context"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	readability "codeberg.org/readeck/go-readability/v2"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"

	"github.com/stewardhq/steward/internal/extracteval"
	"github.com/stewardhq/steward/internal/realpages"
	"github.com/stewardhq/steward/web"
)

// The extraction comparison (issue 12 point 5): the 181 pages of the
// article-extraction benchmark (internal/realpages), each extractor scored
// with the benchmark's own metric (internal/extracteval) and timed over
// all pages in a row.
//
//   - steward: web.Service.Retrieve from a loopback server that sends the
//     saved bytes as text/html without a charset, as `steward read` gets a
//     page; the Markdown is reduced to its words (extracteval.MarkdownWords)
//     for scoring, outside the timed part.
//     Its time includes the HTTP round trip, which the others do not pay.
//   - steward-extract: the same extraction without HTTP,
//     web.ExtractHTML(web.DecodeHTML(bytes, "text/html"), url).
//   - trafilatura: github.com/markusmobius/go-trafilatura,
//     ExtractDocument(html.Parse(bytes), Options{EnableFallback: true}),
//     ContentText: the benchmark's own runner (extractors/go_trafilatura).
//   - readability: codeberg.org/readeck/go-readability/v2,
//     NewParser().ParseAndMutate(html.Parse(bytes), url), RenderText: the
//     benchmark's runner for readeck (extractors/go_readability_readeck).

var (
	pagesOnce sync.Once
	pages     []realpages.Page
	pagesErr  error
)

func benchPages(tb testing.TB) []realpages.Page {
	pagesOnce.Do(func() { pages, pagesErr = realpages.Pages() })
	if pagesErr != nil {
		tb.Fatal(pagesErr)
	}
	return pages
}

// extractor returns one page's output (timed); words reduces it to the
// text that is scored (not timed).
type extractor struct {
	name  string
	run   func(tb testing.TB, p realpages.Page) string
	words func(string) string
}

var fakeURL, _ = url.Parse("https://fake-url.com")

func extractors(tb testing.TB, ps []realpages.Page) ([]extractor, func()) {
	byPath := make(map[string][]byte, len(ps))
	for _, p := range ps {
		byPath["/"+p.Name] = p.HTML
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := byPath[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write(b)
	}))
	svc := web.NewService(web.ServiceOptions{})
	return []extractor{
		{"steward", func(tb testing.TB, p realpages.Page) string {
			page, err := svc.Retrieve(context.Background(), srv.URL+"/"+p.Name, web.Options{Policy: web.UserChosen})
			if err != nil {
				tb.Errorf("steward %s: %v", p.Name, err)
				return ""
			}
			return page.Markdown
		}, extracteval.MarkdownWords},
		{"steward-extract", func(tb testing.TB, p realpages.Page) string {
			page, err := web.ExtractHTML(web.DecodeHTML(p.HTML, "text/html"), fakeURL)
			if err != nil {
				tb.Errorf("steward-extract %s: %v", p.Name, err)
				return ""
			}
			return page.Markdown
		}, extracteval.MarkdownWords},
		{"trafilatura", func(tb testing.TB, p realpages.Page) string {
			doc, err := html.Parse(bytes.NewReader(p.HTML))
			if err != nil {
				return ""
			}
			res, err := trafilatura.ExtractDocument(doc, trafilatura.Options{EnableFallback: true})
			if err != nil || res == nil {
				return ""
			}
			return res.ContentText
		}, nil},
		{"readability", func(tb testing.TB, p realpages.Page) string {
			doc, err := html.Parse(bytes.NewReader(p.HTML))
			if err != nil {
				return ""
			}
			parser := readability.NewParser()
			a, err := parser.ParseAndMutate(doc, fakeURL)
			if err != nil {
				return ""
			}
			var b strings.Builder
			a.RenderText(&b)
			return b.String()
		}, nil},
	}, srv.Close
}

// heldOut is the split of web's TestRealPagesExtraction: FNV-1a of the
// page name is odd.
func heldOut(name string) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()%2 == 1
}

// TestExtractionScores scores every extractor on all pages and on each
// half of the split, and requires Steward to beat go-readability, which
// it builds on.
func TestExtractionScores(t *testing.T) {
	ps := benchPages(t)
	exs, stop := extractors(t, ps)
	defer stop()
	f1 := map[string]float64{}
	for _, ex := range exs {
		var all, tune, held []extracteval.Counts
		for _, p := range ps {
			out := ex.run(t, p)
			if ex.words != nil {
				out = ex.words(out)
			}
			c := extracteval.Score(p.GroundTruth, out)
			all = append(all, c)
			if heldOut(p.Name) {
				held = append(held, c)
			} else {
				tune = append(tune, c)
			}
		}
		r, rt, rh := extracteval.Aggregate(all), extracteval.Aggregate(tune), extracteval.Aggregate(held)
		f1[ex.name] = r.F1
		t.Logf("%-12s all %d: F1 %.4f P %.4f R %.4f | tuning %d: F1 %.4f | held-out %d: F1 %.4f P %.4f R %.4f",
			ex.name, r.Pages, r.F1, r.Precision, r.Recall, rt.Pages, rt.F1, rh.Pages, rh.F1, rh.Precision, rh.Recall)
	}
	if f1["steward"] <= f1["readability"] {
		t.Errorf("steward F1 %.4f does not beat go-readability's %.4f", f1["steward"], f1["readability"])
	}
}

// BenchmarkExtract times one pass over all 181 pages per op.
func BenchmarkExtract(b *testing.B) {
	ps := benchPages(b)
	exs, stop := extractors(b, ps)
	defer stop()
	var size int64
	for _, p := range ps {
		size += int64(len(p.HTML))
	}
	for _, ex := range exs {
		b.Run("impl="+ex.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range ps {
					ex.run(b, p)
				}
			}
			b.ReportMetric(float64(len(ps))*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
