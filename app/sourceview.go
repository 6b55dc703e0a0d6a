package app

import (
	"context"
	"os"
	"time"

	"github.com/stewardhq/steward/datasource"
	"github.com/stewardhq/steward/datasource/local"
)

// SourceView is a data source as `steward sources list` and the API show
// it; the usability fields are set only for a chosen provider.
type SourceView struct {
	ID                         string `json:"id"`
	Name                       string `json:"name"`
	Kind                       string `json:"kind"`
	Number                     int    `json:"number"`
	ConfiguredBy               string `json:"configured_by"`
	Description                string `json:"description"`
	MaxMatches                 int    `json:"max_matches"`
	LastPage                   int    `json:"last_page"`
	RequiredProviderConfidence string `json:"required_provider_confidence"`
	DataSecurity               string `json:"data_security"`
	Path                       string `json:"path,omitempty"`
	EmbeddingProvider          string `json:"embedding_provider,omitempty"`
	SearchMode                 string `json:"search_mode"`
	// EmbeddingRefused says why a source with an embedding provider is
	// indexed and searched by words only: the provider does not meet the
	// source's level under the organization's scheme.
	EmbeddingRefused string       `json:"embedding_refused,omitempty"`
	Address          string       `json:"address,omitempty"`
	AuthMethod       string       `json:"auth_method,omitempty"`
	RetrievalID      string       `json:"retrieval_id,omitempty"`
	Index            *SourceIndex `json:"index,omitempty"`
	Usable           *bool        `json:"usable,omitempty"`
	NotUsableBecause string       `json:"not_usable_because,omitempty"`
	NotUsableCode    string       `json:"not_usable_code,omitempty"`
}

// SourceIndex is what the local index holds of a source.
type SourceIndex struct {
	Indexed   bool            `json:"indexed"`
	Complete  bool            `json:"complete"`
	Documents int             `json:"documents"`
	Chunks    int             `json:"chunks"`
	Embedded  int             `json:"embedded"`
	Model     string          `json:"model,omitempty"`
	Bytes     int64           `json:"bytes"`
	LastRun   string          `json:"last_run,omitempty"`
	Skipped   []local.Skipped `json:"skipped"`
}

// SourceViewOf describes a source without its index.
func (a *App) SourceViewOf(s datasource.Source) SourceView {
	r := SourceView{ID: s.ID, Name: s.Name, Kind: string(s.Kind), Number: s.Number, ConfiguredBy: "your settings", Description: s.Description,
		MaxMatches: s.MaxMatches, LastPage: datasource.LastPage(s), RequiredProviderConfidence: s.RequiredConfidence.String(), DataSecurity: s.Security.String(),
		Path: s.Path, EmbeddingProvider: s.Embedding, RetrievalID: s.RetrievalID}
	switch {
	case s.Org:
		r.ConfiguredBy = "organization (" + s.Plugin + ")"
	case s.Plugin != "":
		r.ConfiguredBy = "local plugin (" + s.Plugin + ")"
	}
	switch {
	case s.Kind == datasource.ERI:
		r.SearchMode = "by the server"
		if u, err := s.BaseURL(); err == nil {
			r.Address = u.String()
		}
		r.AuthMethod = string(s.Auth)
	case s.Embedding == "":
		r.SearchMode = "words only"
	default:
		r.SearchMode = "meaning and words"
		if err := a.SourceEmbeddingRefusal(s); err != nil {
			r.EmbeddingRefused = err.Error()
			r.SearchMode = "words only, because " + r.EmbeddingRefused
		}
	}
	return r
}

// SourceIndexOf describes what the index holds of a source.
func SourceIndexOf(st local.Status) *SourceIndex {
	j := &SourceIndex{Indexed: st.Indexed, Complete: st.Complete, Documents: st.Documents, Chunks: st.Chunks, Embedded: st.Embedded, Model: st.Model, Bytes: st.Bytes, Skipped: st.Skipped}
	if !st.LastRun.IsZero() {
		j.LastRun = st.LastRun.Local().Format(time.RFC3339)
	}
	if j.Skipped == nil {
		j.Skipped = []local.Skipped{}
	}
	return j
}

// LocalSourceStatus reads what the document index holds of a source,
// without creating the index when it does not exist yet.
func (a *App) LocalSourceStatus(ctx context.Context, id string) (local.Status, error) {
	if _, err := os.Stat(a.DocIndexPath()); err != nil {
		return local.Status{}, nil
	}
	ix, err := a.DocIndex(ctx)
	if err != nil {
		return local.Status{}, err
	}
	return ix.Status(ctx, id)
}

// SourceViews lists the data sources with what the local index holds of
// each; with a provider (p not nil), whether it may use each and why not,
// by the rule semantic_search and the classic process apply. Sources that
// cannot be read are returned as problems.
func (a *App) SourceViews(ctx context.Context, p *ResolvedProvider) ([]SourceView, []error) {
	sources, problems := a.DataSources()
	rows := []SourceView{}
	for _, s := range sources {
		r := a.SourceViewOf(s)
		if s.Kind.Local() {
			if st, err := a.LocalSourceStatus(ctx, s.ID); err == nil {
				r.Index = SourceIndexOf(st)
			}
		}
		rows = append(rows, r)
	}
	if p == nil {
		return rows, problems
	}
	usable, refused := a.SourceServiceForUser().Usable(ctx, datasource.Provider{Confidence: p.Confidence, Trusted: p.Trusted}, datasource.Selection{Automatic: true})
	for i := range rows {
		no := false
		rows[i].Usable = &no
		for _, u := range usable {
			if u.Source.ID == rows[i].ID {
				yes := true
				rows[i].Usable = &yes
			}
		}
		for _, r := range refused {
			if r.Source.ID == rows[i].ID {
				rows[i].NotUsableBecause, rows[i].NotUsableCode = r.Reason, r.Code
			}
		}
	}
	return rows, problems
}
