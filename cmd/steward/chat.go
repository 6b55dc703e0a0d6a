package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
)

func newChatCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Chat interactively; answers stream, tools and sources are shown",
		Long: `Chat interactively. Type a message and press Enter; the answer streams back,
the tools being used are shown as they run, and each answer ends with the
sources used by tools. Every answer is stored. Commands inside the chat:
/tools lists what is offered, /exit (or Ctrl-D) ends the chat.`,
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
			p, err := a.ResolveProvider(cmd.Context(), providerFlags(cmd))
			if err != nil {
				return err
			}
			var selected []string
			if cmd.Flags().Changed("tools") {
				s, _ := cmd.Flags().GetString("tools")
				selected = splitList(s)
				if selected == nil {
					selected = []string{}
				}
			}
			var t *chat.Thread
			resume, _ := cmd.Flags().GetString("resume")
			if resume != "" {
				st, err := a.OpenStore(cmd.Context())
				if err != nil {
					return err
				}
				c, err := st.Load(cmd.Context(), resume)
				st.Close()
				if err != nil {
					return err
				}
				t = app.FromStored(c)
				fmt.Fprintf(e.stderr, "Resumed chat %s (%q, %d messages).\n", t.ID[:8], t.Title, len(t.Messages))
				if err := app.CheckProviderAllowed(t, p); err != nil {
					return err
				}
			} else {
				t = app.NewThread()
			}
			if err := choice.apply(a, t); err != nil {
				return err
			}
			var notices sourceNotices
			fmt.Fprintf(e.stderr, "Chatting with %s (confidence %s). /exit ends the chat.\n", p.Title, p.Confidence)
			in := bufio.NewScanner(e.stdin)
			in.Buffer(make([]byte, 64*1024), 16<<20)
			for {
				fmt.Fprint(e.stderr, "> ")
				if !in.Scan() {
					fmt.Fprintln(e.stderr)
					break
				}
				line := strings.TrimSpace(in.Text())
				switch line {
				case "":
					continue
				case "/exit", "/quit":
					return nil
				case "/tools":
					res, _ := a.Registry.Runnable(cmd.Context(), a.RunnableRequest(t, p, selected))
					n, _ := a.CountToolTokens(p.Model, res)
					for _, o := range res {
						fmt.Fprintf(e.stderr, "  %s\n", o.Definition.ID)
					}
					fmt.Fprintf(e.stderr, "  (%d tools offered, adding about %d tokens to each request)\n", len(res), n)
					continue
				}
				res, runErr := a.Answer(cmd.Context(), t, p, app.Turn{Text: line, Selected: selected}, textSink{out: e.stdout, errw: e.stderr})
				if res != nil {
					notices.report(e.stderr, res.Retrieval)
				}
				if err := saveThread(context.WithoutCancel(cmd.Context()), a, t, p); err != nil {
					fmt.Fprintf(e.stderr, "steward: the chat could not be stored: %v\n", err)
				}
				if runErr != nil {
					if errors.Is(runErr, context.Canceled) {
						return runErr
					}
					fmt.Fprintf(e.stderr, "steward: %s: %v\n", p.Title, runErr)
				}
			}
			if err := in.Err(); err != nil {
				return fmt.Errorf("reading your input: %w", err)
			}
			fmt.Fprintf(e.stderr, "Chat %s stored; continue with: steward chat --resume %s\n", t.ID[:8], t.ID[:8])
			return nil
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
					return writeJSON(e.stdout, list)
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
					return writeJSON(e.stdout, c)
				}
				fmt.Fprintf(e.stdout, "# %s\n(chat %s; requires provider confidence %s, data security %s", c.Title, c.ID, c.RequiredConfidence, c.DataSecurity)
				if c.Outbound.Set {
					fmt.Fprintf(e.stdout, ", outbound %s demanded by %s", c.Outbound.Restriction, outboundDemander(c.Outbound))
				}
				fmt.Fprintln(e.stdout, ")")
				for _, m := range c.Messages {
					fmt.Fprintf(e.stdout, "\n## %s\n%s\n", m.Role, m.Text)
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
