package webpage

import (
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/tools/webcontent"
	"github.com/stewardhq/steward/web"
)

// The page statuses of a result.
const (
	StatusEmpty    = "empty response"
	StatusPartial  = "partial"
	StatusComplete = "complete"
)

// Result is what read_web_page returns to the model.
type Result struct {
	URL            string   `json:"url"`
	Status         string   `json:"status"`
	RetrievedAtUTC string   `json:"retrieved_at_utc"`
	Content        Content  `json:"content"`
	Metadata       Metadata `json:"metadata"`
}

// Content is the page's text and the fields its author wrote about it.
type Content struct {
	TextContent string   `json:"text_content"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Authors     []string `json:"authors,omitempty"`
}

// Metadata describes the page and how much of it was returned.
type Metadata struct {
	Language      string `json:"language,omitempty"`
	PublishedTime string `json:"published_time,omitempty"`
	ModifiedTime  string `json:"modified_time,omitempty"`
	MediaType     string `json:"media_type,omitempty"`
	// ContentKind is "extracted page" or "complete text".
	ContentKind string   `json:"content_kind"`
	Warnings    []string `json:"warnings"`
	// The character counts are given when the content was truncated.
	OriginalContentCharacters int `json:"original_content_characters,omitempty"`
	ReturnedContentCharacters int `json:"returned_content_characters,omitempty"`
}

// buildResult writes the result from the page and its filtered fields.
// Every field comes from prep, which was filtered, except the final
// address, the media type and the time, which the server or Steward set.
func buildResult(page *web.Page, prep webcontent.Prepared) Result {
	r := Result{
		URL:            page.FinalURL,
		RetrievedAtUTC: page.RetrievedAt.UTC().Format(time.RFC3339Nano),
		Content: Content{
			TextContent: prep.Markdown,
			Title:       prep.Title,
			Description: prep.Description,
			Authors:     prep.Authors,
		},
		Metadata: Metadata{
			Language:      prep.Language,
			PublishedTime: prep.Published,
			ModifiedTime:  prep.Modified,
			MediaType:     page.MediaType,
			ContentKind:   prep.Kind,
			Warnings:      []string{},
		},
	}
	empty := strings.TrimSpace(prep.Markdown) == ""
	text := page.ContentKind == web.TextDocument
	switch {
	case empty && text:
		r.Metadata.Warnings = append(r.Metadata.Warnings, "The response was empty.")
	case empty:
		r.Metadata.Warnings = append(r.Metadata.Warnings, "No readable static page content was found. The page may need JavaScript, authentication, or browser cookies, which this tool does not have.")
	case !text && page.OriginalChars < smallPageChars:
		r.Metadata.Warnings = append(r.Metadata.Warnings, "Only a small amount of readable content was found. The page may load most of its content with JavaScript, or need authentication.")
	}
	if prep.Truncated {
		r.Metadata.Warnings = append(r.Metadata.Warnings, fmt.Sprintf("The content was truncated from %d to %d characters.", prep.OriginalChars, prep.ReturnedChars))
		r.Metadata.OriginalContentCharacters = prep.OriginalChars
		r.Metadata.ReturnedContentCharacters = prep.ReturnedChars
	}
	switch {
	case empty:
		r.Status = StatusEmpty
	case prep.Truncated || (!text && page.OriginalChars < smallPageChars):
		r.Status = StatusPartial
	default:
		r.Status = StatusComplete
	}
	return r
}
