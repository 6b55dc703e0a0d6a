package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/loop"
)

func newAskCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ask [flags] PROMPT|-",
		Short: "Answer one prompt, using tools where they help",
		Long: `Answer one prompt. The answer streams to stdout; tool activity and the sources
used by tools go to stderr. With "-" the prompt is read from stdin. The chat is
stored, so it can be continued with 'steward chat --resume ID'.`,
		Example: `  steward ask "What is the capital of Australia?"
  steward ask --provider ollama --model llama3.1 "Hello"
  steward ask --tools web_search,read_web_page "What happened in Go 1.26?"
  steward ask --url https://go.dev/doc/go1.26 "Summarize this page"
  steward ask --sources docs,hr "How long is parental leave?"
  steward ask --retrieval classic "What does the release plan say?"
  git diff | steward ask --json -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("ask needs a prompt, or - to read it from stdin")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt := strings.Join(args, " ")
			if prompt == "-" {
				b, err := io.ReadAll(io.LimitReader(e.stdin, 16<<20))
				if err != nil {
					return fmt.Errorf("reading the prompt from stdin: %w", err)
				}
				prompt = string(b)
			}
			if strings.TrimSpace(prompt) == "" {
				return usagef("the prompt is empty")
			}
			asJSON, _ := cmd.Flags().GetBool("json")
			toolsFlag, _ := cmd.Flags().GetString("tools")
			noTools, _ := cmd.Flags().GetBool("no-tools")
			noSave, _ := cmd.Flags().GetBool("no-save")
			urls, _ := cmd.Flags().GetStringArray("url")
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
			turn := app.Turn{Text: prompt, NoTools: noTools}
			if cmd.Flags().Changed("tools") {
				turn.Selected = splitList(toolsFlag)
				if turn.Selected == nil {
					turn.Selected = []string{}
				}
			}
			for _, u := range urls {
				doc, err := attachURL(cmd.Context(), a, u)
				if err != nil {
					return err
				}
				turn.Documents = append(turn.Documents, doc)
			}
			var sink loop.Sink = textSink{out: e.stdout, errw: e.stderr}
			if asJSON {
				sink = newJSONSink(e.stdout)
			}
			t := app.NewThread()
			if err := choice.apply(a, t); err != nil {
				return err
			}
			res, runErr := a.Answer(cmd.Context(), t, p, turn, sink)
			if res != nil && !asJSON {
				(&sourceNotices{}).report(e.stderr, res.Retrieval)
			}
			if !noSave {
				if err := saveThread(context.WithoutCancel(cmd.Context()), a, t, p); err != nil {
					fmt.Fprintf(e.stderr, "steward: the chat could not be stored: %v\n", err)
				} else if !asJSON {
					fmt.Fprintf(e.stderr, "[chat %s stored; continue with: steward chat --resume %s]\n", t.ID[:8], t.ID[:8])
				}
			}
			if runErr != nil {
				if errors.Is(runErr, context.Canceled) {
					return runErr
				}
				return fmt.Errorf("%s: %w", p.Title, runErr)
			}
			return nil
		},
	}
	addProviderFlags(cmd)
	cmd.Flags().String("tools", "", "comma-separated tool or collection IDs to offer (default: your saved selection)")
	cmd.Flags().Bool("no-tools", false, "offer no tools")
	cmd.Flags().Bool("json", false, "write one JSON event per line on stdout (see README)")
	cmd.Flags().Bool("no-save", false, "do not store the chat")
	cmd.Flags().StringArray("url", nil, "attach a web page you chose (read with the user-chosen policy); repeatable")
	addSourceFlags(cmd)
	return cmd
}

func saveThread(ctx context.Context, a *app.App, t *chat.Thread, p *app.ResolvedProvider) error {
	st, err := a.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Save(ctx, app.ToStored(t, p))
}
