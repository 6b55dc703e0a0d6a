package loop

import (
	"strings"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/tool"
)

// Origin says where a source came from.
type Origin string

// The origins of sources.
const (
	// OriginProvider marks a citation the provider attached itself.
	OriginProvider Origin = "provider"
	// OriginTool marks material a local tool returned.
	OriginTool Origin = "tool"
	// OriginDataSource marks a passage of a data source that the classic
	// retrieval process put into the request.
	OriginDataSource Origin = "data_source"
)

// Source is a source attached to an answer.
type Source struct {
	Title  string `json:"title"`
	URL    string `json:"url"`
	Origin Origin `json:"origin"`
}

// ToolSourcesHeading is the heading under which the sources returned by
// tools are attached to an answer, apart from the provider's citations.
const ToolSourcesHeading = "Sources used by tools"

// DataSourcesHeading is the heading of the data sources' passages the
// classic retrieval process gave the model.
const DataSourcesHeading = "Sources from data sources"

// sourceSet collects sources across a run without duplicates: a source is
// skipped when an earlier one has the same URL or the same title. A source
// without a URL cannot be checked by anyone and is skipped too.
type sourceSet struct {
	list   []Source
	urls   map[string]struct{}
	titles map[string]struct{}
}

func (s *sourceSet) add(title, url string, origin Origin) {
	title, url = strings.TrimSpace(title), strings.TrimSpace(url)
	if url == "" {
		return
	}
	if s.urls == nil {
		s.urls = map[string]struct{}{}
		s.titles = map[string]struct{}{}
	}
	if _, dup := s.urls[url]; dup {
		return
	}
	// Blank titles say nothing about identity, so they never match.
	if title != "" {
		if _, dup := s.titles[title]; dup {
			return
		}
		s.titles[title] = struct{}{}
	}
	s.urls[url] = struct{}{}
	s.list = append(s.list, Source{Title: title, URL: url, Origin: origin})
}

func (s *sourceSet) addCitations(cs []llm.Citation) {
	for _, c := range cs {
		s.add(c.Title, c.URL, OriginProvider)
	}
}

func (s *sourceSet) addTool(ts []tool.Source) {
	for _, t := range ts {
		s.add(t.Title, t.URL, OriginTool)
	}
}

// ToolSources returns the sources that came from tools, in their order.
func ToolSources(sources []Source) []Source {
	var out []Source
	for _, s := range sources {
		if s.Origin == OriginTool {
			out = append(out, s)
		}
	}
	return out
}

// LocalSources returns the sources that came from Steward's side, tools
// and data sources, in their order: the ones an answer keeps.
func LocalSources(sources []Source) []Source {
	var out []Source
	for _, s := range sources {
		if s.Origin == OriginTool || s.Origin == OriginDataSource {
			out = append(out, s)
		}
	}
	return out
}

// RenderSources writes the sources of an answer as Markdown: the provider's
// citations under "Sources", the classic retrieval's passages under
// "Sources from data sources", then the tools' under the separate "Sources
// used by tools" heading. Each section appears only when it has entries; no
// sources give "". The text begins with a blank line so it can follow the
// answer directly.
func RenderSources(sources []Source) string {
	var b strings.Builder
	section := func(heading string, origin Origin) {
		first := true
		for _, s := range sources {
			if s.Origin != origin {
				continue
			}
			if first {
				b.WriteString("\n\n## ")
				b.WriteString(heading)
				b.WriteString("\n")
				first = false
			}
			b.WriteString("\n- ")
			if s.Title != "" {
				b.WriteString("[")
				b.WriteString(escapeLinkText(s.Title))
				b.WriteString("](")
				b.WriteString(escapeLinkURL(s.URL))
				b.WriteString(")")
			} else {
				b.WriteString("<")
				b.WriteString(escapeLinkURL(s.URL))
				b.WriteString(">")
			}
		}
	}
	section("Sources", OriginProvider)
	section(DataSourcesHeading, OriginDataSource)
	section(ToolSourcesHeading, OriginTool)
	return b.String()
}

// escapeLinkText keeps a title from closing the link or starting new
// Markdown structure: titles are written by whoever controls the page.
var linkTextEscaper = strings.NewReplacer(
	`\`, `\\`, `[`, `\[`, `]`, `\]`, "\n", " ", "\r", " ", "`", "\\`", "*", `\*`, "_", `\_`, "<", `\<`, ">", `\>`,
)

func escapeLinkText(s string) string { return linkTextEscaper.Replace(s) }

var linkURLEscaper = strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E", "\n", "", "\r", "")

func escapeLinkURL(s string) string { return linkURLEscaper.Replace(s) }
