package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/tools/mail"
)

func newMailCmd(e env) *cobra.Command {
	m := &cobra.Command{
		Use:   "mail",
		Short: "Add mailboxes, sync them into the local index, and query the index the way the mail tools do",
		Long: `Steward answers questions about mail from a local index of your mailboxes. No
tool ever asks a mail server anything: 'steward mail sync' is the only thing that
talks to one, read-only (nothing on the server changes, no flag is set), with at
most one sign-in attempt per run. The mail tools are a preview: switch them on with
PRE_RAG_2024 and PRE_MAILBOXES_2026 (see the README).`,
		Example: `  printf '%s' "$IMAP_PASSWORD" | steward mail add --id work --name Work --host imap.example.org --username me@example.org
  steward mail sync
  steward mail status
  steward mail search --from supplier "delivery date"
  steward mail count --after 2026-11-01 --group-by sender --json`,
	}
	m.AddCommand(newMailAddCmd(e), newMailRemoveCmd(e), newMailSyncCmd(e), newMailResetSignInCmd(e), newMailStatusCmd(e), newMailSearchCmd(e), newMailCountCmd(e))
	return m
}

func newMailRemoveCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:     "remove ID",
		Aliases: []string{"rm"},
		Short:   "Remove one of your mailboxes: its settings, its stored secret and its mails in the local index",
		Long: `Remove a mailbox you added with 'steward mail add': it leaves your settings, its
password or token is deleted from the secret store, and everything the local
index holds of it is deleted. Nothing on the mail server changes. A mailbox
your organization defines cannot be removed here.`,
		Example: `  steward mail remove work`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("mail remove takes the ID of one mailbox (see 'steward mail status')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			known := false
			var ids []string
			for _, c := range a.MailboxConfigs() {
				ids = append(ids, c.ID)
				known = known || c.ID == args[0]
			}
			if !known {
				if len(ids) == 0 {
					return usagef("there is no mailbox %q: no mailbox is configured", args[0])
				}
				return usagef("there is no mailbox %q; the mailboxes are: %s", args[0], strings.Join(ids, ", "))
			}
			if err := a.RemoveMailbox(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "Removed mailbox %s, its secret and its mails in the local index.\n", args[0])
			return nil
		},
	}
}

func newMailResetSignInCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset-signin [--mailbox ID]",
		Short: "Allow one new sign-in attempt after the server refused one",
		Long: `After a mail server refused a sign-in, 'steward mail sync' makes no further
attempt, so that a wrong password cannot lock the account. Fix the password or
token first (e.g. 'steward mail remove' and 'steward mail add' again), then run
this to allow the next sync to try once more. 'steward mail sync --retry-sign-in'
does both in one step.`,
		Example: `  steward mail reset-signin --mailbox work
  steward mail reset-signin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := cmd.Flags().GetString("mailbox")
			a, boxes, err := openMailboxes(cmd, e, id)
			if err != nil {
				return err
			}
			defer a.Close()
			ix, err := a.MailIndexer(cmd.Context())
			if err != nil {
				return err
			}
			for _, c := range boxes {
				if err := ix.ResetSignIn(cmd.Context(), c.ID); err != nil {
					return fmt.Errorf("%s: %w", c.Name, err)
				}
				fmt.Fprintf(e.stderr, "%s: the next 'steward mail sync' signs in once more.\n", c.Name)
			}
			return nil
		},
	}
	cmd.Flags().String("mailbox", "", "only this mailbox")
	return cmd
}

func newMailAddCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add --id ID --host HOST --username USER [flags]",
		Short: "Add a mailbox; the password or token is read from stdin and kept out of the settings file",
		Example: `  printf '%s' "$IMAP_PASSWORD" | steward mail add --id work --name Work --host imap.example.org --username me@example.org
  steward mail add --id gmail --host imap.gmail.com --auth xoauth2 --username me@gmail.com --level HIGH < token.txt
  steward mail add --id team --host imap.example.org --port 143 --security starttls --username team --folder INBOX --folder Archive --embedding ollama:nomic-embed-text
  steward mail add --id recent --host imap.example.org --username me@example.org --max-age-days 365 < password.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			id, _ := f.GetString("id")
			name, _ := f.GetString("name")
			host, _ := f.GetString("host")
			port, _ := f.GetInt("port")
			sec, _ := f.GetString("security")
			auth, _ := f.GetString("auth")
			user, _ := f.GetString("username")
			folders, _ := f.GetStringArray("folder")
			emb, _ := f.GetString("embedding")
			level, _ := f.GetString("level")
			outbound, _ := f.GetString("outbound")
			maxAge, _ := f.GetInt("max-age-days")
			if id == "" || host == "" || user == "" {
				return usagef("mail add needs --id, --host and --username")
			}
			if !validID(id) {
				return usagef("--id %q must be lower-case letters, digits, - or _", id)
			}
			security, err := mailbox.ParseSecurity(sec)
			if err != nil {
				return usageError{err}
			}
			kind, err := mailbox.ParseAuthKind(auth)
			if err != nil {
				return usageError{err}
			}
			lv, err := policy.ParseConfidence(level)
			if err != nil || lv < policy.VeryLow {
				return usagef("--level %q must be VERY_LOW, LOW, MODERATE, MEDIUM or HIGH (NONE, UNTRUSTED and UNKNOWN would close the mailbox)", level)
			}
			if _, err := policy.ParseRestriction(outbound); err != nil {
				return usageError{err}
			}
			if err := mailbox.ValidateMaxAgeDays(maxAge); err != nil {
				return usagef("--max-age-days %d: use 0 (index every mail) to %d days", maxAge, mailbox.MaxMaxAgeDays)
			}
			if port == 0 {
				port = 993
				if security == mailbox.SecurityStartTLS {
					port = 143
				}
			}
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			for _, existing := range a.MailboxConfigs() {
				if existing.ID == id {
					return fmt.Errorf("a mailbox with the ID %q exists already", id)
				}
			}
			secret, err := readSecret(e.stdin)
			if err != nil {
				return err
			}
			if secret == "" {
				return usagef("give the password or token on stdin, e.g. printf '%%s' \"$IMAP_PASSWORD\" | steward mail add …")
			}
			if err := a.SetMailboxSecret(id, secret); err != nil {
				return fmt.Errorf("storing the secret in %s: %w", a.Secrets.Where(), err)
			}
			a.User.Mailboxes = append(a.User.Mailboxes, config.UserMailbox{ID: id, Name: firstNonBlank(name, id), Host: host, Port: port, Security: string(security),
				Auth: string(kind), Username: user, Folders: folders, EmbeddingProvider: emb, RequiredProviderConfidence: lv.String(), OutboundDataRestriction: strings.ToUpper(outbound),
				MaxAgeDays: maxAge})
			if err := a.SaveUserSettings(); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "Added mailbox %s; its secret is in %s. Run 'steward mail sync' to index it.\n", id, a.Secrets.Where())
			if !a.MailEnabled() {
				fmt.Fprintln(e.stderr, "Note: the mail tools are a preview; enable PRE_RAG_2024 and PRE_MAILBOXES_2026 to let a model use them.")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.String("id", "", "a short ID for the mailbox, e.g. work")
	f.String("name", "", "the name shown to you and the model (default: the ID)")
	f.String("host", "", "IMAP server host name")
	f.Int("port", 0, "IMAP port (default 993 for tls, 143 for starttls)")
	f.String("security", "tls", "tls or starttls")
	f.String("auth", "password", "password or xoauth2 (an OAuth2 bearer token)")
	f.String("username", "", "sign-in name")
	f.StringArray("folder", nil, "a folder to index; repeatable (default INBOX)")
	f.String("embedding", "", "embedding provider for search by meaning: ollama:<model>[@<url>], openai:<model>, or an organization embedding provider ID; empty searches by words only")
	f.String("level", "HIGH", "the provider confidence a chat provider and the embedding provider need to read this mailbox: VERY_LOW to HIGH")
	f.String("outbound", "ONLY_LINKS_FROM_CHAT", "where a chat may send data after reading this mailbox: UNRESTRICTED, ONLY_LINKS_FROM_CHAT or ONLY_CONFIGURED_SERVICES")
	f.Int("max-age-days", 0, "index only mails delivered in the last N days (plus flagged mails and drafts of any age); 0 indexes every mail")
	return cmd
}

func validID(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

func firstNonBlank(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func readSecret(r io.Reader) (string, error) {
	if r == nil {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return "", fmt.Errorf("reading the secret from stdin: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// selectMailboxes returns the configured mailboxes, or the one named.
func selectMailboxes(a *app.App, id string) ([]mailbox.Config, error) {
	all := a.MailboxConfigs()
	if len(all) == 0 {
		return nil, fmt.Errorf("no mailbox is configured: add one with 'steward mail add'")
	}
	if id == "" {
		return all, nil
	}
	var ids []string
	for _, c := range all {
		if c.ID == id {
			return []mailbox.Config{c}, nil
		}
		ids = append(ids, c.ID)
	}
	return nil, usagef("there is no mailbox %q; the mailboxes are: %s", id, strings.Join(ids, ", "))
}

func newMailSyncCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync [--mailbox ID]",
		Short: "Sync mailboxes into the local index (read-only; one sign-in attempt per run)",
		Example: `  steward mail sync
  steward mail sync --mailbox work
  steward mail sync --mailbox work --retry-sign-in   # after fixing a refused password`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := cmd.Flags().GetString("mailbox")
			retry, _ := cmd.Flags().GetBool("retry-sign-in")
			a, boxes, err := openMailboxes(cmd, e, id)
			if err != nil {
				return err
			}
			defer a.Close()
			ix, err := a.MailIndexer(cmd.Context())
			if err != nil {
				return err
			}
			failed := 0
			for _, c := range boxes {
				if retry {
					if err := ix.ResetSignIn(cmd.Context(), c.ID); err != nil {
						return err
					}
				}
				bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(rawErr(e)), progressbar.OptionSetDescription(c.Name),
					progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("mails"), progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
				rep, err := ix.Sync(cmd.Context(), c, mailbox.SyncOptions{Progress: func(p mailbox.Progress) {
					if p.Total > 0 {
						bar.ChangeMax(p.Total)
					}
					_ = bar.Set(p.Done)
				}})
				_ = bar.Finish()
				if err != nil {
					failed++
					fmt.Fprintf(e.stderr, "%s: %v\n", c.Name, err)
					continue
				}
				rate := 0.0
				if rep.Duration > 0 {
					rate = float64(rep.Added) / rep.Duration.Seconds()
				}
				fmt.Fprintf(e.stderr, "%s: %d new, %d removed, %d chunks embedded in %s (%.0f mails/s)\n", c.Name, rep.Added, rep.Removed+int(rep.Orphans), rep.Embedded, rep.Duration.Round(time.Millisecond), rate)
				if rep.EmbeddingRefused != "" {
					fmt.Fprintf(e.stderr, "%s: mails were not embedded: %s; search by words works\n", c.Name, rep.EmbeddingRefused)
				}
				if rep.EmbeddingError != "" {
					fmt.Fprintf(e.stderr, "%s: search by meaning is unavailable for now (%s); search by words works\n", c.Name, rep.EmbeddingError)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d mailboxes could not be synced", failed, len(boxes))
			}
			return nil
		},
	}
	cmd.Flags().String("mailbox", "", "sync only this mailbox")
	cmd.Flags().Bool("retry-sign-in", false, "try to sign in again after a refused sign-in (one attempt)")
	return cmd
}

func newMailStatusCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "status [--mailbox ID] [--json]",
		Short:   "Show per folder what the index holds",
		Example: "  steward mail status\n  steward mail status --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _ := cmd.Flags().GetString("mailbox")
			asJSON, _ := cmd.Flags().GetBool("json")
			a, boxes, err := openMailboxes(cmd, e, id)
			if err != nil {
				return err
			}
			defer a.Close()
			svc, err := mailServiceForCLI(cmd, a)
			if err != nil {
				return err
			}
			var all []mailbox.Status
			for _, c := range boxes {
				st, err := svc.Status(cmd.Context(), c)
				if err != nil {
					return err
				}
				all = append(all, st)
			}
			if asJSON {
				all = nonNil(all)
				for i := range all {
					all[i].Coverage.Folders = nonNil(all[i].Coverage.Folders)
				}
				return writeJSON(e.stdout, all)
			}
			for _, st := range all {
				search := "words and meaning (" + st.EmbeddingModel + ")"
				if st.EmbeddingRefused != "" {
					search = "words only, because " + st.EmbeddingRefused
				} else if st.EmbeddingModel == "" {
					search = "words only"
				}
				fmt.Fprintf(e.stdout, "%s (%s): %d mails, %d chunks, %d embedded; search by %s\n", st.Config.Name, st.Config.ID, st.Stats.Mails, st.Stats.Chunks, st.Stats.Embedded, search)
				cov := st.Coverage
				if cov.IndexesAllMails {
					fmt.Fprintln(e.stdout, "  indexes every mail")
				} else if !cov.IndexedSince.IsZero() {
					age := ""
					if st.Config.MaxAgeDays > 0 {
						age = fmt.Sprintf(" (max age %d days)", st.Config.MaxAgeDays)
					}
					fmt.Fprintf(e.stdout, "  indexes the mails delivered since %s%s, older ones only when flagged or drafts\n",
						cov.IndexedSince.UTC().Format(time.DateOnly), age)
				}
				switch {
				case cov.Unknown:
					fmt.Fprintln(e.stdout, "  never synced")
				case !cov.SignInRefusedAt.IsZero():
					fmt.Fprintf(e.stdout, "  sign-in refused at %s: fix the password, then 'steward mail sync --retry-sign-in'\n", cov.SignInRefusedAt.Local().Format(time.DateTime))
				}
				for _, f := range cov.Folders {
					last := "not completed"
					if !f.LastCompleteSync.IsZero() {
						last = f.LastCompleteSync.Local().Format(time.DateTime)
					}
					server := "?"
					if f.ServerMessages >= 0 {
						server = fmt.Sprint(f.ServerMessages)
					}
					fmt.Fprintf(e.stdout, "  %-30s indexed %6d of %6s on the server; last complete sync %s\n", f.Path, f.Indexed, server, last)
				}
			}
			return nil
		},
	}
	cmd.Flags().String("mailbox", "", "only this mailbox")
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

// mailServiceForCLI returns the retrieval service with the index open even
// when the mail tools' preview is off: the user reads their own index.
func mailServiceForCLI(cmd *cobra.Command, a *app.App) (*mailbox.Service, error) {
	if _, err := a.MailIndexer(cmd.Context()); err != nil {
		return nil, err
	}
	return a.MailServiceForUser(cmd.Context())
}

func addConditionFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("mailbox", "", "only this mailbox")
	f.String("folder", "", "exact folder path")
	f.String("from", "", "part of the sender's address or name")
	f.String("to", "", "part of a recipient's address or name (To, Cc, Bcc)")
	f.String("after", "", "received on or after: 2026-09-01 or 2026-09-01T14:30")
	f.String("before", "", "received before: 2026-09-01 or 2026-09-01T14:30")
	f.Bool("unread", false, "only unread mails")
	f.Bool("has-attachments", false, "only mails with attachments")
	f.Bool("json", false, "write JSON")
}

func readConditions(cmd *cobra.Command) (mailindex.Filter, error) {
	f := cmd.Flags()
	var flt mailindex.Filter
	flt.Folder, _ = f.GetString("folder")
	flt.From, _ = f.GetString("from")
	flt.To, _ = f.GetString("to")
	for _, d := range []struct {
		name string
		dst  *time.Time
	}{{"after", &flt.After}, {"before", &flt.Before}} {
		v, _ := f.GetString(d.name)
		if v == "" {
			continue
		}
		args, _ := tool.ReadArgs([]byte(fmt.Sprintf(`{%q:%q}`, d.name, v)))
		dt, err := args.RequiredDate(d.name, time.Local)
		if err != nil {
			return flt, usagef("--%s %q: use a date such as 2026-09-01, or with a time of day such as 2026-09-01T14:30", d.name, v)
		}
		*d.dst = dt.Time
	}
	if !flt.After.IsZero() && !flt.Before.IsZero() && !flt.After.Before(flt.Before) {
		return flt, usagef("--after must be earlier than --before")
	}
	if f.Changed("unread") {
		v, _ := f.GetBool("unread")
		flt.Unread = &v
	}
	if f.Changed("has-attachments") {
		v, _ := f.GetBool("has-attachments")
		flt.HasAttachments = &v
	}
	return flt, nil
}

type cliMail struct {
	MailboxID   string   `json:"mailbox_id"`
	MailID      string   `json:"mail_id"`
	Received    string   `json:"received"`
	From        string   `json:"from"`
	Subject     string   `json:"subject"`
	Folders     []string `json:"folders"`
	Attachments bool     `json:"has_attachments"`
	Encrypted   string   `json:"encryption,omitempty"`
	Passage     string   `json:"passage,omitempty"`
}

func newMailSearchCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "search [conditions] [QUERY]",
		Short: "Search the local mail index by words and meaning, the way search_mails does",
		Long: `Search the local mail index by words and meaning, the way search_mails does.
The results are your own mail, shown as they are: with --json as one JSON
object ({"mailboxes": [...], "mails": [...]}). --tool-json prints instead
exactly the JSON a model gets from search_mails: filtered for prompt
injections, budgeted and paged like a tool result.`,
		Example: `  steward mail search "delivery date"
  steward mail search --mailbox work --from supplier --after 2026-11-01 "contract"
  steward mail search --unread --json
  steward mail search --tool-json "contract"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			flt, err := readConditions(cmd)
			if err != nil {
				return err
			}
			id, _ := cmd.Flags().GetString("mailbox")
			asJSON, _ := cmd.Flags().GetBool("json")
			limit, _ := cmd.Flags().GetInt("limit")
			query := strings.Join(args, " ")
			a, svc, err := openMailQuery(cmd, e, id)
			if err != nil {
				return err
			}
			defer a.Close()
			if asTool, _ := cmd.Flags().GetBool("tool-json"); asTool {
				args := toolArgs(cmd)
				if query != "" {
					args[mail.ArgQuery] = query
				}
				return printToolResult(cmd, e, mail.NewSearch(mailToolOptions(a, svc)), args)
			}
			out := []cliMail{}
			wordsOnly := map[string]bool{}
			searched := []cliMailbox{}
			for _, r := range svc.Readable(policy.High) {
				if id != "" && r.Config.ID != id {
					continue
				}
				res, err := svc.Search(cmd.Context(), r, mailbox.SearchRequest{Filter: flt, Query: query, Page: 1, PerPage: limit})
				if err != nil {
					return fmt.Errorf("%s: %w", r.Config.Name, err)
				}
				if res.Folder.Unknown {
					return usagef("mailbox %s has no folder %q; its folders are: %s", r.Config.ID, flt.Folder, strings.Join(res.Folder.Known, ", "))
				}
				wordsOnly[r.Config.ID] = res.WordsOnly
				searched = append(searched, cliMailbox{ID: r.Config.ID, Name: r.Config.Name, WordsOnly: res.WordsOnly && query != ""})
				for _, f := range res.Mails {
					m := toCLIMail(r.Config.ID, f)
					if asJSON {
						m.Received = f.Mail.Received.UTC().Format(time.RFC3339)
					}
					out = append(out, m)
				}
			}
			if asJSON {
				return writeJSON(e.stdout, map[string]any{"mailboxes": searched, "mails": out})
			}
			if len(out) == 0 {
				fmt.Fprintln(e.stderr, "No mails found.")
			}
			for _, m := range out {
				fmt.Fprintf(e.stdout, "%s  %-28s %s\n    mailbox://%s/%s\n", m.Received, trimTo(m.From, 28), m.Subject, m.MailboxID, m.MailID)
				if m.Passage != "" {
					fmt.Fprintf(e.stdout, "    %s\n", trimTo(strings.Join(strings.Fields(m.Passage), " "), 160))
				}
			}
			for mb, w := range wordsOnly {
				if w && query != "" {
					fmt.Fprintf(e.stderr, "%s was searched by words only.\n", mb)
				}
			}
			return nil
		},
	}
	addConditionFlags(cmd)
	cmd.Flags().Int("limit", 20, "results per mailbox")
	cmd.Flags().Bool("tool-json", false, "write exactly the JSON a model gets from search_mails (filtered, budgeted, paged)")
	return cmd
}

// cliMailbox is a searched mailbox in `mail search --json`.
type cliMailbox struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// WordsOnly is true when a query was searched by words only.
	WordsOnly bool `json:"words_only"`
}

func toCLIMail(mailboxID string, f mailbox.Found) cliMail {
	m := cliMail{MailboxID: mailboxID, MailID: f.Mail.ID, Folders: []string{}, Received: f.Mail.Received.Local().Format("2006-01-02 15:04"), Subject: f.Mail.Subject,
		Attachments: f.Mail.HasAttachments, Encrypted: f.Mail.Encryption, Passage: f.Passage}
	if len(f.Mail.Addresses.From) > 0 {
		m.From = f.Mail.Addresses.From[0].Addr
		if n := f.Mail.Addresses.From[0].Name; n != "" {
			m.From = n + " <" + m.From + ">"
		}
	}
	for _, l := range f.Mail.Locations {
		m.Folders = append(m.Folders, l.Folder)
	}
	return m
}

func trimTo(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func newMailCountCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "count [conditions] [--group-by folder|sender]",
		Short: "Count mails in the local index, the way count_mails does",
		Example: `  steward mail count --after 2026-11-01
  steward mail count --from legal@example.org --group-by folder --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			flt, err := readConditions(cmd)
			if err != nil {
				return err
			}
			id, _ := cmd.Flags().GetString("mailbox")
			asJSON, _ := cmd.Flags().GetBool("json")
			groupBy, _ := cmd.Flags().GetString("group-by")
			if groupBy != "" && groupBy != "folder" && groupBy != "sender" {
				return usagef("--group-by must be folder or sender, not %q", groupBy)
			}
			a, svc, err := openMailQuery(cmd, e, id)
			if err != nil {
				return err
			}
			defer a.Close()
			if asJSON {
				args := toolArgs(cmd)
				if groupBy != "" {
					args[mail.ArgGroupBy] = groupBy
				}
				return printToolResult(cmd, e, mail.NewCount(mailToolOptions(a, svc)), args)
			}
			w := bufio.NewWriter(e.stdout)
			defer w.Flush()
			for _, r := range svc.Readable(policy.High) {
				if id != "" && r.Config.ID != id {
					continue
				}
				res, err := svc.Count(cmd.Context(), r, flt, groupBy)
				if err != nil {
					return fmt.Errorf("%s: %w", r.Config.Name, err)
				}
				if res.Folder.Unknown {
					return usagef("mailbox %s has no folder %q; its folders are: %s", r.Config.ID, flt.Folder, strings.Join(res.Folder.Known, ", "))
				}
				{
					fmt.Fprintf(w, "%s: %d mails", r.Config.Name, res.Mails)
					if res.ServerMessages >= 0 {
						fmt.Fprintf(w, " (the server holds %d in these folders, %d unseen)", res.ServerMessages, res.ServerUnseen)
					}
					fmt.Fprintln(w)
					for _, g := range res.Groups {
						fmt.Fprintf(w, "  %-40s %d\n", g.Key, g.Mails)
					}
				}
			}
			return nil
		},
	}
	addConditionFlags(cmd)
	cmd.Flags().String("group-by", "", "folder or sender")
	return cmd
}

// toolArgs turns the condition flags into the mail tools' arguments.
func toolArgs(cmd *cobra.Command) map[string]any {
	f := cmd.Flags()
	args := map[string]any{}
	if v, _ := f.GetString("mailbox"); v != "" {
		args[mail.ArgMailboxIDs] = []string{v}
	}
	for flag, arg := range map[string]string{"folder": mail.ArgFolder, "from": mail.ArgFrom, "to": mail.ArgTo, "after": mail.ArgAfter, "before": mail.ArgBefore} {
		if v, _ := f.GetString(flag); v != "" {
			args[arg] = v
		}
	}
	for flag, arg := range map[string]string{"unread": mail.ArgIsUnread, "has-attachments": mail.ArgHasAttachments} {
		if f.Changed(flag) {
			v, _ := f.GetBool(flag)
			args[arg] = v
		}
	}
	return args
}

// printToolResult runs a mail tool the way a model's call would, against
// a HIGH-confidence provider and an empty chat, and writes exactly the JSON
// the model would read: filtered, budgeted and paged like a tool result.
func printToolResult(cmd *cobra.Command, e env, t tool.Tool, args map[string]any) error {
	raw, _ := json.Marshal(args)
	res, err := t.Execute(cmd.Context(), raw, tool.ExecContext{Definition: t.Definition(), ProviderConfidence: policy.High, ProviderTrusted: true, Chat: &chat.Thread{}})
	if err != nil {
		return err
	}
	var v any
	if json.Unmarshal([]byte(res.ModelContent()), &v) == nil {
		return writeJSON(e.stdout, v)
	}
	_, err = fmt.Fprintln(e.stdout, res.ModelContent())
	return err
}

// openMailQuery opens the app and the retrieval service over the user's
// own index for search and count, after checking the mailbox flag.
func openMailQuery(cmd *cobra.Command, e env, id string) (*app.App, *mailbox.Service, error) {
	a, _, err := openMailboxes(cmd, e, id)
	if err != nil {
		return nil, nil, err
	}
	svc, err := mailServiceForCLI(cmd, a)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, svc, nil
}

func mailToolOptions(a *app.App, svc *mailbox.Service) mail.Options {
	return mail.Options{Service: svc, Guard: a.Filter(), Location: time.Local, Logger: a.Logger}
}

// openMailboxes opens the app and returns the configured mailboxes, or the
// one the --mailbox flag names. The caller closes the app.
func openMailboxes(cmd *cobra.Command, e env, id string) (*app.App, []mailbox.Config, error) {
	a, err := openApp(cmd, e)
	if err != nil {
		return nil, nil, err
	}
	boxes, err := selectMailboxes(a, id)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, boxes, nil
}
