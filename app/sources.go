package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/datasource"
	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/datasource/local"
	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/tools/semantic"
)

// sourceParts are opened on first use: the document index is a SQLite
// database a run without data sources never needs.
type sourceParts struct {
	once    sync.Once
	service *datasource.Service

	indexOnce sync.Once
	index     *local.Index
	indexErr  error

	// orgProblemsDone is set once the organization's sources were checked.
	orgProblemsOnce sync.Once
}

// DocIndexPath is the local document index, next to the mail index.
func (a *App) DocIndexPath() string { return filepath.Join(a.DataDir, "docs.db") }

// SourcesEnabled reports whether data sources are switched on: they are
// behind the preview PRE_RAG_2024, as in the reference.
func (a *App) SourcesEnabled() bool { return a.Policy.PreviewEnabled(settings.PreviewRAG) }

// luaFields names the fields of datasource.Source as CONFIG["DATA_SOURCES"]
// writes them, for problems that point at a plugin.
var luaFields = map[string]string{
	"id": "Id", "name": "Name", "kind": "Type", "description": "Description", "max_matches": "MaxMatches",
	"required_provider_confidence": "RequiredProviderConfidence", "data_security": "SecurityPolicy", "path": "Path",
	"embedding_provider": "EmbeddingProviderId", "max_chunk_tokens": "MaxChunkTokens", "chunk_overlap_tokens": "ChunkOverlapTokens",
	"hostname": "Hostname", "port": "Port", "auth_method": "AuthMethod", "username": "Username",
	"username_password_mode": "UsernamePasswordMode", "retrieval_id": "SelectedRetrievalId",
}

// orgSecretPrefix and userSecretPrefix name the secrets of ERI sources.
const (
	orgSourceSecret  = "org-datasource::"
	userSourceSecret = "datasource::"
)

// orgSource builds an organization's data source; the error points at the
// plugin's entry and names the field as the plugin writes it.
func orgSource(c config.DataSourceConfig, n int) (datasource.Source, error) {
	kind, err := datasource.ParseKind(c.Type)
	if err != nil {
		return datasource.Source{}, err
	}
	s := datasource.Source{ID: c.ID, Name: c.Name, Kind: kind, Number: n, Description: c.Description, MaxMatches: c.MaxMatches,
		Path: c.Path, Embedding: c.EmbeddingProviderID, MaxChunkTokens: c.MaxChunkTokens, Hostname: c.Hostname, Port: c.Port,
		Auth: datasource.AuthMethod(c.AuthMethod), Username: c.Username, UsernameMode: datasource.UsernameMode(c.UsernamePasswordMode),
		RetrievalID: c.SelectedRetrievalID, Org: c.Org, Plugin: c.Plugin}
	if s.Path != "" {
		s.Path = filepath.Clean(s.Path)
	}
	if err := fillCommon(&s, c.RequiredProviderConfidence, c.SecurityPolicy, c.ChunkOverlapTokens); err != nil {
		return s, err
	}
	if s.Kind == datasource.ERI && s.Auth != datasource.AuthNone {
		s.SecretRef = orgSourceSecret + s.ID
	}
	return s, s.Validate()
}

// userSource builds one of the user's data sources.
func userSource(u config.UserDataSource, n int) (datasource.Source, error) {
	kind, err := datasource.ParseKind(u.Kind)
	if err != nil {
		return datasource.Source{ID: u.ID}, &datasource.FieldError{SourceID: u.ID, Field: "kind", Value: fmt.Sprintf("%q", u.Kind), Allowed: "use LOCAL_DIRECTORY, LOCAL_FILE or ERI_V1"}
	}
	s := datasource.Source{ID: u.ID, Name: u.Name, Kind: kind, Number: n, Description: u.Description, MaxMatches: u.MaxMatches,
		Path: u.Path, Embedding: u.EmbeddingProvider, MaxChunkTokens: u.MaxChunkTokens, Hostname: u.Hostname, Port: u.Port,
		Auth: datasource.AuthMethod(strings.ToUpper(u.AuthMethod)), Username: u.Username, UsernameMode: datasource.UsernameMode(strings.ToUpper(u.UsernamePasswordMode)),
		RetrievalID: u.RetrievalID}
	if err := fillCommon(&s, u.RequiredProviderConfidence, u.DataSecurity, u.ChunkOverlapTokens); err != nil {
		return s, err
	}
	if s.Kind == datasource.ERI && s.Auth != datasource.AuthNone {
		s.SecretRef = userSourceSecret + s.ID
	}
	return s, s.Validate()
}

// fillCommon reads what both kinds of configuration write as text: the
// level (HIGH for a local source, NONE for an ERI server when unset), the
// data security (ALLOW_ANY when unset), the default page size and the
// overlap (unset: the default; 0: none).
func fillCommon(s *datasource.Source, level, security string, overlap *int) error {
	if s.MaxMatches == 0 {
		s.MaxMatches = datasource.DefaultMaxMatches
	}
	switch {
	case strings.TrimSpace(level) != "":
		c, err := policy.ParseConfidence(level)
		if err != nil {
			return &datasource.FieldError{SourceID: s.ID, Field: "required_provider_confidence", Value: fmt.Sprintf("%q", level), Allowed: "use NONE, UNTRUSTED, UNKNOWN, VERY_LOW, LOW, MODERATE, MEDIUM or HIGH"}
		}
		s.RequiredConfidence = c
	case s.Kind.Local():
		s.RequiredConfidence = policy.High
	default:
		s.RequiredConfidence = policy.None
	}
	s.Security = policy.AllowAny
	if strings.TrimSpace(security) != "" {
		d, err := policy.ParseDataSecurity(security)
		if err != nil || d == policy.NotSpecified {
			return &datasource.FieldError{SourceID: s.ID, Field: "data_security", Value: fmt.Sprintf("%q", security), Allowed: "use ALLOW_ANY or SELF_HOSTED"}
		}
		s.Security = d
	}
	if overlap != nil {
		s.ChunkOverlapTokens = *overlap
		if *overlap == 0 {
			s.ChunkOverlapTokens = -1 // none, as datasource/local reads it
		}
	}
	return nil
}

// DataSources returns every data source: the organization's, numbered
// first, then the user's. A source whose configuration is wrong is left
// out and reported: an organization's in the configuration problems (with
// its plugin's file and line), the user's in the returned problems. A
// user's source cannot take the ID of an organization's: the
// organization's definition is locked.
func (a *App) DataSources() ([]datasource.Source, []error) {
	var out []datasource.Source
	var userProblems []error
	var orgProblems []config.Problem
	n := 0
	orgIDs := map[string]string{}
	for _, c := range a.Org.DataSources {
		n++
		s, err := orgSource(c, n)
		if err != nil {
			msg := err.Error()
			var fe *datasource.FieldError
			if errors.As(err, &fe) {
				e := *fe
				if name, ok := luaFields[e.Field]; ok {
					e.Field = name
				}
				msg = "DATA_SOURCES: " + e.Error()
			}
			orgProblems = append(orgProblems, config.Problem{File: c.File, Line: c.Line, Message: msg})
			continue
		}
		if s.Org {
			orgIDs[strings.ToLower(s.ID)] = c.Plugin
		}
		out = append(out, s)
	}
	for _, u := range a.User.DataSources {
		n++
		if plugin, taken := orgIDs[strings.ToLower(u.ID)]; taken {
			userProblems = append(userProblems, fmt.Errorf("%s: data source %s: the organization plugin %q defines a data source with this ID, and its definition is locked: yours is ignored; remove it with steward sources remove %s", config.UserSettingsPath(a.ConfigDir), u.ID, plugin, u.ID))
			continue
		}
		s, err := userSource(u, n)
		if err != nil {
			userProblems = append(userProblems, fmt.Errorf("%s: %w", config.UserSettingsPath(a.ConfigDir), err))
			continue
		}
		out = append(out, s)
	}
	// IDs and names must be unique; the later of two is left out.
	kept := out[:0]
	for _, s := range out {
		if errs := datasource.ValidateAll(append(append([]datasource.Source(nil), kept...), s)); len(errs) > 0 {
			err := errs[len(errs)-1]
			if s.Plugin != "" {
				orgProblems = append(orgProblems, config.Problem{File: a.orgFile(s.ID), Message: "DATA_SOURCES: " + err.Error()})
			} else {
				userProblems = append(userProblems, fmt.Errorf("%s: %w", config.UserSettingsPath(a.ConfigDir), err))
			}
			continue
		}
		kept = append(kept, s)
	}
	a.sources.orgProblemsOnce.Do(func() { a.Org.Problems = append(a.Org.Problems, orgProblems...) })
	return kept, userProblems
}

func (a *App) orgFile(id string) string {
	for _, c := range a.Org.DataSources {
		if c.ID == id {
			return c.File
		}
	}
	return "plugin"
}

// dataSourceList is DataSources without the problems, for the service.
func (a *App) dataSourceList() []datasource.Source {
	s, _ := a.DataSources()
	return s
}

// sourceEmbedding resolves a local source's embedding provider; nil for a
// source searched by words only.
func (a *App) sourceEmbedding(src datasource.Source) (*embed.Config, error) {
	if src.Embedding == "" {
		return nil, nil
	}
	e := a.userEmbedding(src.Embedding)
	if e == nil {
		return nil, fmt.Errorf("embedding provider %q: use ollama:<model>[@<url>], openai:<model>, or the ID of an organization embedding provider", src.Embedding)
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("embedding provider %q: %w", src.Embedding, err)
	}
	return e, nil
}

// sourceEmbedder builds the embedding client of a local source, the only
// way Steward gets one, and only when the provider may receive the
// source's documents and queries: when the organization's scheme rates it
// below the source's level (datasource.Source.EmbeddingRefusal), there is
// no client and refused says why, so the source is indexed and searched by
// words only. A source without an embedding provider gets nil, nil, nil.
func (a *App) sourceEmbedder(ctx context.Context, src datasource.Source) (emb embed.Embedder, refused, err error) {
	e, err := a.sourceEmbedding(src)
	if err != nil || e == nil {
		return nil, nil, err
	}
	if refused := src.EmbeddingRefusal(a.Org.Scheme(), e.Provider); refused != nil {
		return nil, refused, nil
	}
	emb, err = a.embedders(ctx, mailbox.Config{ID: src.ID, Embedding: e})
	return emb, nil, err
}

// SourceEmbeddingRefusal says why a local source's embedding provider may
// receive neither its documents nor the queries asked of it, or nil when
// it may (or the source has none, or it does not resolve: indexing says
// so).
func (a *App) SourceEmbeddingRefusal(src datasource.Source) error {
	e, err := a.sourceEmbedding(src)
	if err != nil || e == nil {
		return nil
	}
	return src.EmbeddingRefusal(a.Org.Scheme(), e.Provider)
}

// SourceService decides over the data sources and searches them for the
// tools and the classic process.
func (a *App) SourceService() *datasource.Service {
	a.sources.once.Do(func() { a.sources.service = a.newSourceService(a.SourcesEnabled) })
	return a.sources.service
}

func (a *App) newSourceService(enabled func() bool) *datasource.Service {
	return datasource.NewService(datasource.Options{
		Sources: a.dataSourceList,
		Enabled: enabled,
		Scheme:  a.Org.Scheme(),
		EmbeddingProvider: func(src datasource.Source) (string, error) {
			e, err := a.sourceEmbedding(src)
			if err != nil {
				return "", err
			}
			if e == nil {
				return "", errors.New("the source has no embedding provider")
			}
			return e.Provider, nil
		},
		Local:  localIndex{a},
		ERI:    a.eriClient,
		Guard:  a.Filter(),
		Logger: a.Logger,
	})
}

// DocIndex opens the local document index once.
func (a *App) DocIndex(ctx context.Context) (*local.Index, error) {
	a.sources.indexOnce.Do(func() {
		a.sources.index, a.sources.indexErr = local.Open(ctx, a.DocIndexPath(), a.indexOptions...)
		if a.sources.indexErr != nil {
			a.sources.indexErr = fmt.Errorf("opening the document index %s: %w", a.DocIndexPath(), a.sources.indexErr)
		}
	})
	return a.sources.index, a.sources.indexErr
}

// closeSources closes the document index if it was opened.
func (a *App) closeSources() error {
	if a.sources.index != nil {
		return a.sources.index.Close()
	}
	return nil
}

// localIndex searches folder and file sources in the document index.
type localIndex struct{ a *App }

// Search asks the index for a page of a source. A source never indexed is
// an error, so it is reported as not searched rather than as empty; when
// the search by meaning cannot run (the embedding provider fails, the
// source was indexed with another model), the words' hits come back and
// the model is told.
func (l localIndex) Search(ctx context.Context, src datasource.Source, query string, offset, limit int) (datasource.LocalResult, error) {
	var res datasource.LocalResult
	ix, err := l.a.DocIndex(ctx)
	if err != nil {
		return res, err
	}
	st, err := ix.Status(ctx, src.ID)
	if err != nil {
		return res, err
	}
	if !st.Indexed {
		return res, fmt.Errorf("data source %s has not been indexed yet (steward sources index %s)", src.ID, src.ID)
	}
	if !st.Complete {
		res.Issues = append(res.Issues, "The last indexing run of this data source did not complete, so some documents may be missing.")
	}
	var emb embed.Embedder
	if src.Embedding != "" {
		// A provider the source may not trust gets no query: the search
		// goes by words (the service told the model why).
		var refused error
		if emb, refused, err = l.a.sourceEmbedder(ctx, src); err != nil {
			emb = nil
			res.Issues = append(res.Issues, "The embedding provider of this data source could not be used, so it was searched by words only.")
		} else if refused != nil {
			l.a.Logger.Info("a data source was searched by words only: its embedding provider does not meet its level", "data_source", src.ID)
		}
	}
	hits, more, err := ix.Search(ctx, src.ID, local.Query{Text: query, Limit: limit, Offset: offset, Embedder: emb})
	var partial *local.PartialError
	switch {
	case errors.As(err, &partial):
		res.WordsOnly = true
		if emb != nil {
			res.Issues = append(res.Issues, "This data source could be searched by words only this time ("+partial.Reason+"): use the words its documents would contain.")
		}
		l.a.Logger.Warn("a data source was searched by words only", "data_source", src.ID, "error", err)
	case errors.Is(err, local.ErrNotIndexed):
		return datasource.LocalResult{}, fmt.Errorf("data source %s has not been indexed yet (steward sources index %s)", src.ID, src.ID)
	case err != nil:
		return datasource.LocalResult{}, err
	default:
		res.WordsOnly = emb == nil
	}
	res.HasMore = more
	for _, h := range hits {
		res.Hits = append(res.Hits, datasource.LocalHit{Path: h.Path, Chunk: h.Chunk, Page: h.Page, Text: h.Text})
	}
	return res, nil
}

// sourceSecret returns the password or token of an ERI source: an
// organization's decrypted one, or the user's from the secret store.
func (a *App) sourceSecret(src datasource.Source) (string, error) {
	if id, ok := strings.CutPrefix(src.SecretRef, orgSourceSecret); ok {
		for _, c := range a.Org.DataSources {
			if c.ID == id && c.Secret != "" {
				return c.Secret, nil
			}
		}
		return "", fmt.Errorf("data source %s: the organization's secret could not be decrypted (see steward config check)", src.ID)
	}
	v, ok, err := a.Secrets.Get(src.SecretRef, "secret")
	if err != nil {
		return "", fmt.Errorf("data source %s: reading its secret from %s: %w", src.ID, a.Secrets.Where(), err)
	}
	if !ok || v == "" {
		return "", fmt.Errorf("data source %s: no password or token is stored: add the source again with the secret on stdin", src.ID)
	}
	return v, nil
}

// SetSourceSecret stores the password or token of a user's ERI source.
func (a *App) SetSourceSecret(id, secret string) error {
	return a.Secrets.Set(userSourceSecret+id, "secret", secret)
}

// eriSetting names an ERI source's address in errors.
func eriSetting(src datasource.Source) string {
	if src.Org {
		return fmt.Sprintf("Hostname of data source %s in the organization plugin %q", src.ID, src.Plugin)
	}
	return fmt.Sprintf("the hostname of data source %s", src.ID)
}

// eriClient builds the client of an ERI source with its sign-in.
func (a *App) eriClient(_ context.Context, src datasource.Source) (*eri.Client, error) {
	u, err := src.BaseURL()
	if err != nil {
		return nil, err
	}
	cr := eri.Credentials{Method: eri.AuthMethod(src.Auth), Username: src.Username}
	if src.Auth == datasource.AuthToken || src.Auth == datasource.AuthUsernamePassword {
		if cr.Secret, err = a.sourceSecret(src); err != nil {
			return nil, err
		}
	}
	if src.UsernameMode == datasource.OSUsernameSharedPassword {
		me, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("data source %s signs in with the operating-system user name, which could not be read: %w", src.ID, err)
		}
		cr.Username = me.Username
	}
	return eri.New(eri.Options{BaseURL: u, Credentials: cr, HTTPClient: a.HTTPClient, Setting: eriSetting(src)})
}

// EffectiveDataSources resolves a chat's data-source options: the chat's
// own choices, else the user's defaults, else the organization's defaults;
// an organization's locked value always wins. Semantic search is the
// default retrieval mode, and every source the provider may use the
// default selection.
func (a *App) EffectiveDataSources(o chat.DataSourceOptions) chat.DataSourceOptions {
	out := chat.DataSourceOptions{Set: o.Set, Automatic: true, Retrieval: chat.RetrievalSemantic}
	orgIDs, idsSet := a.Org.Settings["DataChat.PreselectedDataSourceIds"]
	orgMode, modeSet := a.Org.Settings["DataChat.PreselectedDataSourcesRetrievalMode"]
	if idsSet && !orgIDs.Locked {
		if ids := a.Org.StringList("DataChat.PreselectedDataSourceIds"); len(ids) > 0 {
			out.Automatic, out.Selected = false, ids
		}
	}
	if modeSet && !orgMode.Locked {
		out.Retrieval = strings.ToUpper(fmt.Sprint(orgMode.Value))
	}
	d := a.User.DataSourceDefaults
	if d.Disabled {
		out.Disabled = true
	}
	if len(d.Selected) > 0 {
		out.Automatic, out.Selected = false, slices.Clone(d.Selected)
	}
	if d.Retrieval != "" {
		out.Retrieval = strings.ToUpper(d.Retrieval)
	}
	if o.Set {
		out.Disabled, out.Automatic, out.Selected = o.Disabled, o.Automatic, slices.Clone(o.Selected)
		if o.Retrieval != "" {
			out.Retrieval = o.Retrieval
		}
	}
	if idsSet && orgIDs.Locked {
		ids := a.Org.StringList("DataChat.PreselectedDataSourceIds")
		out.Automatic, out.Selected = len(ids) == 0, ids
	}
	if modeSet && orgMode.Locked {
		out.Retrieval = strings.ToUpper(fmt.Sprint(orgMode.Value))
	}
	if out.Retrieval != chat.RetrievalEveryMessage {
		out.Retrieval = chat.RetrievalSemantic
	}
	return out
}

// CheckDataSourceChoice refuses a chat's data-source choice that names an
// unknown source or goes against what the organization locked.
func (a *App) CheckDataSourceChoice(o chat.DataSourceOptions) error {
	if !o.Set {
		return nil
	}
	if m, ok := a.Org.Settings["DataChat.PreselectedDataSourcesRetrievalMode"]; ok && m.Locked && o.Retrieval != "" && !strings.EqualFold(fmt.Sprint(m.Value), o.Retrieval) {
		return fmt.Errorf("the organization plugin %q locks the retrieval mode to %s: the chat cannot search otherwise", m.Plugin, strings.ToUpper(fmt.Sprint(m.Value)))
	}
	if m, ok := a.Org.Settings["DataChat.PreselectedDataSourceIds"]; ok && m.Locked && (o.Automatic || len(o.Selected) > 0 || o.Disabled) {
		return fmt.Errorf("the organization plugin %q locks which data sources a chat searches (%s)", m.Plugin, strings.Join(a.Org.StringList("DataChat.PreselectedDataSourceIds"), ", "))
	}
	sources, _ := a.DataSources()
	var known []string
	for _, s := range sources {
		known = append(known, s.ID)
	}
	for _, id := range o.Selected {
		if !slices.Contains(known, id) {
			if len(known) == 0 {
				return fmt.Errorf("there is no data source %q: no data source is configured (steward sources add)", id)
			}
			return fmt.Errorf("there is no data source %q; the data sources are: %s", id, strings.Join(known, ", "))
		}
	}
	return nil
}

// sourceProvider is what deciding over data sources needs of p.
func sourceProvider(p *ResolvedProvider) datasource.Provider {
	return datasource.Provider{Confidence: p.Confidence, Trusted: p.Trusted}
}

// ErrOrgSource is wrapped by the error of changing a data source that an
// organization plugin defines.
var ErrOrgSource = errors.New("the data source is defined by an organization plugin")

// AddSource adds one of the user's data sources, with the secret of an ERI
// source, after checking it the way it will be read.
func (a *App) AddSource(u config.UserDataSource, secret string) (datasource.Source, error) {
	sources, _ := a.DataSources()
	for _, s := range sources {
		if strings.EqualFold(s.ID, u.ID) {
			if s.Org {
				return datasource.Source{}, fmt.Errorf("%w (%s): a data source with the ID %q exists already", ErrOrgSource, s.Plugin, u.ID)
			}
			if s.Plugin != "" {
				return datasource.Source{}, fmt.Errorf("the local plugin %q defines a data source with the ID %q already", s.Plugin, u.ID)
			}
			return datasource.Source{}, fmt.Errorf("a data source with the ID %q exists already: remove it first (steward sources remove %s)", u.ID, u.ID)
		}
	}
	s, err := userSource(u, len(sources)+1)
	if err != nil {
		return s, err
	}
	if errs := datasource.ValidateAll(append(sources, s)); len(errs) > 0 {
		return s, errs[len(errs)-1]
	}
	if s.SecretRef != "" {
		if secret == "" {
			return s, fmt.Errorf("data source %s signs in with %s: give the password or token on stdin", s.ID, s.Auth)
		}
		if err := a.SetSourceSecret(s.ID, secret); err != nil {
			return s, fmt.Errorf("storing the secret in %s: %w", a.Secrets.Where(), err)
		}
	}
	a.User.DataSources = append(a.User.DataSources, u)
	if err := a.SaveUserSettings(); err != nil {
		return s, err
	}
	return s, nil
}

// RemoveSource removes one of the user's data sources: its settings, its
// stored secret and everything the document index holds of it. A source
// an organization plugin defines is refused.
func (a *App) RemoveSource(ctx context.Context, id string) error {
	for _, c := range a.Org.DataSources {
		if strings.EqualFold(c.ID, id) && c.Org {
			return fmt.Errorf("%w (%s): remove it there, or ask your administrator", ErrOrgSource, c.Plugin)
		}
		if strings.EqualFold(c.ID, id) {
			return fmt.Errorf("the data source %s is defined by the local plugin %q (%s): remove it there", id, c.Plugin, c.File)
		}
	}
	idx := -1
	for i, u := range a.User.DataSources {
		if u.ID == id {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("there is no data source %q in your settings", id)
	}
	a.User.DataSources = append(a.User.DataSources[:idx:idx], a.User.DataSources[idx+1:]...)
	for i, s := range a.User.DataSourceDefaults.Selected {
		if s == id {
			a.User.DataSourceDefaults.Selected = append(a.User.DataSourceDefaults.Selected[:i:i], a.User.DataSourceDefaults.Selected[i+1:]...)
			break
		}
	}
	if err := a.SaveUserSettings(); err != nil {
		return err
	}
	a.SourceService().Forget(id)
	if err := a.Secrets.Delete(userSourceSecret+id, "secret"); err != nil {
		return fmt.Errorf("the data source is removed from your settings, but its secret could not be deleted from %s: %w", a.Secrets.Where(), err)
	}
	if _, err := os.Stat(a.DocIndexPath()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ix, err := a.DocIndex(ctx)
	if err != nil {
		return fmt.Errorf("the data source is removed from your settings, but the document index could not be opened to delete its documents: %w", err)
	}
	if err := ix.Remove(ctx, id); err != nil {
		return fmt.Errorf("the data source is removed from your settings, but its documents could not be deleted from the index: %w", err)
	}
	return nil
}

// IndexStats is what indexing a local source did.
type IndexStats struct {
	local.Stats
	// EmbeddingRefused says why nothing was embedded although the source
	// has an embedding provider: the provider does not meet the source's
	// level under the organization's scheme, so its documents never went
	// there and the source is indexed for search by words only.
	EmbeddingRefused string
}

// IndexSource brings the document index of a local source up to date.
// Without an embedding provider, or with one the source's level does not
// let receive its documents, the index holds words only.
func (a *App) IndexSource(ctx context.Context, src datasource.Source, progress func(local.Progress)) (IndexStats, error) {
	if !src.Kind.Local() {
		return IndexStats{}, fmt.Errorf("data source %s is an ERI server: its server indexes it", src.ID)
	}
	ix, err := a.DocIndex(ctx)
	if err != nil {
		return IndexStats{}, err
	}
	emb, refused, err := a.sourceEmbedder(ctx, src)
	if err != nil {
		return IndexStats{}, fmt.Errorf("data source %s: %w", src.ID, err)
	}
	var out IndexStats
	if refused != nil {
		out.EmbeddingRefused = refused.Error()
		a.Logger.Warn("documents not embedded: the embedding provider does not meet the data source's level; word search only", "data_source", src.ID, "reason", out.EmbeddingRefused)
	}
	out.Stats, err = ix.Sync(ctx, local.Spec{ID: src.ID, Path: src.Path, File: src.Kind == datasource.LocalFile, Embedder: emb,
		MaxChunkTokens: src.MaxChunkTokens, OverlapTokens: src.ChunkOverlapTokens}, progress)
	return out, err
}

// Retrieval says how one turn searched the chat's data sources.
type Retrieval struct {
	// Options are the chat's effective data-source options.
	Options chat.DataSourceOptions
	// Mode is the effective retrieval mode, and Reason what keeps
	// semantic_search from being offered when the mode is the classic
	// process (NoBlock when the chat chose it).
	Mode   registry.RetrievalMode
	Reason registry.Reason
	// Offered is true when semantic_search was offered in this request.
	Offered bool
	// Usable are the sources the provider may use in this chat.
	Usable []datasource.Usable
	// Classic is what the classic process found; nil with semantic search.
	Classic *datasource.ClassicResult
}

func (r *Retrieval) classic() *datasource.ClassicResult {
	if r == nil {
		return nil
	}
	return r.Classic
}

// retrieve decides how this turn searches the chat's data sources and runs
// the classic process when semantic_search cannot be offered: the
// registry's effective retrieval mode decides, and the classic process
// steps back only when the tool is offered, so a chat never ends up
// searching nothing.
func (a *App) retrieve(ctx context.Context, t *chat.Thread, p *ResolvedProvider, turn Turn, offered []tool.Offered) *Retrieval {
	if !a.SourcesEnabled() || !a.SourceService().Any() {
		return nil
	}
	o := a.EffectiveDataSources(t.DataSources())
	if o.Disabled {
		return nil
	}
	r := &Retrieval{Options: o, Mode: registry.EveryMessage, Reason: registry.ModelCannotUseTools}
	sel := datasource.Selection{Automatic: o.Automatic, IDs: o.Selected}
	if turn.NoTools {
		r.Reason = registry.ToolsSwitchedOff
	} else {
		r.Mode, r.Reason = a.Registry.EffectiveRetrievalMode(ctx, o.Retrieval == chat.RetrievalSemantic, a.registryProvider(p), registry.ComponentChat)
	}
	for _, off := range offered {
		if off.Definition.ID == registry.SemanticSearchID {
			r.Offered = true
		}
	}
	if r.Mode == registry.SemanticSearch && r.Offered {
		r.Usable, _ = a.SourceService().Usable(ctx, sourceProvider(p), sel)
		return r
	}
	r.Mode = registry.EveryMessage
	c := a.SourceService().Classic(ctx, sourceProvider(p), sel, turn.Text, semantic.Thread(t.History()))
	r.Classic = &c
	for _, res := range c.Results {
		r.Usable = append(r.Usable, res.Usable)
	}
	return r
}

// SemanticOffer says whether semantic_search would be offered to a
// provider in a chat, and why not.
type SemanticOffer struct {
	Offered bool
	// Reason is a registry reason (e.g. PROVIDER_CONFIDENCE_TOO_LOW) or one
	// of PREVIEW_OFF, NO_DATA_SOURCE, DATA_SOURCES_OFF, EVERY_MESSAGE,
	// NO_USABLE_DATA_SOURCE; empty when offered.
	Reason string
	// Detail says it in words.
	Detail string
	// Mode is the retrieval mode the chat would use.
	Mode registry.RetrievalMode
	// Usable are the sources it would list; Refused the others, with why.
	Usable  []datasource.Usable
	Refused []datasource.Refusal
}

// ExplainSemanticSearch answers whether semantic_search would be offered
// to p in the chat t (nil: a new chat), asking the registry and the data
// sources the same way a request does.
func (a *App) ExplainSemanticSearch(ctx context.Context, t *chat.Thread, p *ResolvedProvider) SemanticOffer {
	if t == nil {
		t = NewThread()
	}
	o := a.EffectiveDataSources(t.DataSources())
	var out SemanticOffer
	out.Mode = registry.EveryMessage
	switch {
	case !a.SourcesEnabled():
		out.Reason, out.Detail = "PREVIEW_OFF", "data sources are a preview: switch on PRE_RAG_2024 (enabled_preview_features in settings.json, or DataApp.EnabledPreviewFeatures in an organization plugin)"
		return out
	case !a.SourceService().Any():
		out.Reason, out.Detail = "NO_DATA_SOURCE", "no data source is configured (steward sources add)"
		return out
	case o.Disabled:
		out.Reason, out.Detail = "DATA_SOURCES_OFF", "the chat searches no data source"
		return out
	}
	mode, reason := a.Registry.EffectiveRetrievalMode(ctx, o.Retrieval == chat.RetrievalSemantic, a.registryProvider(p), registry.ComponentChat)
	out.Mode = mode
	out.Usable, out.Refused = a.SourceService().Usable(ctx, sourceProvider(p), datasource.Selection{Automatic: o.Automatic, IDs: o.Selected})
	switch {
	case reason != registry.NoBlock:
		out.Reason = reason.String()
		out.Detail = "the registry does not offer it (" + reason.String() + "); the classic process searches with every message instead"
	case mode == registry.EveryMessage:
		out.Reason, out.Detail = "EVERY_MESSAGE", "the chat searches its data sources with every message (the classic process)"
	case len(out.Usable) == 0:
		out.Reason, out.Detail = "NO_USABLE_DATA_SOURCE", "the provider may use none of the chat's data sources"
	default:
		out.Offered = true
	}
	if !out.Offered {
		out.Mode = registry.EveryMessage
	}
	return out
}

// SourceServiceForUser searches the sources for the user's own commands
// (steward sources search): the user reads their own data, so the preview
// switch of the tools does not apply.
func (a *App) SourceServiceForUser() *datasource.Service { return a.newSourceService(nil) }
