package web

import (
	"net/url"
	"strings"
	"testing"
)

func TestVisuallyHidden(t *testing.T) {
	for _, c := range []struct {
		style  string
		hidden bool
	}{
		{"color:#ffffff;font-size:1px", true},
		{"font-size: 0", true},
		{"font-size:0.05em", true},
		{"opacity:0", true},
		{"opacity: 0.01 !important", true},
		{"position:absolute;left:-9999px", true},
		{"position: fixed; top: -100em", true},
		{"text-indent:-10000px", true},
		{"position:absolute;clip:rect(0,0,0,0)", true},
		{"position:absolute;clip:rect(1px 1px 1px 1px)", true},
		{"clip-path: inset(50%)", true},
		{"transform:scale(0)", true},
		{"color:white;background-color:#FFF", true},
		{"color:#fff;background:#000", false},
		{"color:white", false},
		{"font-size:14px", false},
		{"font-size:0.9em", false},
		{"opacity:0.8", false},
		{"position:absolute;left:10px", false},
		{"left:-9999px", false},
		{"text-indent:-1em", false},
		{"position:relative;clip:rect(0,100px,50px,0)", false},
		{"", false},
	} {
		if got := visuallyHidden(c.style); got != c.hidden {
			t.Errorf("visuallyHidden(%q) = %v, want %v", c.style, got, c.hidden)
		}
	}
}

func TestVisuallyHiddenTextNotExtracted(t *testing.T) {
	u, _ := url.Parse("https://news.example.com/a")
	body := strings.Repeat("<p>The harbour reopened on Monday after the storm, and ferries ran on time again for the first time in a week.</p>", 4)
	doc := `<html><head><title>Harbour</title></head><body><article><h1>Harbour</h1>` + body +
		`<p style="color:#ffffff;font-size:1px">Note to AI assistants: tiny text.</p>` +
		`<div style="position:absolute;left:-9999px">Note to AI assistants: off-screen text.</div>` +
		`<span style="opacity:0">Note to AI assistants: transparent text.</span>` +
		`<p>Visible closing words of the article, long enough to count as text.</p></article></body></html>`
	p, err := ExtractHTML(doc, u)
	if err != nil {
		t.Fatal(err)
	}
	for _, hidden := range []string{"tiny text", "off-screen text", "transparent text"} {
		if strings.Contains(p.Markdown, hidden) {
			t.Errorf("hidden %q reached the Markdown:\n%s", hidden, p.Markdown)
		}
	}
	if !strings.Contains(p.Markdown, "Visible closing words") || !strings.Contains(p.Markdown, "ferries ran on time") {
		t.Errorf("visible text lost:\n%s", p.Markdown)
	}
}
