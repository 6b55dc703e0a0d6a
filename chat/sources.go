package chat

import "slices"

// The retrieval modes of a chat's data sources.
const (
	// RetrievalSemantic lets the model search with semantic_search.
	RetrievalSemantic = "SEMANTIC_SEARCH"
	// RetrievalEveryMessage searches with every user message (the classic
	// process).
	RetrievalEveryMessage = "EVERY_MESSAGE"
)

// DataSourceOptions say which data sources a chat searches and how. They
// are stored with the chat. The zero value follows the user's defaults.
type DataSourceOptions struct {
	// Set is true once the chat chose for itself; until then the user's
	// and the organization's defaults apply.
	Set bool `json:"set,omitempty"`
	// Disabled: the chat searches no data source.
	Disabled bool `json:"disabled,omitempty"`
	// Automatic: every data source the provider may use; otherwise only
	// the Selected ones.
	Automatic bool     `json:"automatic,omitempty"`
	Selected  []string `json:"selected,omitempty"`
	// Retrieval is RetrievalSemantic, RetrievalEveryMessage, or empty for
	// the default.
	Retrieval string `json:"retrieval,omitempty"`
}

// Equal reports whether two options say the same.
func (o DataSourceOptions) Equal(p DataSourceOptions) bool {
	return o.Set == p.Set && o.Disabled == p.Disabled && o.Automatic == p.Automatic && o.Retrieval == p.Retrieval && slices.Equal(o.Selected, p.Selected)
}

// DataSources returns the chat's data-source options.
func (t *Thread) DataSources() DataSourceOptions {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.dataSources
	o.Selected = slices.Clone(o.Selected)
	return o
}

// SetDataSources replaces the chat's data-source options.
func (t *Thread) SetDataSources(o DataSourceOptions) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o.Selected = slices.Clone(o.Selected)
	t.dataSources = o
}
