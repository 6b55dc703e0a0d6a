package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/datasource"
	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/datasource/local"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/tools/semantic"
)

func newSourcesCmd(e env) *cobra.Command {
	m := &cobra.Command{
		Use:   "sources",
		Short: "Add data sources (local folders and files, ERI servers), index them, and search them the way semantic_search does",
		Long: `Data sources are what a model may search for the user: local folders and files,
indexed on this machine (words, and meaning with an embedding provider), and
ERI v1 servers an organization runs. In a chat the model searches them with
semantic_search, or, where it cannot be offered the tool, every message is
searched (the classic process). Each source says which providers may see it:
a confidence level the chat provider and the embedding provider must meet
(an embedding provider below it gets nothing: the source is indexed and
searched by words only), and SELF_HOSTED for sources only self-hosted
providers may see. Data sources are a preview: switch on PRE_RAG_2024 (see
the README).`,
		Example: `  steward sources add --id docs --name "Project docs" --folder ~/Documents/project --embedding ollama:nomic-embed-text
  steward sources index docs
  steward sources search "release plan"
  printf '%s' "$ERI_TOKEN" | steward sources add --id hr --name "HR handbook" --eri https://eri.example.org --auth token
  steward sources show hr
  steward sources list --provider openai`,
	}
	m.AddCommand(newSourcesAddCmd(e), newSourcesListCmd(e), newSourcesShowCmd(e), newSourcesIndexCmd(e), newSourcesSearchCmd(e), newSourcesRemoveCmd(e))
	return m
}

func newSourcesAddCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add --id ID (--folder PATH | --file PATH | --eri URL) [flags]",
		Short: "Add a data source; an ERI password or token is read from stdin and kept out of the settings file",
		Example: `  steward sources add --id docs --name "Project docs" --folder ~/Documents/project --embedding ollama:nomic-embed-text
  steward sources add --id plan --file ~/plan.pdf --level MEDIUM --description "The 2027 plan"
  steward sources add --id private --folder ~/private --self-hosted-only
  printf '%s' "$ERI_TOKEN" | steward sources add --id hr --name "HR handbook" --eri https://eri.example.org --auth token --retrieval-id bm25
  printf '%s' "$PASSWORD" | steward sources add --id wiki --eri https://wiki-eri.example.org:8443 --auth username_password --username me`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			str := func(n string) string { v, _ := f.GetString(n); return strings.TrimSpace(v) }
			num := func(n string) int { v, _ := f.GetInt(n); return v }
			id, folder, file, eriURL := str("id"), str("folder"), str("file"), str("eri")
			if id == "" {
				return usagef("sources add needs --id")
			}
			if !datasource.ValidID(id) {
				return usagef("--id %q: use 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", id)
			}
			given := 0
			for _, v := range []string{folder, file, eriURL} {
				if v != "" {
					given++
				}
			}
			if given != 1 {
				return usagef("sources add needs exactly one of --folder PATH, --file PATH or --eri URL")
			}
			u := config.UserDataSource{ID: id, Name: firstNonBlank(str("name"), id), Description: str("description"), MaxMatches: num("max-matches"),
				RequiredProviderConfidence: strings.ToUpper(str("level")), DataSecurity: "ALLOW_ANY"}
			if on, _ := f.GetBool("self-hosted-only"); on {
				u.DataSecurity = "SELF_HOSTED"
			}
			if f.Changed("max-matches") && u.MaxMatches < 1 {
				return usagef("--max-matches %d: use 1 to %d results per page", u.MaxMatches, datasource.MaxMaxMatches)
			}
			var secret string
			switch {
			case folder != "" || file != "":
				p, kind, err := localPath(folder, file)
				if err != nil {
					return err
				}
				u.Path, u.Kind = p, string(kind)
				u.EmbeddingProvider = str("embedding")
				u.MaxChunkTokens = num("max-chunk-tokens")
				if f.Changed("overlap") {
					n := num("overlap")
					u.ChunkOverlapTokens = &n
				}
				if u.RequiredProviderConfidence == "" {
					u.RequiredProviderConfidence = "HIGH"
				}
				for _, n := range []string{"auth", "username", "retrieval-id", "port", "os-username"} {
					if f.Changed(n) {
						return usagef("--%s is only for an ERI server (--eri)", n)
					}
				}
			default:
				u.Kind, u.Hostname, u.Port = string(datasource.ERI), eriURL, num("port")
				u.AuthMethod = strings.ToUpper(strings.ReplaceAll(str("auth"), "-", "_"))
				u.Username, u.RetrievalID = str("username"), str("retrieval-id")
				if osUser, _ := f.GetBool("os-username"); osUser {
					u.UsernamePasswordMode = string(datasource.OSUsernameSharedPassword)
				} else if u.AuthMethod == string(datasource.AuthUsernamePassword) {
					u.UsernamePasswordMode = string(datasource.UserManaged)
				}
				if u.RequiredProviderConfidence == "" {
					u.RequiredProviderConfidence = "NONE"
				}
				for _, n := range []string{"embedding", "max-chunk-tokens", "overlap"} {
					if f.Changed(n) {
						return usagef("--%s is only for a local folder or file", n)
					}
				}
				if u.AuthMethod == string(datasource.AuthToken) || u.AuthMethod == string(datasource.AuthUsernamePassword) {
					var err error
					if secret, err = readSecret(e.stdin); err != nil {
						return err
					}
					if secret == "" {
						return usagef("give the %s on stdin, e.g. printf '%%s' \"$ERI_TOKEN\" | steward sources add …", map[string]string{"TOKEN": "token", "USERNAME_PASSWORD": "password"}[u.AuthMethod])
					}
				}
			}
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			s, err := a.AddSource(u, secret)
			if err != nil {
				var fe *datasource.FieldError
				if errors.As(err, &fe) {
					return usageError{fmt.Errorf("%s (flag %s)", err, flagOf(fe.Field))}
				}
				return err
			}
			fmt.Fprintf(e.stderr, "Added data source %s (%s).\n", s.ID, s.Kind.Label())
			notes := sourceNotes(cmd, a, s)
			for _, n := range notes {
				fmt.Fprintln(e.stderr, n)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.String("id", "", "a short ID for the source, e.g. docs")
	f.String("name", "", "the name shown to you and the model, at most 40 characters (default: the ID)")
	f.String("folder", "", "a local folder to index, with its subfolders")
	f.String("file", "", "one local file to index")
	f.String("eri", "", "the address of an ERI v1 server, e.g. https://eri.example.org (http only for 127.0.0.1 or ::1)")
	f.String("description", "", "what the source holds, for the model (an ERI server's own description takes its place)")
	f.Int("max-matches", datasource.DefaultMaxMatches, "results per page")
	f.String("level", "", "the provider confidence a chat provider (and the embedding provider) needs to see this source: NONE to HIGH (default HIGH for a folder or file, NONE for an ERI server)")
	f.Bool("self-hosted-only", false, "only self-hosted providers may see this source (data security SELF_HOSTED); chats that read it refuse every other provider afterwards")
	f.String("embedding", "", "embedding provider for search by meaning: ollama:<model>[@<url>], openai:<model>, or an organization embedding provider ID; empty searches by words only")
	f.Int("max-chunk-tokens", 0, "chunk size in tokens of the embedding model (32 to 8192; default: the provider's token limit)")
	f.Int("overlap", 0, "tokens a chunk repeats of the one before (0 for none; default 300)")
	f.Int("port", 0, "the ERI server's port (default: the address's, or 443/80)")
	f.String("auth", "none", "how to sign in at the ERI server: none, token or username_password")
	f.String("username", "", "the user name for username_password")
	f.Bool("os-username", false, "sign in with the operating-system user name (username_password)")
	f.String("retrieval-id", "", "the ERI server's retrieval process to use (see steward sources show); default: the server chooses")
	return cmd
}

// flagOf names the flag of a source field.
func flagOf(field string) string {
	flags := map[string]string{"id": "--id", "name": "--name", "description": "--description", "max_matches": "--max-matches",
		"required_provider_confidence": "--level", "data_security": "--self-hosted-only", "path": "--folder/--file",
		"embedding_provider": "--embedding", "max_chunk_tokens": "--max-chunk-tokens", "chunk_overlap_tokens": "--overlap",
		"hostname": "--eri", "port": "--port", "auth_method": "--auth", "username": "--username", "username_password_mode": "--os-username",
		"retrieval_id": "--retrieval-id", "kind": "--folder/--file/--eri"}
	if f, ok := flags[field]; ok {
		return f
	}
	return field
}

// localPath checks that the folder or file exists and returns its
// absolute, clean path.
func localPath(folder, file string) (string, datasource.Kind, error) {
	p, kind, flag := folder, datasource.LocalFolder, "--folder"
	if file != "" {
		p, kind, flag = file, datasource.LocalFile, "--file"
	}
	abs, err := filepath.Abs(expandHome(p))
	if err != nil {
		return "", kind, usagef("%s %q: %v", flag, p, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", kind, usagef("%s %q: %v", flag, p, err)
	case kind == datasource.LocalFolder && !fi.IsDir():
		return "", kind, usagef("--folder %q is a file: use --file for one file", p)
	case kind == datasource.LocalFile && fi.IsDir():
		return "", kind, usagef("--file %q is a folder: use --folder", p)
	case kind == datasource.LocalFile && !fi.Mode().IsRegular():
		return "", kind, usagef("--file %q is not a regular file", p)
	}
	return abs, kind, nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// sourceNotes are what the user should know about a source just added.
func sourceNotes(cmd *cobra.Command, a *app.App, s datasource.Source) []string {
	var notes []string
	if s.Kind.Local() {
		if s.Embedding == "" {
			notes = append(notes, "No embedding provider: this source is searched by words only (add one with --embedding to search by meaning).")
		}
		notes = append(notes, fmt.Sprintf("Run 'steward sources index %s' to index it.", s.ID))
	} else {
		d, err := a.SourceServiceForUser().Describe(cmd.Context(), s)
		if err != nil {
			notes = append(notes, fmt.Sprintf("warning: the server could not be asked about itself yet: %v", cliError(err)))
		} else {
			notes = append(notes, fmt.Sprintf("The server describes itself as %q; it allows providers: %s.", oneLine(d.Info.Name), orDash(string(d.Security.AllowedProviderType))))
		}
	}
	if !a.SourcesEnabled() {
		notes = append(notes, "Note: data sources are a preview; enable PRE_RAG_2024 to let a model search them.")
	}
	return notes
}

// cliError adds what an ERI server said about a refused sign-in.
func cliError(err error) string {
	msg := err.Error()
	if e, ok := eri.AsError(err); ok && e.ServerMessage != "" {
		msg += fmt.Sprintf(" (the server says: %q)", e.ServerMessage)
	}
	return msg
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// sourceRow is one data source as list and show write it.
func newSourcesListCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list [--provider P] [--json]",
		Short: "List the data sources; with a provider, whether it may use each and why not",
		Example: `  steward sources list
  steward sources list --provider openai --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, _ := cmd.Flags().GetBool("json")
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			var rp *app.ResolvedProvider
			if pf := providerFlags(cmd); pf.Provider != "" || pf.BaseURL != "" {
				if rp, err = a.ResolveProvider(cmd.Context(), pf); err != nil {
					return err
				}
			}
			rows, problems := a.SourceViews(cmd.Context(), rp)
			for _, p := range problems {
				fmt.Fprintf(e.stderr, "warning: %v\n", p)
			}
			if asJSON {
				out := map[string]any{"data_sources": rows, "preview_enabled": a.SourcesEnabled()}
				if rp != nil {
					out["provider"] = map[string]any{"title": rp.Title, "confidence": rp.Confidence.String(), "trusted": rp.Trusted}
				}
				return writeJSON(e.stdout, out)
			}
			if len(rows) == 0 {
				fmt.Fprintln(e.stderr, "No data sources yet: add one with 'steward sources add'.")
			}
			for _, r := range rows {
				where := r.Path
				if r.Kind == string(datasource.ERI) {
					where = r.Address
				}
				fmt.Fprintf(e.stdout, "%-16s %-22s %-15s %-9s %-13s %s\n", r.ID, r.Name, datasource.Kind(r.Kind).Label(), r.RequiredProviderConfidence, r.DataSecurity, where)
				detail := fmt.Sprintf("%d per page, search: %s, %s", r.MaxMatches, r.SearchMode, r.ConfiguredBy)
				if r.Index != nil {
					if r.Index.Indexed {
						detail += fmt.Sprintf(", %d documents, %d chunks", r.Index.Documents, r.Index.Chunks)
						if !r.Index.Complete {
							detail += " (last indexing run incomplete)"
						}
					} else {
						detail += ", not indexed yet"
					}
				}
				fmt.Fprintf(e.stdout, "%-16s %s\n", "", detail)
				if r.Usable != nil {
					if *r.Usable {
						fmt.Fprintf(e.stdout, "%-16s usable by %s\n", "", rp.Title)
					} else {
						fmt.Fprintf(e.stdout, "%-16s not usable by %s: %s\n", "", rp.Title, r.NotUsableBecause)
					}
				}
			}
			if !a.SourcesEnabled() && len(rows) > 0 {
				fmt.Fprintln(e.stderr, "Note: data sources are a preview; enable PRE_RAG_2024 to let a model search them.")
			}
			return nil
		},
	}
	addProviderFlags(cmd)
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

// findSource returns the source with the ID, or a usage error naming the
// ones there are.
func findSource(a *app.App, id string) (datasource.Source, error) {
	sources, _ := a.DataSources()
	var ids []string
	for _, s := range sources {
		if s.ID == id {
			return s, nil
		}
		ids = append(ids, s.ID)
	}
	if len(ids) == 0 {
		return datasource.Source{}, usagef("there is no data source %q: none is configured (steward sources add)", id)
	}
	return datasource.Source{}, usagef("there is no data source %q; the data sources are: %s", id, strings.Join(ids, ", "))
}

func newSourcesShowCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Show a data source: its settings, what the index holds, or what its ERI server says about itself",
		Example: `  steward sources show docs
  steward sources show hr --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("sources show takes the ID of one data source (see 'steward sources list')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, _ := cmd.Flags().GetBool("json")
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			s, err := findSource(a, args[0])
			if err != nil {
				return err
			}
			row := a.SourceViewOf(s)
			out := map[string]any{"data_source": row}
			var details *datasource.ServerDetails
			var serverErr error
			if s.Kind.Local() {
				st, err := a.LocalSourceStatus(cmd.Context(), s.ID)
				if err != nil {
					return err
				}
				row.Index = app.SourceIndexOf(st)
				out["data_source"] = row
			} else {
				d, err := a.SourceServiceForUser().Describe(cmd.Context(), s)
				if err != nil {
					serverErr = err
					out["server_error"] = cliError(err)
				} else {
					details = &d
					out["server"] = serverJSON(d)
				}
			}
			if asJSON {
				return writeJSON(e.stdout, out)
			}
			fmt.Fprintf(e.stdout, "%s (%s): %s\n", s.Name, s.ID, s.Kind.Label())
			fmt.Fprintf(e.stdout, "  configured by:       %s\n", row.ConfiguredBy)
			if s.Description != "" {
				fmt.Fprintf(e.stdout, "  description:         %s\n", oneLine(s.Description))
			}
			fmt.Fprintf(e.stdout, "  results per page:    %d (last page %d)\n", s.MaxMatches, row.LastPage)
			fmt.Fprintf(e.stdout, "  needs confidence:    %s\n  data security:       %s\n", row.RequiredProviderConfidence, row.DataSecurity)
			if s.Kind.Local() {
				fmt.Fprintf(e.stdout, "  path:                %s\n  search:              %s", s.Path, row.SearchMode)
				if s.Embedding != "" {
					fmt.Fprintf(e.stdout, " (%s)", s.Embedding)
				}
				fmt.Fprintln(e.stdout)
				ix := row.Index
				switch {
				case !ix.Indexed:
					fmt.Fprintf(e.stdout, "  index:               not indexed yet (steward sources index %s)\n", s.ID)
				default:
					state := "complete"
					if !ix.Complete {
						state = "incomplete: run steward sources index again"
					}
					fmt.Fprintf(e.stdout, "  index:               %d documents, %d chunks (%d embedded), %.1f MB, last run %s, %s\n", ix.Documents, ix.Chunks, ix.Embedded, float64(ix.Bytes)/1e6, ix.LastRun, state)
					for _, sk := range ix.Skipped {
						fmt.Fprintf(e.stdout, "  skipped:             %s: %s\n", sk.Path, sk.Reason)
					}
				}
				return nil
			}
			fmt.Fprintf(e.stdout, "  address:             %s\n  sign-in:             %s\n", row.Address, s.Auth)
			if s.RetrievalID != "" {
				fmt.Fprintf(e.stdout, "  retrieval process:   %s\n", s.RetrievalID)
			}
			if serverErr != nil {
				fmt.Fprintf(e.stdout, "  server:              could not be asked: %s\n", cliError(serverErr))
				return nil
			}
			d := details
			fmt.Fprintf(e.stdout, "  server's name:       %s\n  server's description: %s\n  allows providers:    %s\n", oneLine(d.Info.Name), oneLine(d.Info.Description), orDash(string(d.Security.AllowedProviderType)))
			for _, m := range d.Methods {
				fmt.Fprintf(e.stdout, "  sign-in method:      %s\n", m.AuthMethod)
			}
			for _, r := range d.Retrievals {
				fmt.Fprintf(e.stdout, "  retrieval process:   %s: %s — %s\n", r.ID, oneLine(r.Name), oneLine(r.Description))
			}
			for _, em := range d.Embeddings {
				fmt.Fprintf(e.stdout, "  embedding:           %s (%s): %s\n", oneLine(em.EmbeddingName), oneLine(em.EmbeddingType), oneLine(em.UsedWhen))
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

// serverJSON writes what an ERI server says about itself in the JSON style
// of the other commands.
func serverJSON(d datasource.ServerDetails) map[string]any {
	methods := []string{}
	for _, m := range d.Methods {
		methods = append(methods, string(m.AuthMethod))
	}
	type emb struct {
		Type        string `json:"type"`
		Name        string `json:"name"`
		Description string `json:"description"`
		UsedWhen    string `json:"used_when"`
		Link        string `json:"link,omitempty"`
	}
	type proc struct {
		ID          string            `json:"id"`
		Name        string            `json:"name"`
		Description string            `json:"description"`
		Link        string            `json:"link,omitempty"`
		Parameters  map[string]string `json:"parameters"`
		Embeddings  []emb             `json:"embeddings"`
	}
	embs := func(in []eri.EmbeddingInfo) []emb {
		out := []emb{}
		for _, e := range in {
			out = append(out, emb{Type: e.EmbeddingType, Name: e.EmbeddingName, Description: e.Description, UsedWhen: e.UsedWhen, Link: e.Link})
		}
		return out
	}
	procs := []proc{}
	for _, r := range d.Retrievals {
		p := proc{ID: r.ID, Name: r.Name, Description: r.Description, Link: r.Link, Parameters: r.ParametersDescription, Embeddings: embs(r.Embeddings)}
		if p.Parameters == nil {
			p.Parameters = map[string]string{}
		}
		procs = append(procs, p)
	}
	return map[string]any{"name": d.Info.Name, "description": d.Info.Description, "auth_methods": methods,
		"allowed_provider_type": string(d.Security.AllowedProviderType), "retrieval_processes": procs, "embeddings": embs(d.Embeddings)}
}

func newSourcesIndexCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index [ID] [--json]",
		Short: "Index local folders and files, or bring their index up to date (changed, added, removed and renamed files)",
		Long: `Index the local data sources (or the one named): new and changed files are read,
removed ones leave the index, renamed ones keep their chunks. A file that cannot
be read is reported by name and reason and skipped. A run that is stopped
(Ctrl-C, or killed) leaves a consistent index; the next run goes on from there.
Progress goes to stdout (to stderr with --json).`,
		Example: `  steward sources index
  steward sources index docs
  steward sources index --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, _ := cmd.Flags().GetBool("json")
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			var targets []datasource.Source
			if len(args) == 1 {
				s, err := findSource(a, args[0])
				if err != nil {
					return err
				}
				if !s.Kind.Local() {
					return usagef("data source %s is an ERI server, which indexes its data itself; only local folders and files are indexed here", s.ID)
				}
				targets = []datasource.Source{s}
			} else {
				sources, problems := a.DataSources()
				for _, p := range problems {
					fmt.Fprintf(e.stderr, "warning: %v\n", p)
				}
				for _, s := range sources {
					if s.Kind.Local() {
						targets = append(targets, s)
					}
				}
				if len(targets) == 0 {
					return fmt.Errorf("no local folder or file is configured: add one with 'steward sources add --folder PATH'")
				}
			}
			// Progress goes to stderr, as for mail sync: stdout holds the
			// summary (or the JSON) alone, also when it is redirected.
			progressOut := rawErr(e)
			type result struct {
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Added     int             `json:"added"`
				Changed   int             `json:"changed"`
				Removed   int             `json:"removed"`
				Renamed   int             `json:"renamed"`
				Unchanged int             `json:"unchanged"`
				Chunks    int             `json:"chunks"`
				Embedded  int             `json:"embedded"`
				Skipped   []local.Skipped `json:"skipped"`
				WordsOnly bool            `json:"words_only"`
				// EmbeddingRefused says why nothing went to the
				// source's embedding provider.
				EmbeddingRefused string  `json:"embedding_refused,omitempty"`
				EmbeddingError   string  `json:"embedding_error,omitempty"`
				Seconds          float64 `json:"seconds"`
				Error            string  `json:"error,omitempty"`
			}
			results := []result{}
			failed, wordsOnlyNoted := 0, false
			for _, s := range targets {
				if s.Embedding == "" && !wordsOnlyNoted && !asJSON {
					fmt.Fprintln(e.stderr, "Sources without an embedding provider are indexed for search by words only.")
					wordsOnlyNoted = true
				}
				bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(progressOut), progressbar.OptionSetDescription(s.Name),
					progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("files"), progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
				start := time.Now()
				st, err := a.IndexSource(cmd.Context(), s, func(p local.Progress) {
					if p.Files > 0 {
						bar.ChangeMax(p.Files)
					}
					rate := 0.0
					if p.Elapsed > 0 {
						rate = float64(p.Bytes) / 1e6 / p.Elapsed.Seconds()
					}
					bar.Describe(fmt.Sprintf("%s: %d chunks, %.1f MB/s", s.Name, p.Chunks, rate))
					_ = bar.Set(p.FilesDone)
				})
				_ = bar.Finish()
				r := result{ID: s.ID, Name: s.Name, Added: st.Added, Changed: st.Changed, Removed: st.Removed, Renamed: st.Renamed, Unchanged: st.Unchanged,
					Chunks: st.Chunks, Embedded: st.Embedded, Skipped: st.Skipped, WordsOnly: st.WordsOnly || s.Embedding == "", EmbeddingRefused: st.EmbeddingRefused,
					EmbeddingError: st.EmbeddingError, Seconds: time.Since(start).Seconds()}
				if r.Skipped == nil {
					r.Skipped = []local.Skipped{}
				}
				if err != nil {
					failed++
					r.Error = err.Error()
					if !asJSON {
						fmt.Fprintf(e.stderr, "%s: %v\n", s.Name, err)
					}
				} else if !asJSON {
					files := st.Added + st.Changed + st.Unchanged + st.Renamed
					rate := 0.0
					if r.Seconds > 0 {
						rate = float64(st.Added+st.Changed) / r.Seconds
					}
					fmt.Fprintf(e.stdout, "%s: %d files (%d new, %d changed, %d renamed, %d removed), %d chunks stored, %d embedded in %s (%.0f files/s)\n",
						s.Name, files, st.Added, st.Changed, st.Renamed, st.Removed, st.Chunks, st.Embedded, time.Duration(r.Seconds*float64(time.Second)).Round(time.Millisecond), rate)
					for _, sk := range st.Skipped {
						fmt.Fprintf(e.stdout, "  skipped %s: %s\n", sk.Path, sk.Reason)
					}
					if st.EmbeddingRefused != "" {
						fmt.Fprintf(e.stderr, "%s: documents were not embedded: %s; search by words works\n", s.Name, st.EmbeddingRefused)
					}
					if st.EmbeddingError != "" {
						fmt.Fprintf(e.stderr, "%s: search by meaning is incomplete for now (%s); search by words works, and the next run embeds the rest\n", s.Name, st.EmbeddingError)
					}
				}
				results = append(results, r)
				if cmd.Context().Err() != nil {
					break
				}
			}
			if asJSON {
				if err := writeJSON(e.stdout, map[string]any{"data_sources": results}); err != nil {
					return err
				}
			}
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d data sources could not be indexed", failed, len(targets))
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "write JSON (progress then goes to stderr)")
	return cmd
}

func newSourcesSearchCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "search [--source ID]... [--page N] [--provider P] [--json] QUERY",
		Short: "Search the data sources the way semantic_search does, and show what a model would get",
		Long: `Search the data sources with a query, the way the model does with semantic_search:
the same paging, the same passages through the same prompt-injection filter,
the same character budget. Without --provider you search as yourself (every
source, as a self-hosted provider would); with --provider only the sources that
provider may use are searched. --json prints exactly the JSON the model gets.`,
		Example: `  steward sources search "parental leave"
  steward sources search --source hr --page 2 "parental leave"
  steward sources search --provider openai --json "release plan"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("sources search needs a query")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, _ := cmd.Flags().GetBool("json")
			ids, _ := cmd.Flags().GetStringArray("source")
			page, _ := cmd.Flags().GetInt("page")
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			for _, id := range ids {
				if _, err := findSource(a, id); err != nil {
					return err
				}
			}
			p := datasource.Provider{Confidence: policy.High, Trusted: true}
			if pf := providerFlags(cmd); pf.Provider != "" || pf.BaseURL != "" {
				rp, err := a.ResolveProvider(cmd.Context(), pf)
				if err != nil {
					return err
				}
				p = datasource.Provider{Confidence: rp.Confidence, Trusted: rp.Trusted}
			}
			svc := a.SourceServiceForUser()
			t := semantic.New(semantic.Options{Service: svc, Logger: a.Logger})
			th := &chat.Thread{}
			th.SetDataSources(chat.DataSourceOptions{Set: true, Automatic: true, Retrieval: chat.RetrievalSemantic})
			argMap := map[string]any{semantic.ArgQuery: strings.Join(args, " ")}
			if len(ids) > 0 {
				argMap[semantic.ArgDataSourceIDs] = ids
			}
			if cmd.Flags().Changed("page") {
				argMap[tool.PageArgument] = page
			}
			raw, _ := json.Marshal(argMap)
			res, err := t.Execute(cmd.Context(), raw, tool.ExecContext{Definition: t.Definition(), ProviderConfidence: p.Confidence, ProviderTrusted: p.Trusted, Chat: th})
			if err != nil {
				if _, ok := tool.AsArgumentError(err); ok {
					return usageError{err}
				}
				return err
			}
			if asJSON {
				var v any
				if json.Unmarshal([]byte(res.ModelContent()), &v) == nil {
					return writeJSON(e.stdout, v)
				}
			}
			r := res.JSON.(semantic.Result)
			for _, d := range r.DataSources {
				more := ""
				if d.HasMore {
					more = ", more on the next page"
				}
				fmt.Fprintf(e.stderr, "%s (%s): %d passages%s\n", d.Name, d.ID, d.ResultCount, more)
				for _, is := range d.Issues {
					fmt.Fprintf(e.stderr, "  %s\n", is)
				}
			}
			for _, is := range r.Issues {
				fmt.Fprintln(e.stderr, is)
			}
			if r.TextContent == "" {
				fmt.Fprintln(e.stderr, "Nothing found.")
				return nil
			}
			fmt.Fprintln(e.stdout, r.TextContent)
			return nil
		},
	}
	addProviderFlags(cmd)
	cmd.Flags().StringArray("source", nil, "search only this data source; repeatable")
	cmd.Flags().Int("page", 1, "the page of results; a page after the first needs exactly one --source")
	cmd.Flags().Bool("json", false, "write the JSON the model gets")
	return cmd
}

func newSourcesRemoveCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:     "remove ID",
		Aliases: []string{"rm"},
		Short:   "Remove one of your data sources: its settings, its stored secret and its documents in the local index",
		Long: `Remove a data source you added with 'steward sources add': it leaves your
settings, an ERI password or token is deleted from the secret store, and
everything the local index holds of it is deleted. Your files and the ERI
server are not touched. A data source your organization defines cannot be
removed here.`,
		Example: `  steward sources remove docs`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("sources remove takes the ID of one data source (see 'steward sources list')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			if _, err := findSource(a, args[0]); err != nil {
				known := false
				for _, u := range a.User.DataSources {
					known = known || u.ID == args[0]
				}
				if !known {
					return err
				}
			}
			if err := a.RemoveSource(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "Removed data source %s.\n", args[0])
			return nil
		},
	}
}
