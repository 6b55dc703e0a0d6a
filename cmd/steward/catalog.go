package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
)

func newToolsCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools [--provider P]",
		Short: "Show the tool catalogue, and why a tool would not be offered to a provider",
		Long: `Show every tool collection with its tools, whether it is active and configured,
its minimum provider confidence and where its tools send data. With --provider
(or any provider flag) it also says, per tool, why it would not be offered to
that provider, and how many tokens the offered tools add to each request.`,
		Example: `  steward tools
  steward tools --provider ollama
  steward tools --provider openai --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			asJSON, _ := cmd.Flags().GetBool("json")
			var rp *app.ResolvedProvider
			pf := providerFlags(cmd)
			if pf.Provider != "" || pf.BaseURL != "" {
				if rp, err = a.ResolveProvider(cmd.Context(), pf); err != nil {
					return err
				}
			}
			cat := a.ToolCatalog(cmd.Context(), rp, nil)
			rows, tokens := cat.Tools, cat.ToolTokens
			ctxTools := contextToolRows(cmd, a, rp)
			if asJSON {
				out := map[string]any{"tools": rows, "context_tools": ctxTools}
				if rp != nil {
					out["provider"] = map[string]any{"title": rp.Title, "confidence": rp.Confidence.String()}
					out["tool_tokens"] = tokens
				}
				return writeJSON(e.stdout, out)
			}
			if len(rows) == 0 {
				fmt.Fprintln(e.stdout, "No tools are available in this installation.")
			}
			for _, r := range rows {
				state := "active"
				if !r.Active {
					state = "switched off"
				}
				fmt.Fprintf(e.stdout, "%-18s %-13s %-28s min %-9s sends: %s\n", r.ID, state, r.ConfigState, r.MinimumConfidence, strings.Join(uniq(r.OutboundData), ", "))
				if len(r.Tools) > 1 || (len(r.Tools) == 1 && r.Tools[0] != r.ID) {
					fmt.Fprintf(e.stdout, "%-18s tools: %s\n", "", strings.Join(r.Tools, ", "))
				}
				if r.Offered != nil {
					if *r.Offered {
						fmt.Fprintf(e.stdout, "%-18s offered to %s\n", "", rp.Title)
					} else {
						fmt.Fprintf(e.stdout, "%-18s not offered to %s: %s\n", "", rp.Title, r.NotOfferedBecause)
					}
				}
			}
			writeContextTools(e, ctxTools, rp)
			if rp != nil && tokens >= 0 {
				fmt.Fprintf(e.stdout, "\nThe tools offered to %s add about %d tokens to each request.\n", rp.Title, tokens)
			}
			for _, p := range a.RegistryProblems {
				fmt.Fprintf(e.stderr, "warning: %v\n", p)
			}
			return nil
		},
	}
	addProviderFlags(cmd)
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func newProvidersCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "providers",
		Short: "List the providers Steward can use and their confidence under the active scheme",
		Example: `  steward providers
  steward providers --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			asJSON, _ := cmd.Flags().GetBool("json")
			scheme := a.Org.Scheme()
			rows, problems := a.ProviderChoices(cmd.Context())
			for _, err := range problems {
				fmt.Fprintf(e.stderr, "warning: %v\n", err)
			}
			if asJSON {
				return writeJSON(e.stdout, map[string]any{"scheme": string(scheme.Scheme), "providers": rows})
			}
			fmt.Fprintf(e.stdout, "Confidence scheme: %s\n\n", scheme.Scheme)
			for _, r := range rows {
				fmt.Fprintf(e.stdout, "%-12s %-22s %-9s %-40s %s\n", r.ID, r.Title, r.Confidence, r.BaseURL, r.Key)
				if r.NotSelfHosted != "" {
					fmt.Fprintf(e.stdout, "%-12s counted as a cloud provider, not self-hosted: %s\n", "", r.NotSelfHosted)
				}
				if r.NotSelfHosted != "" {
					fmt.Fprintf(e.stdout, "%-12s counted as a cloud provider, not self-hosted: %s\n", "", r.NotSelfHosted)
				}
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}
