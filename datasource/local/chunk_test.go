package local

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/datasource/extract"
	"github.com/stewardhq/steward/llm/tokens"
)

func testCounter(t *testing.T) *counter {
	t.Helper()
	c, err := newCounter("")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The piece counter agrees with tiktoken's own count of whole texts.
func TestCounterMatchesTiktoken(t *testing.T) {
	c := testCounter(t)
	files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "tika", "*"))
	texts := []string{
		"Hello, world! It's 2026: the café's CamelCase parser handles 12345 items... ok?\n\n\tIndented  line\r\nend",
		"東京都に行きます。서울에서 회의가 있습니다. Ünïcödé façade",
		"func main() {\n\tfmt.Println(\"x\")\n}\n// comment /* */ a/b/c https://example.org/x?y=1",
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && !strings.HasSuffix(f, ".pdf") && !strings.Contains(f, ".x") && !strings.Contains(f, ".o") && !strings.Contains(f, ".pp") && !strings.Contains(f, ".do") {
			texts = append(texts, string(b))
		}
	}
	for i, s := range texts {
		want, err := tokens.Count("", s)
		if err != nil {
			t.Fatal(err)
		}
		got := c.count(s)
		if diff := math.Abs(float64(got - want)); diff > math.Max(2, 0.02*float64(want)) {
			t.Errorf("text %d: counted %d, tiktoken %d", i, got, want)
		}
	}
}

func docOf(kind extract.Kind, sections ...string) *extract.Doc {
	d := &extract.Doc{Kind: kind}
	for i, s := range sections {
		d.Sections = append(d.Sections, extract.Section{Text: s, Page: i + 1})
	}
	return d
}

// The reference's chunking: a piece that fits is one chunk; no chunk
// exceeds the maximum, overlap included; consecutive chunks share about
// the overlap; a chunk's page is the page of its first own unit.
func TestChunkSizesOverlapAndPages(t *testing.T) {
	c := testCounter(t)
	small := docOf(extract.Document, "# Title\n\nOne short paragraph.")
	if ch := chunkDoc(c, small, 512, 50); len(ch) != 1 || ch[0].Page != 1 || !strings.Contains(ch[0].Text, "One short paragraph.") {
		t.Fatalf("small: %+v", ch)
	}
	var pages []string
	for p := range 6 {
		var b strings.Builder
		b.WriteString("# Chapter heading\n\n")
		for q := range 8 {
			b.WriteString(strings.Repeat("word"+string(rune('a'+p))+" ", 10+q))
			b.WriteString("sentence end.\n\n")
		}
		pages = append(pages, b.String())
	}
	doc := docOf(extract.Document, pages...)
	const maxTok, overlap = 120, 30
	ch := chunkDoc(c, doc, maxTok, overlap)
	if len(ch) < 6 {
		t.Fatalf("%d chunks", len(ch))
	}
	lastPage := 0
	for i, x := range ch {
		if n := c.count(x.Text); n > maxTok+2 {
			t.Errorf("chunk %d has %d tokens, more than %d", i, n, maxTok)
		}
		if x.Page < lastPage || x.Page < 1 || x.Page > 6 {
			t.Errorf("chunk %d on page %d after %d", i, x.Page, lastPage)
		}
		lastPage = x.Page
		if i > 0 {
			// The start of this chunk repeats the end of the one before.
			prev := strings.Fields(ch[i-1].Text)
			tail := strings.Join(prev[len(prev)-3:], " ")
			if !strings.Contains(x.Text, tail) {
				t.Errorf("chunk %d does not repeat %q of chunk %d:\n%s", i, tail, i-1, x.Text)
			}
		}
	}
	// Every word of the document is in some chunk.
	all := ""
	for _, x := range ch {
		all += x.Text + "\n"
	}
	for _, p := range pages {
		for _, w := range strings.Fields(p) {
			if !strings.Contains(all, w) {
				t.Fatalf("word %q lost", w)
			}
		}
	}
	// No overlap.
	for i, x := range chunkDoc(c, doc, maxTok, 0) {
		if n := c.count(x.Text); n > maxTok+2 {
			t.Errorf("chunk %d without overlap has %d tokens", i, n)
		}
	}
}

func TestChunkLongWordsAndTables(t *testing.T) {
	c := testCounter(t)
	long := strings.Repeat("x", 5000)
	ch := chunkDoc(c, docOf(extract.Document, "start "+long+" end"), 64, 8)
	total := 0
	for i, x := range ch {
		if n := c.count(x.Text); n > 66 {
			t.Errorf("chunk %d: %d tokens", i, n)
		}
		total += strings.Count(x.Text, "x")
	}
	if total < 5000 {
		t.Errorf("the long word lost characters: %d", total)
	}
	var rows strings.Builder
	for i := range 200 {
		rows.WriteString("Sheet row " + strings.Repeat("cell | ", 3) + string(rune('A'+i%26)) + "\n")
	}
	ch = chunkDoc(c, docOf(extract.Spreadsheet, rows.String()), 100, 10)
	for i, x := range ch {
		if strings.Contains(x.Text, "| \n") || !strings.HasPrefix(strings.TrimSpace(strings.Split(x.Text, "\n")[0]), "Sheet row") && i == 0 {
			t.Errorf("chunk %d cuts a row: %q", i, x.Text)
		}
		for _, l := range strings.Split(x.Text, "\n") {
			if l != "" && !strings.HasPrefix(l, "Sheet row") {
				t.Errorf("chunk %d holds a partial row %q", i, l)
			}
		}
	}
}
