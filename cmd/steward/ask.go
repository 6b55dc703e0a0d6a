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
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/store"
	"github.com/stewardhq/steward/tool"
)

// maxStdin is the most text `ask` takes from stdin. More is refused, never
// cut: a cut prompt would be answered as if it were whole.
const maxStdin = 16 << 20

func newAskCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ask [flags] [PROMPT|-]",
		Short: "Answer one prompt, using tools where they help",
		Long: `Answer one prompt. The answer streams to stdout; tool activity and the sources
used by tools go to stderr. Text piped into Steward is added to the prompt (after
it, separated by a blank line); piped text alone is a prompt too, and so is "-",
which reads the prompt from stdin (at most 16 MiB). The chat is stored, so it can
be continued with --continue, --chat ID or 'steward chat --resume ID'.`,
		Example: `  steward ask "What is the capital of Australia?"
  steward ask --provider ollama --model llama3.1 "Hello"
  steward ask --tools web_search,read_web_page "What happened in Go 1.26?"
  steward ask --url https://go.dev/doc/go1.26 "Summarize this page"
  git diff | steward ask "review this"
  steward ask --continue "and in French?"
  steward ask --sources docs,hr "How long is parental leave?"
  steward ask --retrieval classic "What does the release plan say?"
  git diff | steward ask --json -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt, err := readPrompt(args, e)
			if err != nil {
				return err
			}
			asJSON, _ := cmd.Flags().GetBool("json")
			noTools, _ := cmd.Flags().GetBool("no-tools")
			noSave, _ := cmd.Flags().GetBool("no-save")
			urls, _ := cmd.Flags().GetStringArray("url")
			cont, _ := cmd.Flags().GetBool("continue")
			chatID, _ := cmd.Flags().GetString("chat")
			if cont && chatID != "" {
				return usagef("--continue and --chat both name a chat: use one of them")
			}
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
			if cont || chatID != "" {
				if t, p, err = resumeChat(cmd, a, chatID); err != nil {
					return err
				}
			} else {
				if p, err = resolveProvider(cmd, a); err != nil {
					return err
				}
				t = app.NewThread()
			}
			if err := choice.apply(a, t); err != nil {
				return err
			}
			turn := app.Turn{Text: prompt, NoTools: noTools, Selected: selected, OnOffer: reportNotOffered(e, a, p, selected)}
			for _, u := range urls {
				doc, err := attachURL(cmd.Context(), a, u)
				if err != nil {
					return err
				}
				turn.Documents = append(turn.Documents, doc)
			}
			var sink loop.Sink = textSink{out: e.stdout, errw: e.stderr, flush: e.flush}
			var js jsonSink
			if asJSON {
				js = newJSONSink(e.stdout, e.flush)
				js.Emit(loop.Event{Type: loop.EventChat, Chat: &loop.ChatInfo{ID: t.ID, Stored: !noSave, Continued: cont || chatID != ""}})
				sink = js
			}
			res, runErr := a.Answer(cmd.Context(), t, p, turn, sink)
			if asJSON {
				js.close(e.secrets.Error(runErr))
			} else if res != nil {
				(&sourceNotices{}).report(e.stderr, res.Retrieval)
			}
			if !noSave && len(t.History()) > 0 {
				if err := saveThread(context.WithoutCancel(cmd.Context()), a, t, p); err != nil {
					fmt.Fprintf(e.stderr, "steward: the chat could not be stored: %v\n", err)
				} else if !asJSON {
					note := ""
					if runErr != nil {
						note = " with the answer marked incomplete"
					}
					fmt.Fprintf(e.stderr, "[chat %s stored%s; continue with: steward ask --chat %s PROMPT, or steward chat --resume %s]\n", t.ID[:8], note, t.ID[:8], t.ID[:8])
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
	cmd.Flags().BoolP("continue", "c", false, "continue the most recent stored chat")
	cmd.Flags().String("chat", "", "continue the stored chat with this ID (or a unique prefix of it)")
	addSourceFlags(cmd)
	return cmd
}

// readPrompt puts the prompt together: the arguments, and what was piped
// into stdin after a blank line; "-" alone reads the whole prompt from
// stdin. More than maxStdin bytes of stdin is refused.
func readPrompt(args []string, e env) (string, error) {
	prompt := strings.Join(args, " ")
	fromStdin := prompt == "-"
	if fromStdin {
		prompt = ""
	}
	var piped string
	if fromStdin || (e.stdinPiped && e.stdin != nil) {
		b, err := io.ReadAll(io.LimitReader(e.stdin, maxStdin+1))
		if err != nil {
			return "", fmt.Errorf("reading stdin: %w", err)
		}
		if len(b) > maxStdin {
			return "", usagef("stdin holds more than %d MiB, the most ask takes: shorten it (e.g. with head -c) or attach the text in parts", maxStdin>>20)
		}
		piped = string(b)
	}
	switch {
	case strings.TrimSpace(piped) == "":
	case strings.TrimSpace(prompt) == "":
		prompt = piped
	default:
		prompt = prompt + "\n\n" + piped
	}
	if strings.TrimSpace(prompt) == "" {
		if len(args) == 0 {
			return "", usagef("ask needs a prompt: as arguments, piped into stdin, or - to read it from stdin")
		}
		return "", usagef("the prompt is empty")
	}
	return prompt, nil
}

// toolSelection reads --tools: nil when it was not given (the saved
// selection applies), the IDs otherwise. An ID the registry does not know
// is a usage error naming the known ones.
func toolSelection(cmd *cobra.Command, a *app.App) ([]string, error) {
	if !cmd.Flags().Changed("tools") {
		return nil, nil
	}
	s, _ := cmd.Flags().GetString("tools")
	ids := splitList(s)
	var unknown []string
	for _, id := range ids {
		if !a.Registry.IsKnown(id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		var known []string
		for _, item := range a.Registry.Catalog(cmd.Context(), registry.ComponentChat) {
			known = append(known, item.ID)
			for _, tl := range item.Tools {
				if tl.ID != item.ID {
					known = append(known, tl.ID)
				}
			}
		}
		word := "ID"
		if len(unknown) > 1 {
			word = "IDs"
		}
		return nil, usagef("--tools: unknown tool or collection %s %s; the known ones are: %s", word, strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

// reportNotOffered returns the OnOffer hook that tells the user, one line
// per collection, which of the tools they selected is not offered and why.
func reportNotOffered(e env, a *app.App, p *app.ResolvedProvider, selected []string) func([]tool.Offered, []registry.Block) {
	from := "--tools"
	if selected == nil {
		selected, from = a.User.SelectedTools, "your saved tool selection"
	}
	want := map[string]bool{}
	for _, id := range selected {
		want[a.Registry.CollectionID(id)] = true
	}
	return func(_ []tool.Offered, blocked []registry.Block) {
		told := map[string]bool{}
		for _, b := range blocked {
			cid := a.Registry.CollectionID(b.ToolID)
			if !want[cid] || told[cid] || (b.Reason == registry.NoBlock && b.Err == nil) {
				continue
			}
			told[cid] = true
			why := b.Reason.String()
			if b.Reason == registry.NoBlock {
				why = "it could not be prepared"
			}
			if b.Detail != "" {
				why += " (" + b.Detail + ")"
			}
			fmt.Fprintf(e.stderr, "steward: %s: %s is not offered to %s: %s\n", from, cid, p.Title, why)
		}
	}
}

// resolveProvider resolves the provider flags for a new chat and refuses a
// cloud provider without its key before anything else happens.
func resolveProvider(cmd *cobra.Command, a *app.App) (*app.ResolvedProvider, error) {
	p, err := a.ResolveProvider(cmd.Context(), providerFlags(cmd))
	if err != nil {
		if errors.Is(err, app.ErrBadFlag) {
			return nil, usageError{err}
		}
		return nil, err
	}
	if err := app.CheckKey(p); err != nil {
		return nil, err
	}
	return p, nil
}

// resumeChat loads a stored chat (the most recent one when id is empty)
// and the provider to continue it with: the one the flags name, else the
// chat's own, or an error saying why that one cannot be used.
func resumeChat(cmd *cobra.Command, a *app.App, id string) (*chat.Thread, *app.ResolvedProvider, error) {
	st, err := a.OpenStore(cmd.Context())
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	if id == "" {
		list, err := st.List(cmd.Context())
		if err != nil {
			return nil, nil, err
		}
		if len(list) == 0 {
			return nil, nil, errors.New("there is no stored chat to continue yet")
		}
		id = list[0].ID
	}
	c, err := st.Load(cmd.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	t := app.FromStored(c)
	p, err := chatProvider(cmd, a, c)
	if err != nil {
		return nil, nil, err
	}
	if err := app.CheckProviderAllowed(t, p); err != nil {
		return nil, nil, err
	}
	return t, p, nil
}

// chatProvider is the provider a stored chat continues with: the flags'
// when any names a provider, else the chat's own provider and model (on
// the server it used), with --model still applying.
func chatProvider(cmd *cobra.Command, a *app.App, c *store.Chat) (*app.ResolvedProvider, error) {
	f := providerFlags(cmd)
	if f.Provider != "" || f.BaseURL != "" || c.Provider == "" {
		return resolveProvider(cmd, a)
	}
	sf := app.ProviderFlags{Provider: c.Provider, Model: firstNonBlank(f.Model, c.Model), API: f.API}
	if k, ok := llm.LookupKind(c.Provider); ok && c.BaseURL != "" {
		if info, _ := k.Info(); c.BaseURL != info.DefaultBaseURL {
			sf.BaseURL = c.BaseURL
		}
	}
	p, err := a.ResolveProvider(cmd.Context(), sf)
	if err == nil {
		err = app.CheckKey(p)
	}
	if err != nil {
		return nil, fmt.Errorf("this chat was answered by %s (model %s), which cannot be used now: %w; pass --provider (and --model) to continue it with another provider", c.Provider, c.Model, err)
	}
	return p, nil
}

func saveThread(ctx context.Context, a *app.App, t *chat.Thread, p *app.ResolvedProvider) error {
	st, err := a.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Save(ctx, app.ToStored(t, p))
}
