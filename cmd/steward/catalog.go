package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/registry"
)

type toolRow struct {
	ID                string   `json:"id"`
	Collection        string   `json:"collection"`
	Tools             []string `json:"tools"`
	Active            bool     `json:"active"`
	Configured        bool     `json:"configured"`
	ConfigState       string   `json:"configuration"`
	MinimumConfidence string   `json:"minimum_confidence"`
	OutboundData      []string `json:"outbound_data"`
	Offered           *bool    `json:"offered,omitempty"`
	NotOfferedBecause string   `json:"not_offered_because,omitempty"`
}

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
			var rows []toolRow
			for _, item := range a.Registry.Catalog(cmd.Context(), registry.ComponentChat) {
				r := toolRow{ID: item.ID, Active: item.Active, Configured: item.State.Configured(), ConfigState: item.State.String(),
					MinimumConfidence: item.MinimumConfidence.Level.String()}
				if item.Declared {
					r.Collection = item.ID
				}
				for _, t := range item.Tools {
					r.Tools = append(r.Tools, t.ID)
					r.OutboundData = append(r.OutboundData, t.OutboundData.String())
				}
				if rp != nil {
					reason := registry.NoBlock
					for _, t := range item.Tools {
						if rr := a.Registry.OfferBlockReason(cmd.Context(), t.ID, a.RegistryProvider(rp), registry.ComponentChat); rr != registry.NoBlock {
							reason = rr
							break
						}
					}
					ok := reason == registry.NoBlock
					r.Offered = &ok
					if !ok {
						r.NotOfferedBecause = reason.String()
					}
				}
				rows = append(rows, r)
			}
			tokens := -1
			if rp != nil {
				var all []string
				for _, r := range rows {
					all = append(all, r.ID)
				}
				offered, _ := a.Registry.Runnable(cmd.Context(), a.RunnableRequest(app.NewThread(), rp, all))
				if n, err := a.CountToolTokens(rp.Model, offered); err == nil {
					tokens = n
				}
			}
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
			type row struct {
				ID         string `json:"id"`
				Kind       string `json:"kind"`
				Title      string `json:"title"`
				BaseURL    string `json:"base_url"`
				Model      string `json:"model,omitempty"`
				Confidence string `json:"confidence"`
				Key        string `json:"key"`
				From       string `json:"configured_by"`
			}
			var rows []row
			for _, op := range a.Org.Providers {
				rp, err := a.ResolveProvider(cmd.Context(), app.ProviderFlags{Provider: op.ID})
				if err != nil {
					fmt.Fprintf(e.stderr, "warning: %v\n", err)
					continue
				}
				rows = append(rows, row{ID: op.ID, Kind: rp.Kind, Title: op.InstanceName, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp.APIKey, rp.Kind), From: "organization (" + op.Plugin + ")"})
			}
			for _, up := range a.User.Providers {
				rp, err := a.ResolveProvider(cmd.Context(), app.ProviderFlags{Provider: up.ID})
				if err != nil {
					fmt.Fprintf(e.stderr, "warning: %v\n", err)
					continue
				}
				rows = append(rows, row{ID: up.ID, Kind: rp.Kind, Title: rp.Title, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp.APIKey, rp.Kind), From: "your settings"})
			}
			for _, k := range llm.Kinds() {
				info, _ := k.Info()
				key := ""
				for _, env := range info.KeyEnv {
					if e.getenv(env) != "" {
						key = env
					}
				}
				state := "no key"
				if info.SelfHosted {
					state = "self-hosted, no key needed"
				} else if key != "" {
					state = "key in $" + key
				} else if len(info.KeyEnv) > 0 {
					state = "set $" + info.KeyEnv[0]
				}
				rows = append(rows, row{ID: string(k), Kind: string(k), Title: info.Title, BaseURL: info.DefaultBaseURL, Confidence: scheme.ProviderConfidence(info.Scheme).String(), Key: state, From: "built in"})
			}
			if asJSON {
				return writeJSON(e.stdout, map[string]any{"scheme": string(scheme.Scheme), "providers": rows})
			}
			fmt.Fprintf(e.stdout, "Confidence scheme: %s\n\n", scheme.Scheme)
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].From != "built in" && rows[j].From == "built in" })
			for _, r := range rows {
				fmt.Fprintf(e.stdout, "%-12s %-22s %-9s %-40s %s\n", r.ID, r.Title, r.Confidence, r.BaseURL, r.Key)
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

func keyState(key, kind string) string {
	if key != "" {
		return "key set"
	}
	if k, ok := llm.LookupKind(kind); ok {
		if info, _ := k.Info(); info.SelfHosted {
			return "self-hosted, no key needed"
		}
	}
	return "no key"
}
