package web

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/stewardhq/steward/internal/realpages"
)

// scriptless renders the tree of doc with the text of its script (JSON-LD
// kept) and style elements left out: what stripRawText must not change.
func scriptless(t *testing.T, doc string) string {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return "error: " + err.Error()
	}
	walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.Namespace == "" && (n.DataAtom == atom.Style || n.DataAtom == atom.Script && shouldRemove(n)) {
			for n.FirstChild != nil {
				n.RemoveChild(n.FirstChild)
			}
		}
		return true
	})
	var b bytes.Buffer
	if err := html.Render(&b, root); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestStripRawTextKeepsTheTree parses every benchmark page, and variants
// with markup that could lead a scan astray spliced in at random places,
// with and without stripRawText: the trees must be the same once script
// and style text is left out.
func TestStripRawTextKeepsTheTree(t *testing.T) {
	pages, err := realpages.Pages()
	if err != nil {
		t.Fatal(err)
	}
	snippets := []string{"<!--", "-->", "<!-->", "--!>", "<script>", "</script>", "<style>", "</style>", "<textarea>",
		"</textarea>", "<title>", "</title>", "<svg>", "</svg>", "<a title='x>", "\"", "'", "<p a=\"<script>\">", "<scrİpt>x",
		"<script type=application/ld+json>{}</script>", "<script/type=\"application/ld+json\">{\"a\":1}</script>", "</ſcript>",
		"<noscript><style>", "</noscript>", "<!doctype x>", "<? x >", "</ x>", "<xmp><script>", "</xmp>", "<plaintext>", "<"}
	rng := rand.New(rand.NewPCG(7, 8))
	stripped := 0
	for i, p := range pages {
		doc := DecodeHTML(p.HTML, "text/html")
		docs := []string{doc}
		if i%6 == 0 {
			for range 3 {
				d := doc
				for range 1 + rng.IntN(4) {
					at := rng.IntN(len(d) + 1)
					d = d[:at] + snippets[rng.IntN(len(snippets))] + d[at:]
				}
				docs = append(docs, d)
			}
		}
		for k, d := range docs {
			s := stripRawText(d)
			if len(s) < len(d) {
				stripped += len(d) - len(s)
			}
			if want, got := scriptless(t, d), scriptless(t, s); want != got {
				t.Errorf("%s (variant %d): the tree changed", p.Name, k)
			}
		}
	}
	t.Logf("%d bytes of script and style text left out", stripped)
}
