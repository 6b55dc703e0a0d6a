package datasource

import (
	"context"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/datasource/eri"
)

// ClassicIntro opens the passages the classic process puts into the
// system prompt.
const ClassicIntro = "The following useful information will help you in processing the user prompt:"

// ClassicResult is what the classic process found for one message.
type ClassicResult struct {
	// System is the block to add to the system prompt of this request
	// only: the passages that fit, and a note per source that could not
	// be searched. It is empty when no source was usable, or every source
	// was searched and found nothing.
	System string
	// Assembly holds the passages that reached the model, their sources
	// and what they demand of the chat (see Assembly.Requirements).
	Assembly Assembly
	// Results are the searches, one per usable source.
	Results []SourceResult
	// Refused are the configured sources the provider may not use or the
	// chat does not search.
	Refused []Refusal
}

// Classic runs the classic retrieval process for one user message: the
// sources of the selection the provider may use are searched in parallel
// with the message as the query (page 1 of each), and the passages are
// filtered and brought into the same shape, within the same budget, as
// semantic_search's. It never searches with an empty message.
//
// Unlike the reference, the requirements are raised only for the sources
// whose passages reached the model (see Assembly.Requirements), as the
// seed demands of every retrieval, and a source that fails is named in the
// block as not searched rather than left out in silence.
func (s *Service) Classic(ctx context.Context, p Provider, sel Selection, message string, thread []eri.ContentBlock) ClassicResult {
	var out ClassicResult
	if strings.TrimSpace(message) == "" {
		return out
	}
	usable, refused := s.Usable(ctx, p, sel)
	out.Refused = refused
	if len(usable) == 0 {
		return out
	}
	out.Results = s.Search(ctx, usable, SearchRequest{Query: message, Page: 1, Thread: thread, Provider: p})
	out.Assembly = s.Assemble(ctx, out.Results, Budget)
	var notes []string
	for _, r := range out.Results {
		if r.NotSearched {
			notes = append(notes, fmt.Sprintf("The data source %q could not be searched right now, so its results are missing rather than empty.", r.Usable.Source.Name))
		}
	}
	if out.Assembly.LeftOut > 0 {
		notes = append(notes, fmt.Sprintf("%d further passages did not fit into the %d characters of this block and were left out.", out.Assembly.LeftOut, Budget))
	}
	if out.Assembly.Count == 0 && len(notes) == 0 {
		return out
	}
	var b strings.Builder
	b.WriteString(ClassicIntro)
	b.WriteString("\n\n")
	if out.Assembly.Count > 0 {
		b.WriteString(out.Assembly.Markdown)
	} else {
		b.WriteString("(No passage of the data sources matched the user's message.)\n")
	}
	for _, n := range notes {
		b.WriteString("\n")
		b.WriteString(n)
		b.WriteString("\n")
	}
	out.System = strings.TrimRight(b.String(), "\n")
	return out
}
