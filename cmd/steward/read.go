package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
)

func extraCommands(e env) []*cobra.Command {
	return []*cobra.Command{newReadCmd(e), newMailCmd(e), newSourcesCmd(e), newMCPCmd(e), newServeCmd(e)}
}

func newReadCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "read URL",
		Short: "Show a web page the way a model would see it",
		Long: `Read a web page through Steward's page retrieval service and prompt-injection
filter, and print what a model would get: the final URL, the title, the content
kind (an extracted page or a complete text document), the Markdown, and what
the filter neutralized and why. You typed the address, so the user-chosen policy
applies and your own network may be read.`,
		Example: `  steward read https://go.dev/doc/go1.26
  steward read --json http://127.0.0.1:8080/notes.txt
  steward read --max-chars 0 https://example.org/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("read takes exactly one URL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			maxChars, _ := cmd.Flags().GetInt("max-chars")
			asJSON, _ := cmd.Flags().GetBool("json")
			start := time.Now()
			prep, page, err := a.ReadUserPage(cmd.Context(), args[0], maxChars)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, map[string]any{
					"page": prep,
					"timings_ms": map[string]float64{
						"dns": ms(page.Timings.DNS), "connect": ms(page.Timings.Connect), "retrieval": ms(page.Timings.Total), "total": ms(time.Since(start)),
					},
					"redirects": page.Redirects,
					"status":    page.StatusCode,
				})
			}
			fmt.Fprintf(e.stdout, "URL:     %s\n", prep.FinalURL)
			if prep.Title != "" {
				fmt.Fprintf(e.stdout, "Title:   %s\n", prep.Title)
			}
			fmt.Fprintf(e.stdout, "Kind:    %s (%s)\n", prep.Kind, prep.MediaType)
			if prep.Truncated {
				fmt.Fprintf(e.stdout, "Length:  truncated from %d to %d characters\n", prep.OriginalChars, prep.ReturnedChars)
			}
			fmt.Fprintf(e.stdout, "\n%s\n", prep.Markdown)
			if len(prep.Findings) == 0 {
				fmt.Fprintln(e.stderr, "\nFilter: nothing suspicious found.")
			} else {
				fmt.Fprintf(e.stderr, "\nFilter: neutralized %d finding(s):\n", len(prep.Findings))
				for _, f := range prep.Findings {
					fmt.Fprintf(e.stderr, "- %s in %s (%s): %s\n", f.Category, f.Field, f.Rule, f.Snippet)
				}
			}
			if prep.FilterWarning {
				fmt.Fprintln(e.stderr, "Warning: the external classifier could not check this page; the built-in checks ran.")
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "write one JSON object with the page, what the filter neutralized and the timings")
	cmd.Flags().Int("max-chars", app.UserPageChars, "character budget of the content (0 keeps it whole), as read_web_page applies it")
	return cmd
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// attachURL reads a page the user chose for `ask --url`. The address then
// counts as given to the model, because it stands in the user's message.
func attachURL(ctx context.Context, a *app.App, rawURL string) (chat.Document, error) {
	prep, _, err := a.ReadUserPage(ctx, rawURL, app.UserPageChars)
	if err != nil {
		return chat.Document{}, err
	}
	text := prep.Markdown
	if prep.Title != "" {
		text = "# " + prep.Title + "\n\n" + text
	}
	return chat.Document{Name: prep.FinalURL, Text: "Source: " + prep.FinalURL + "\n\n" + text}, nil
}
