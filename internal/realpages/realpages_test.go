package realpages

import (
	"bytes"
	"strings"
	"testing"
)

func TestPages(t *testing.T) {
	pages, err := Pages()
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 181 {
		t.Fatalf("got %d pages, want the benchmark's 181", len(pages))
	}
	seen := map[string]bool{}
	for i, p := range pages {
		if i > 0 && pages[i-1].Name >= p.Name {
			t.Fatalf("pages not sorted by name at %d: %s then %s", i, pages[i-1].Name, p.Name)
		}
		if seen[p.Name] {
			t.Fatalf("page %s twice", p.Name)
		}
		seen[p.Name] = true
		if !bytes.Contains(bytes.ToLower(p.HTML[:min(len(p.HTML), 1<<16)]), []byte("<html")) && !bytes.Contains(bytes.ToLower(p.HTML), []byte("<body")) {
			t.Errorf("page %s does not look like HTML: %.80q", p.Name, p.HTML)
		}
		if strings.TrimSpace(p.GroundTruth) == "" {
			t.Errorf("page %s has an empty ground truth", p.Name)
		}
		if !strings.HasPrefix(p.URL, "http") {
			t.Errorf("page %s has URL %q, want an http(s) address", p.Name, p.URL)
		}
	}
}
