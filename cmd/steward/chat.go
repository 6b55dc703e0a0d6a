package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/store"
)

func newChatCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Chat interactively; answers stream, tools and sources are shown",
		Long: `Chat interactively. Type a message and press Enter; the answer streams back,
the tools being used are shown as they run, and each answer ends with the
sources used by tools. Every answer is stored. On a terminal, lines can be
edited and earlier ones recalled with the arrow keys (Ctrl-R searches them).
Ctrl-C stops the answer being written and keeps the chat; at an empty prompt it
leaves the chat. Commands inside the chat: /tools lists what is offered,
/exit (or Ctrl-D) ends the chat. A resumed chat continues with its own
provider unless --provider names another.`,
		Example: `  steward chat
  steward chat --provider anthropic --tools web_search
  steward chat --resume 3f2a9c1e
  steward chat --sources docs --retrieval classic`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			choice, err := parseSourceFlags(cmd)
			if err != nil {
				return err
			}
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			selected, err := toolSelection(cmd, a)
			if err != nil {
				return err
			}
			var t *chat.Thread
			var p *app.ResolvedProvider
			if resume, _ := cmd.Flags().GetString("resume"); resume != "" {
				if t, p, err = resumeChat(cmd, a, resume); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "Resumed chat %s (%q, %d messages).\n", t.ID[:8], t.Title, len(t.Messages))
			} else {
				if p, err = resolveProvider(cmd, a); err != nil {
					return err
				}
				t = app.NewThread()
			}
			if err := choice.apply(a, t); err != nil {
				return err
			}
			var notices sourceNotices
			in, err := newLineReader(e, filepath.Join(a.DataDir, "chat_history"))
			if err != nil {
				return err
			}
			defer in.Close()
			fmt.Fprintf(e.stderr, "Chatting with %s (confidence %s). /exit or Ctrl-D ends the chat; Ctrl-C stops an answer.\n", p.Title, p.Confidence)
			leave := func(code int) error {
				if len(t.History()) > 0 {
					fmt.Fprintf(e.stderr, "Chat %s stored; continue with: steward chat --resume %s\n", t.ID[:8], t.ID[:8])
				}
				if code != exitOK {
					return printedError{code: code}
				}
				return nil
			}
			for {
				line, err := in.ReadLine(cmd.Context(), "> ")
				switch {
				case errors.Is(err, errLineInterrupted):
					if strings.TrimSpace(line) != "" {
						continue // Ctrl-C drops what was typed
					}
					fmt.Fprintln(e.stderr)
					return leave(exitInterrupted)
				case errors.Is(err, io.EOF):
					fmt.Fprintln(e.stderr)
					return leave(exitOK)
				case err != nil:
					return fmt.Errorf("reading your input: %w", err)
				}
				line = strings.TrimSpace(line)
				switch line {
				case "":
					continue
				case "/exit", "/quit":
					return leave(exitOK)
				case "/tools":
					res, _ := a.Registry.Runnable(cmd.Context(), a.RunnableRequest(t, p, selected))
					n, _ := a.CountToolTokens(p.Model, res)
					for _, o := range res {
						fmt.Fprintf(e.stderr, "  %s\n", o.Definition.ID)
					}
					fmt.Fprintf(e.stderr, "  (%d tools offered, adding about %d tokens to each request)\n", len(res), n)
					continue
				}
				// Ctrl-C while the answer streams stops this answer only.
				actx, stop := context.WithCancel(cmd.Context())
				restore := e.interrupts.handle(stop)
				turn := app.Turn{Text: line, Selected: selected, OnOffer: reportNotOffered(e, a, p, selected)}
				res, runErr := a.Answer(actx, t, p, turn, textSink{out: e.stdout, errw: e.stderr, flush: e.flush})
				restore()
				stop()
				if res != nil {
					notices.report(e.stderr, res.Retrieval)
				}
				if err := saveThread(context.WithoutCancel(cmd.Context()), a, t, p); err != nil {
					fmt.Fprintf(e.stderr, "steward: the chat could not be stored: %v\n", err)
				}
				switch {
				case runErr == nil:
				case cmd.Context().Err() != nil:
					// Steward itself is being ended (SIGTERM).
					return leave(exitInterrupted)
				case errors.Is(runErr, context.Canceled):
					fmt.Fprintln(e.stderr, "[stopped; what arrived is kept, marked incomplete]")
				default:
					fmt.Fprintf(e.stderr, "steward: %s: %v\n", p.Title, e.secrets.Error(runErr))
				}
			}
		},
	}
	addProviderFlags(cmd)
	cmd.Flags().String("tools", "", "comma-separated tool or collection IDs to offer (default: your saved selection)")
	cmd.Flags().String("resume", "", "continue a stored chat by its ID or a unique prefix of it")
	addSourceFlags(cmd)
	return cmd
}

func newChatsCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chats [list | show ID | delete ID]",
		Short: "List, show or delete stored chats",
		Example: `  steward chats
  steward chats show 3f2a9c1e
  steward chats delete 3f2a9c1e`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			st, err := a.OpenStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			asJSON, _ := cmd.Flags().GetBool("json")
			verb := "list"
			if len(args) > 0 {
				verb = args[0]
			}
			switch verb {
			case "list":
				if len(args) > 1 {
					return usagef("chats list takes no ID")
				}
				list, err := st.List(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					rows := []chatSummaryJSON{}
					for _, c := range list {
						rows = append(rows, chatSummaryJSON{ID: c.ID, Title: c.Title, Updated: c.Updated.UTC().Format(time.RFC3339), Messages: c.Messages})
					}
					return writeJSON(e.stdout, rows)
				}
				if len(list) == 0 {
					fmt.Fprintln(e.stderr, "No stored chats yet.")
				}
				for _, s := range list {
					fmt.Fprintf(e.stdout, "%s  %s  %3d messages  %s\n", s.ID[:min(8, len(s.ID))], s.Updated.Local().Format("2006-01-02 15:04"), s.Messages, s.Title)
				}
				return nil
			case "show":
				if len(args) != 2 {
					return usagef("chats show needs a chat ID")
				}
				c, err := st.Load(cmd.Context(), args[1])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(e.stdout, chatJSONOf(c))
				}
				fmt.Fprintf(e.stdout, "# %s\n(chat %s; requires provider confidence %s, data security %s", c.Title, c.ID, c.RequiredConfidence, c.DataSecurity)
				if c.Outbound.Set {
					fmt.Fprintf(e.stdout, ", outbound %s demanded by %s", c.Outbound.Restriction, outboundDemander(c.Outbound))
				}
				fmt.Fprintln(e.stdout, ")")
				for _, m := range c.Messages {
					role := m.Role
					if m.Incomplete {
						role += " (incomplete: the answer was cut off)"
					}
					fmt.Fprintf(e.stdout, "\n## %s\n%s\n", role, m.Text)
					for _, tr := range m.Traces {
						fmt.Fprintf(e.stdout, "- tool %s: %s %s\n", tr.ToolName, tr.Status, tr.StatusMessage)
					}
					for _, s := range m.Sources {
						fmt.Fprintf(e.stdout, "- source: %s <%s>\n", s.Title, s.URL)
					}
				}
				return nil
			case "delete", "rm":
				if len(args) != 2 {
					return usagef("chats delete needs a chat ID")
				}
				id, err := st.Delete(cmd.Context(), args[1])
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "Deleted chat %s.\n", id)
				return nil
			}
			return usagef("unknown chats command %q: use list, show ID or delete ID", verb)
		},
	}
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

// The JSON shapes of `steward chats --json` and `chats show --json`: snake
// case names, levels as their names, [] for empty lists.
type chatSummaryJSON struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Updated  string `json:"updated"`
	Messages int    `json:"messages"`
}

type chatJSON struct {
	ID                 string        `json:"id"`
	Title              string        `json:"title"`
	Provider           string        `json:"provider"`
	Model              string        `json:"model"`
	BaseURL            string        `json:"base_url"`
	Created            string        `json:"created"`
	Updated            string        `json:"updated"`
	RequiredConfidence string        `json:"required_confidence"`
	DataSecurity       string        `json:"data_security"`
	Outbound           *outboundJSON `json:"outbound_restriction,omitempty"`
	// DataSources are the chat's own data-source options, when it has any.
	DataSources *store.DataSourceOptions `json:"data_sources,omitempty"`
	Messages    []messageJSON            `json:"messages"`
}

type outboundJSON struct {
	Restriction string `json:"restriction"`
	MailboxID   string `json:"mailbox_id"`
	MailboxName string `json:"mailbox_name"`
}

type messageJSON struct {
	Role       string           `json:"role"`
	Text       string           `json:"text"`
	Hidden     bool             `json:"hidden"`
	Incomplete bool             `json:"incomplete"`
	Created    string           `json:"created"`
	Documents  []store.Document `json:"documents"`
	Traces     []store.Trace    `json:"traces"`
	Sources    []store.Source   `json:"sources"`
}

func chatJSONOf(c *store.Chat) chatJSON {
	out := chatJSON{ID: c.ID, Title: c.Title, Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL,
		Created: c.Created.UTC().Format(time.RFC3339), Updated: c.Updated.UTC().Format(time.RFC3339),
		RequiredConfidence: c.RequiredConfidence.String(), DataSecurity: c.DataSecurity.String(), Messages: []messageJSON{}}
	out.DataSources = c.DataSources
	if c.Outbound.Set {
		out.Outbound = &outboundJSON{Restriction: c.Outbound.Restriction.String(), MailboxID: c.Outbound.MailboxID, MailboxName: c.Outbound.MailboxName}
	}
	for _, m := range c.Messages {
		out.Messages = append(out.Messages, messageJSON{Role: m.Role, Text: m.Text, Hidden: m.Hidden, Incomplete: m.Incomplete,
			Created: m.Created.UTC().Format(time.RFC3339), Documents: nonNil(m.Documents), Traces: nonNil(m.Traces), Sources: nonNil(m.Sources)})
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
