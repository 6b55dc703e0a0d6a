package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/registry"
)

// addSourceFlags adds the data-source flags of ask and chat.
func addSourceFlags(cmd *cobra.Command) {
	cmd.Flags().String("sources", "", "data sources this chat searches: comma-separated IDs, 'all' (every source the provider may use) or 'none'; stored with the chat (default: your defaults)")
	cmd.Flags().String("retrieval", "", "how this chat searches its data sources: semantic (the model searches with semantic_search) or classic (every message is searched); stored with the chat")
}

// sourceChoice is what the data-source flags of ask and chat say.
type sourceChoice struct {
	sources, retrieval       string
	setSources, setRetrieval bool
}

// parseSourceFlags reads and checks the data-source flags before anything
// else runs, so a mistake is a usage error.
func parseSourceFlags(cmd *cobra.Command) (sourceChoice, error) {
	f := cmd.Flags()
	var c sourceChoice
	c.setSources, c.setRetrieval = f.Changed("sources"), f.Changed("retrieval")
	c.sources, _ = f.GetString("sources")
	c.retrieval, _ = f.GetString("retrieval")
	if c.setSources {
		switch strings.ToLower(strings.TrimSpace(c.sources)) {
		case "all", "none":
		default:
			if len(splitList(c.sources)) == 0 {
				return c, usagef("--sources %q: give data source IDs separated by commas, 'all' or 'none'", c.sources)
			}
		}
	}
	if c.setRetrieval {
		switch strings.ToLower(strings.TrimSpace(c.retrieval)) {
		case "semantic", "semantic_search", "classic", "every_message":
		default:
			return c, usagef("--retrieval %q: use semantic (the model searches with semantic_search) or classic (every message is searched)", c.retrieval)
		}
	}
	return c, nil
}

// apply sets the chat's data-source options from the flags, starting from
// what the chat had (or the defaults), and checks them against the
// configured sources and what the organization locked. It changes nothing
// when neither flag was given.
func (c sourceChoice) apply(a *app.App, t *chat.Thread) error {
	if !c.setSources && !c.setRetrieval {
		return nil
	}
	o := t.DataSources()
	if !o.Set {
		o = a.EffectiveDataSources(o)
		o.Set = true
	}
	if c.setSources {
		switch strings.ToLower(strings.TrimSpace(c.sources)) {
		case "all":
			o.Disabled, o.Automatic, o.Selected = false, true, nil
		case "none":
			o.Disabled, o.Automatic, o.Selected = true, false, nil
		default:
			o.Disabled, o.Automatic, o.Selected = false, false, splitList(c.sources)
		}
	}
	if c.setRetrieval {
		switch strings.ToLower(strings.TrimSpace(c.retrieval)) {
		case "semantic", "semantic_search":
			o.Retrieval = chat.RetrievalSemantic
		default:
			o.Retrieval = chat.RetrievalEveryMessage
		}
	}
	if err := a.CheckDataSourceChoice(o); err != nil {
		return usageError{err}
	}
	t.SetDataSources(o)
	return nil
}

// sourceNotices tells the user, once per session, what they should know
// about how the data sources were searched: a source searched by words
// only, and every source that could not be searched.
type sourceNotices struct {
	wordsOnly map[string]bool
}

func (n *sourceNotices) report(w io.Writer, r *app.Retrieval) {
	if r == nil {
		return
	}
	if n.wordsOnly == nil {
		n.wordsOnly = map[string]bool{}
	}
	for _, u := range r.Usable {
		if u.WordsOnly && !n.wordsOnly[u.Source.ID] {
			n.wordsOnly[u.Source.ID] = true
			if u.EmbeddingRefused != "" {
				fmt.Fprintf(w, "[data source] %s is searched by words only: %s.\n", u.Source.Name, u.EmbeddingRefused)
			} else {
				fmt.Fprintf(w, "[data source] %s has no embedding provider and is searched by words only.\n", u.Source.Name)
			}
		}
	}
	if r.Classic == nil {
		return
	}
	for _, res := range r.Classic.Results {
		if res.NotSearched {
			fmt.Fprintf(w, "[data source] %s could not be searched: %s\n", res.Usable.Source.Name, cliError(res.Err))
		}
	}
	if r.Classic.Assembly.Count > 0 {
		fmt.Fprintf(w, "[data source] %d passages from %d data sources were added to this message (the classic process", r.Classic.Assembly.Count, len(r.Classic.Assembly.Contributed))
		if r.Reason != registry.NoBlock && r.Options.Retrieval == chat.RetrievalSemantic {
			fmt.Fprintf(w, "; semantic_search cannot be offered: %s", r.Reason)
		}
		fmt.Fprintln(w, ")")
	}
}

// contextToolRow says whether a tool that offers itself from the chat
// would be offered, and why not.
type contextToolRow struct {
	ID                string   `json:"id"`
	Offered           *bool    `json:"offered,omitempty"`
	NotOfferedBecause string   `json:"not_offered_because,omitempty"`
	Detail            string   `json:"detail"`
	RetrievalMode     string   `json:"retrieval_mode"`
	DataSources       []string `json:"data_sources"`
	NotUsable         []string `json:"not_usable"`
}

// contextToolRows explains semantic_search: for a provider, whether a new
// chat would offer it and why not; without one, what it depends on.
func contextToolRows(cmd *cobra.Command, a *app.App, rp *app.ResolvedProvider) []contextToolRow {
	row := contextToolRow{ID: registry.SemanticSearchID, DataSources: []string{}, NotUsable: []string{}}
	if rp == nil {
		sources, _ := a.DataSources()
		row.RetrievalMode = a.EffectiveDataSources(chat.DataSourceOptions{}).Retrieval
		switch {
		case !a.SourcesEnabled():
			row.Detail = "offers itself in a chat with data sources; data sources are a preview: switch on PRE_RAG_2024"
		case len(sources) == 0:
			row.Detail = "offers itself in a chat with data sources; none is configured (steward sources add)"
		default:
			row.Detail = fmt.Sprintf("offers itself in a chat with the %d configured data sources a provider may use; name a provider to see whether it would be offered", len(sources))
		}
		return []contextToolRow{row}
	}
	x := a.ExplainSemanticSearch(cmd.Context(), nil, rp)
	row.Offered, row.Detail, row.NotOfferedBecause = &x.Offered, x.Detail, x.Reason
	row.RetrievalMode = x.Mode.String()
	for _, u := range x.Usable {
		row.DataSources = append(row.DataSources, u.Source.ID)
	}
	for _, r := range x.Refused {
		row.NotUsable = append(row.NotUsable, r.Source.ID+": "+r.Reason)
	}
	if x.Offered {
		row.Detail = fmt.Sprintf("offered with %d data sources", len(x.Usable))
	}
	return []contextToolRow{row}
}

func writeContextTools(e env, rows []contextToolRow, rp *app.ResolvedProvider) {
	for _, r := range rows {
		fmt.Fprintf(e.stdout, "%-18s %-13s offers itself from the chat (CONTEXT)\n", r.ID, "context")
		switch {
		case r.Offered == nil:
			fmt.Fprintf(e.stdout, "%-18s %s\n", "", r.Detail)
		case *r.Offered:
			fmt.Fprintf(e.stdout, "%-18s offered to %s with: %s\n", "", rp.Title, strings.Join(r.DataSources, ", "))
		default:
			fmt.Fprintf(e.stdout, "%-18s not offered to %s: %s (%s)\n", "", rp.Title, r.NotOfferedBecause, r.Detail)
			if r.RetrievalMode == registry.EveryMessage.String() && len(r.DataSources) > 0 {
				fmt.Fprintf(e.stdout, "%-18s every message searches instead: %s\n", "", strings.Join(r.DataSources, ", "))
			}
		}
		for _, n := range r.NotUsable {
			fmt.Fprintf(e.stdout, "%-18s not usable: %s\n", "", n)
		}
	}
}
