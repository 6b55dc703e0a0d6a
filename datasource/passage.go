package datasource

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/stewardhq/steward/tool"
)

// Passage is one piece of a data source that a search found: the matched
// text with where it comes from, in the same shape for every kind of
// source (the reference's retrieval context).
type Passage struct {
	// SourceID and SourceName name the configured data source.
	SourceID   string `json:"source_id"`
	SourceName string `json:"source_name"`
	// Name is the document's name: a file name, or what an ERI server
	// calls the context.
	Name string `json:"name"`
	// Category is TEXT for every passage Steward passes on.
	Category string `json:"category"`
	// Type is the kind of text, e.g. TEXT_DOCUMENT or TEXT_SPREADSHEET.
	Type string `json:"type"`
	// Path is the document's path or address.
	Path string `json:"path,omitempty"`
	// Location says where in the document, e.g. "page 12" or "chunk 3".
	Location string `json:"location,omitempty"`
	// Links are further addresses the source gives.
	Links []string `json:"links,omitempty"`
	// Text is the matched text.
	Text string `json:"text"`
	// Surrounding is text around the match, if the source gives any.
	Surrounding []string `json:"surrounding,omitempty"`
	// RefTitle and RefLink are how the passage is listed as a source:
	// e.g. "handbook.pdf (Page 12)" and file:///…/handbook.pdf#page=12.
	RefTitle string `json:"reference_title,omitempty"`
	RefLink  string `json:"reference_link,omitempty"`
}

// Markdown writes the passage as the n-th retrieval context: a heading,
// the lines naming its origin, then the matched and surrounding text in
// fences the text cannot close.
func (p Passage) Markdown(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Retrieval context %d\n", n)
	fmt.Fprintf(&b, "Data source: %s (ID %s)\n", oneLine(p.SourceName), p.SourceID)
	if p.Name != "" {
		fmt.Fprintf(&b, "Data source name: %s\n", oneLine(p.Name))
	}
	fmt.Fprintf(&b, "Content category: %s\n", firstNonBlank(p.Category, "TEXT"))
	fmt.Fprintf(&b, "Content type: %s\n", firstNonBlank(p.Type, "TEXT_DOCUMENT"))
	if p.Path != "" {
		fmt.Fprintf(&b, "Content path: %s\n", oneLine(p.Path))
	}
	if p.Location != "" {
		fmt.Fprintf(&b, "Content location: %s\n", oneLine(p.Location))
	}
	if len(p.Links) > 0 {
		b.WriteString("Additional links:\n")
		for _, l := range p.Links {
			fmt.Fprintf(&b, "- %s\n", oneLine(l))
		}
	}
	b.WriteString("\nMatched text content:\n")
	writeFenced(&b, p.Text)
	for _, s := range p.Surrounding {
		if strings.TrimSpace(s) == "" {
			continue
		}
		b.WriteString("\nSurrounding text content:\n")
		writeFenced(&b, s)
	}
	return b.String()
}

// writeFenced writes text in a fence of at least four backticks, longer
// than any run of backticks inside it, so the text cannot close it.
func writeFenced(b *strings.Builder, text string) {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(4, longest+1))
	b.WriteString(fence)
	b.WriteString("\n")
	b.WriteString(strings.TrimRight(text, "\n"))
	b.WriteString("\n")
	b.WriteString(fence)
	b.WriteString("\n")
}

// Sources lists the passage as sources the user can check: its reference
// first, then its links. Only http, https and file addresses and absolute
// paths count; anything else cannot be opened by anyone.
func (p Passage) Sources() []tool.Source {
	var out []tool.Source
	add := func(title, link string) {
		if u, ok := checkable(link); ok {
			out = append(out, tool.Source{Title: title, URL: u})
		}
	}
	title := firstNonBlank(p.RefTitle, p.Name, p.SourceName)
	if p.RefLink != "" {
		add(title, p.RefLink)
	} else {
		add(title, p.Path)
	}
	for _, l := range p.Links {
		add("", l)
	}
	return out
}

// checkable turns a link into an address a user can open, or reports that
// it is none.
func checkable(link string) (string, bool) {
	link = strings.TrimSpace(link)
	if link == "" {
		return "", false
	}
	if filepath.IsAbs(link) && !strings.Contains(link, "://") {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(link)}).String(), true
	}
	u, err := url.Parse(link)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
		return link, true
	case "file":
		return link, true
	}
	return "", false
}

// localPassage builds the passage of a local index hit.
func localPassage(src Source, h LocalHit) Passage {
	name := filepath.Base(h.Path)
	if name == "." || name == string(filepath.Separator) || name == "" {
		name = src.Name
	}
	p := Passage{SourceID: src.ID, SourceName: src.Name, Name: name, Category: "TEXT", Type: typeOfFile(h.Path), Path: h.Path, Text: h.Text}
	link := &url.URL{Scheme: "file", Path: filepath.ToSlash(h.Path)}
	if h.Page > 0 {
		p.Location = fmt.Sprintf("page %d", h.Page)
		p.RefTitle = fmt.Sprintf("%s (Page %d)", name, h.Page)
		link.Fragment = fmt.Sprintf("page=%d", h.Page)
	} else {
		p.Location = fmt.Sprintf("chunk %d", h.Chunk+1)
		p.RefTitle = fmt.Sprintf("%s (Chunk %d)", name, h.Chunk+1)
		link.Fragment = fmt.Sprintf("chunk=%d", h.Chunk)
	}
	p.RefLink = link.String()
	return p
}

// typeOfFile names the kind of text by the file's extension.
func typeOfFile(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".xls", ".xlsx", ".xlsm", ".xlsb", ".ods", ".csv", ".tsv":
		return "TEXT_SPREADSHEET"
	case ".ppt", ".pptx", ".odp":
		return "TEXT_PRESENTATION"
	case ".html", ".htm", ".xhtml":
		return "TEXT_WEBSITE"
	case ".eml", ".msg":
		return "TEXT_EMAIL"
	}
	return "TEXT_DOCUMENT"
}

// textTypes maps words in an ERI context's category to the kind of text,
// checked in this order.
var textTypes = []struct{ word, typ string }{
	{"book", "TEXT_BOOK"}, {"paper", "TEXT_PAPER"}, {"dictionary", "TEXT_DICTIONARY"}, {"encyclopedia", "TEXT_ENCYCLOPEDIA"},
	{"glossary", "TEXT_GLOSSARY"}, {"journal", "TEXT_JOURNAL"}, {"magazine", "TEXT_MAGAZINE"}, {"newspaper", "TEXT_NEWSPAPER"},
	{"report", "TEXT_REPORT"}, {"review", "TEXT_REVIEW"}, {"website", "TEXT_WEBSITE"}, {"business concept", "TEXT_BUSINESS_CONCEPT"},
	{"concept", "TEXT_CONCEPT"}, {"definition", "TEXT_DEFINITION"}, {"article", "TEXT_ARTICLE"}, {"chapter", "TEXT_CHAPTER"},
	{"thesis", "TEXT_THESIS"}, {"dissertation", "TEXT_THESIS"}, {"transcript", "TEXT_TRANSCRIPT"}, {"spreadsheet", "TEXT_SPREADSHEET"},
	{"presentation", "TEXT_PRESENTATION"}, {"slide", "TEXT_PRESENTATION"}, {"meeting minutes", "TEXT_MEETING_MINUTES"},
	{"email", "TEXT_EMAIL"}, {"protocol", "TEXT_PROTOCOL"},
}

// typeOfCategory guesses the kind of text from an ERI category.
func typeOfCategory(category string) string {
	c := strings.ToLower(category)
	for _, t := range textTypes {
		if strings.Contains(c, t.word) {
			return t.typ
		}
	}
	return "TEXT_DOCUMENT"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func firstNonBlank(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
