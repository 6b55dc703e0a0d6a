package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
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
	OfferedTools      []string `json:"offered_tools,omitempty"`
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
			catalog := a.Registry.Catalog(cmd.Context(), registry.ComponentChat)
			// With a provider, the answer comes from the request path
			// itself: the registry decides a request for a new chat with
			// every tool selected, exactly as ask would, resolution
			// included. Nothing else decides what is offered.
			var offered []tool.Offered
			blocks := map[string]registry.Block{}
			if rp != nil {
				var all []string
				for _, item := range catalog {
					all = append(all, item.ID)
				}
				var blocked []registry.Block
				offered, blocked = a.Registry.Runnable(cmd.Context(), a.RunnableRequest(app.NewThread(), rp, all))
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				for _, b := range blocked {
					blocks[b.ToolID] = b
				}
			}
			isOffered := map[string]bool{}
			for _, o := range offered {
				isOffered[o.Definition.ID] = true
			}
			var rows []toolRow
			for _, item := range catalog {
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
					ok := len(item.Tools) > 0
					for _, t := range item.Tools {
						if isOffered[t.ID] {
							r.OfferedTools = append(r.OfferedTools, t.ID)
							continue
						}
						ok = false
						if r.NotOfferedBecause == "" {
							r.NotOfferedBecause = blockText(t.ID, blocks[t.ID], len(item.Tools) > 1)
						}
					}
					r.Offered = &ok
				}
				rows = append(rows, r)
			}
			tokens := -1
			if rp != nil {
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

// blockText says why a tool is not offered: the reason of the check that
// failed and what is in the way, or what the tool itself said when it had
// nothing to offer.
func blockText(toolID string, b registry.Block, inCollection bool) string {
	var text string
	switch {
	case b.ToolID == "":
		text = "not part of the request"
	case b.Reason == registry.NoBlock:
		text = b.Detail
	default:
		text = b.Reason.String() + " (" + b.Detail + ")"
	}
	if inCollection {
		return toolID + ": " + text
	}
	return text
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
				// NotSelfHosted says why a server of a self-hosted kind
				// gets the confidence of a cloud provider.
				NotSelfHosted string `json:"not_self_hosted_because,omitempty"`
			}
			var rows []row
			for _, op := range a.Org.Providers {
				rp, err := a.ResolveProvider(cmd.Context(), app.ProviderFlags{Provider: op.ID})
				if err != nil {
					fmt.Fprintf(e.stderr, "warning: %v\n", err)
					continue
				}
				rows = append(rows, row{ID: op.ID, Kind: rp.Kind, Title: op.InstanceName, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp), From: "organization (" + op.Plugin + ")", NotSelfHosted: rp.NotSelfHosted})
			}
			for _, up := range a.User.Providers {
				rp, err := a.ResolveProvider(cmd.Context(), app.ProviderFlags{Provider: up.ID})
				if err != nil {
					fmt.Fprintf(e.stderr, "warning: %v\n", err)
					continue
				}
				rows = append(rows, row{ID: up.ID, Kind: rp.Kind, Title: rp.Title, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp), From: "your settings", NotSelfHosted: rp.NotSelfHosted})
			}
			for _, k := range llm.Kinds() {
				info, _ := k.Info()
				state := "no key"
				switch from := a.KindKeyFrom(k); {
				case info.SelfHosted:
					state = "self-hosted, no key needed"
				case from != "":
					state = "key " + from
				case len(info.KeyEnv) > 0:
					state = missingKey(info.KeyEnv, string(k))
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

// keyState says where a configured provider's key comes from, never the
// key, or what would give it one.
func keyState(rp *app.ResolvedProvider) string {
	if rp.APIKey != "" {
		if rp.KeyFrom == "" {
			return "key set"
		}
		return "key " + rp.KeyFrom
	}
	k, ok := llm.LookupKind(rp.Kind)
	if !ok {
		return "no key"
	}
	info, _ := k.Info()
	switch {
	case info.SelfHosted && rp.NotSelfHosted == "":
		return "self-hosted, no key needed"
	case info.SelfHosted:
		return "no key"
	case len(info.KeyEnv) > 0:
		return missingKey(info.KeyEnv, firstNonEmptyStr(rp.ID, rp.Kind))
	}
	return "no key"
}

// missingKey says how to give a provider of a kind with the variables env
// its key: the environment, or `steward keys set name`.
func missingKey(env []string, name string) string {
	return "no key: set $" + strings.Join(env, " or $") + " or store one with steward keys set " + name
}
