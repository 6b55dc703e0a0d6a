package mailbox

import (
	"strings"

	"golang.org/x/net/html"
)

// HTMLToText extracts the readable text of an HTML mail part: script, style
// and head are dropped, block elements end lines, and runs of blank space
// collapse.
func HTMLToText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	skip := 0
	newline := func() {
		s := b.String()
		if s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
	}
	for {
		switch z.Next() {
		case html.ErrorToken:
			return tidyText(b.String())
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "head", "title", "noscript", "template":
				if tt := z.Token(); tt.Type == html.StartTagToken {
					skip++
				}
			case "br", "p", "div", "tr", "table", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "hr", "section", "article":
				newline()
			case "li":
				newline()
				b.WriteString("- ")
			case "td", "th":
				b.WriteString(" ")
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "head", "title", "noscript", "template":
				if skip > 0 {
					skip--
				}
			case "p", "div", "tr", "table", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "section", "article":
				newline()
			}
		}
	}
}

// tidyText collapses blank space within lines, trims lines and keeps at
// most one empty line in a row.
func tidyText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\u00a0", " ")
	lines := strings.Split(s, "\n")
	var out []string
	blank := 0
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			blank++
			if blank > 1 || len(out) == 0 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
