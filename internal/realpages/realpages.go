package realpages

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

//go:embed testdata/ground-truth.json testdata/html/*.html.gz
var files embed.FS

// Page is one saved page of the benchmark.
type Page struct {
	// Name is the page's identifier in the benchmark (a SHA-256 in hex).
	Name string
	// URL is the address the page was saved from; it is never contacted.
	URL string
	// HTML is the page's bytes as saved, decompressed, in whatever
	// character encoding the site served them.
	HTML []byte
	// GroundTruth is the benchmark's article body for the page: the text a
	// perfect extractor would return, paragraphs separated by blank lines.
	GroundTruth string
}

type truth struct {
	ArticleBody string `json:"articleBody"`
	URL         string `json:"url"`
}

// Pages returns every page of the benchmark, sorted by Name. Each call
// decompresses the pages afresh, so callers may change what they get.
func Pages() ([]Page, error) {
	raw, err := files.ReadFile("testdata/ground-truth.json")
	if err != nil {
		return nil, fmt.Errorf("realpages: reading the ground truth: %w", err)
	}
	var truths map[string]truth
	if err := json.Unmarshal(raw, &truths); err != nil {
		return nil, fmt.Errorf("realpages: testdata/ground-truth.json is not a JSON object of {articleBody, url} by page name: %w", err)
	}
	entries, err := files.ReadDir("testdata/html")
	if err != nil {
		return nil, fmt.Errorf("realpages: listing testdata/html: %w", err)
	}
	pages := make([]Page, 0, len(entries))
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".html.gz")
		if !ok {
			continue
		}
		t, ok := truths[name]
		if !ok {
			return nil, fmt.Errorf("realpages: page %s has no entry in testdata/ground-truth.json; every page needs its ground truth", name)
		}
		html, err := gunzip(path.Join("testdata/html", e.Name()))
		if err != nil {
			return nil, err
		}
		pages = append(pages, Page{Name: name, URL: t.URL, HTML: html, GroundTruth: t.ArticleBody})
	}
	if len(pages) != len(truths) {
		return nil, fmt.Errorf("realpages: %d pages in testdata/html but %d entries in the ground truth; they must match", len(pages), len(truths))
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].Name < pages[j].Name })
	return pages, nil
}

func gunzip(name string) ([]byte, error) {
	raw, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("realpages: reading %s: %w", name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("realpages: %s is not gzip: %w", name, err)
	}
	defer zr.Close()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("realpages: decompressing %s: %w", name, err)
	}
	return out, nil
}
