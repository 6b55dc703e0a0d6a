package webcontent

import (
	"context"
	"time"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/web"
)

// Prepared is a page as the model may see it.
type Prepared struct {
	RequestedURL string   `json:"requested_url"`
	FinalURL     string   `json:"final_url"`
	Title        string   `json:"title,omitempty"`
	Description  string   `json:"description,omitempty"`
	Authors      []string `json:"authors,omitempty"`
	Language     string   `json:"language,omitempty"`
	Published    string   `json:"published,omitempty"`
	Modified     string   `json:"modified,omitempty"`
	// Kind is "extracted page" for HTML or "complete text" for a text
	// document sent as it is.
	Kind      string `json:"content_kind"`
	MediaType string `json:"media_type,omitempty"`
	Markdown  string `json:"markdown"`
	// Truncated is true when Markdown was cut to the character budget.
	Truncated     bool `json:"truncated"`
	OriginalChars int  `json:"original_characters"`
	ReturnedChars int  `json:"returned_characters"`
	// Findings are what the filter neutralized, per field.
	Findings []Finding `json:"filtered,omitempty"`
	// FilterWarning is set when the optional classifier could not check the
	// page; the built-in checks still ran.
	FilterWarning bool `json:"filter_warning,omitempty"`
}

// Finding is one neutralized span, with the field it stood in.
type Finding struct {
	Field    string `json:"field"`
	Rule     string `json:"rule"`
	Category string `json:"category"`
	Snippet  string `json:"snippet"`
}

// Kind names of Prepared.Kind.
const (
	KindExtracted = "extracted page"
	KindComplete  = "complete text"
)

// Prepare truncates the page's content to maxChars (0 keeps it whole) and
// then filters every field in one batch. Filtering after truncation means
// only what reaches the model is checked.
func Prepare(ctx context.Context, f *guard.Filter, p *web.Page, maxChars int) Prepared {
	out := Prepared{RequestedURL: p.RequestedURL, FinalURL: p.FinalURL, MediaType: p.MediaType, OriginalChars: p.OriginalChars}
	out.Kind = KindExtracted
	if p.ContentKind == web.TextDocument {
		out.Kind = KindComplete
	}
	md := p.Markdown
	if maxChars > 0 {
		md, out.Truncated = web.Truncate(md, maxChars)
	}
	src := guard.Source{Kind: guard.WebContent, Label: p.FinalURL}
	texts := []guard.Text{
		{Source: src, Field: "content", Text: md},
		{Source: src, Field: "title", Text: p.Title},
		{Source: src, Field: "description", Text: p.Description},
		{Source: src, Field: "language", Text: p.Language},
		{Source: src, Field: "published", Text: formatTime(p.Published)},
		{Source: src, Field: "modified", Text: formatTime(p.Modified)},
	}
	for _, a := range p.Authors {
		texts = append(texts, guard.Text{Source: src, Field: "author", Text: a})
	}
	res := f.FilterBatch(ctx, texts)
	for i, r := range res {
		if r.ClassifierFailed {
			out.FilterWarning = true
		}
		for _, fd := range r.Findings {
			out.Findings = append(out.Findings, Finding{Field: texts[i].Field, Rule: fd.Rule, Category: string(fd.Category), Snippet: fd.Snippet})
		}
	}
	out.Markdown, out.Title, out.Description, out.Language, out.Published, out.Modified = res[0].Text, res[1].Text, res[2].Text, res[3].Text, res[4].Text, res[5].Text
	for _, r := range res[6:] {
		if r.Text != "" {
			out.Authors = append(out.Authors, r.Text)
		}
	}
	out.ReturnedChars = len([]rune(out.Markdown))
	return out
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
