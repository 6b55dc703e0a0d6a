package app

import (
	"context"
	"sort"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/registry"
)

// ProviderChoice is one provider a surface can offer, with its confidence
// under the organization's scheme.
type ProviderChoice struct {
	// ID is what ResolveProvider takes: a configured provider's ID or a
	// provider kind.
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Title      string `json:"title"`
	BaseURL    string `json:"base_url"`
	Model      string `json:"model,omitempty"`
	Confidence string `json:"confidence"`
	// Key says whether an API key is there, without showing it.
	Key string `json:"key"`
	// From says who configured it: "organization (plugin)", "your
	// settings" or "built in".
	From string `json:"configured_by"`
}

// ProviderChoices lists the organization's providers, the user's and the
// built-in kinds, in that order, as `steward providers` shows them. A
// configured provider that cannot be resolved is left out and its error
// returned.
func (a *App) ProviderChoices(ctx context.Context) ([]ProviderChoice, []error) {
	var rows []ProviderChoice
	var problems []error
	for _, op := range a.Org.Providers {
		rp, err := a.ResolveProvider(ctx, ProviderFlags{Provider: op.ID})
		if err != nil {
			problems = append(problems, err)
			continue
		}
		rows = append(rows, ProviderChoice{ID: op.ID, Kind: rp.Kind, Title: op.InstanceName, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp.APIKey, rp.Kind), From: "organization (" + op.Plugin + ")"})
	}
	for _, up := range a.User.Providers {
		rp, err := a.ResolveProvider(ctx, ProviderFlags{Provider: up.ID})
		if err != nil {
			problems = append(problems, err)
			continue
		}
		rows = append(rows, ProviderChoice{ID: up.ID, Kind: rp.Kind, Title: rp.Title, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp.APIKey, rp.Kind), From: "your settings"})
	}
	scheme := a.Org.Scheme()
	for _, k := range llm.Kinds() {
		info, _ := k.Info()
		key := ""
		for _, env := range info.KeyEnv {
			if a.getenv(env) != "" {
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
		rows = append(rows, ProviderChoice{ID: string(k), Kind: string(k), Title: info.Title, BaseURL: info.DefaultBaseURL, Model: defaultModels[k], Confidence: scheme.ProviderConfidence(info.Scheme).String(), Key: state, From: "built in"})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].From != "built in" && rows[j].From == "built in" })
	return rows, problems
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

// ToolRow is one tool collection of the catalogue, as `steward tools`
// shows it; the offer fields are set only for a chosen provider.
type ToolRow struct {
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

// Catalog is the tool catalogue of the chat, and for a chosen provider
// what would be offered to it and how many tokens that adds.
type Catalog struct {
	Tools []ToolRow `json:"tools"`
	// ToolTokens is -1 without a provider or when it cannot be counted.
	ToolTokens int `json:"tool_tokens"`
}

// ToolCatalog lists every tool collection of the chat component. With a
// provider (p not nil) it asks the registry, per tool, why it would not
// be offered to p, and counts what the offered tools add to a request of a
// new chat with every tool selected. t is the chat whose requirements
// apply; nil means a new chat.
func (a *App) ToolCatalog(ctx context.Context, p *ResolvedProvider, t *chat.Thread) Catalog {
	out := Catalog{Tools: []ToolRow{}, ToolTokens: -1}
	for _, item := range a.Registry.Catalog(ctx, registry.ComponentChat) {
		r := ToolRow{ID: item.ID, Active: item.Active, Configured: item.State.Configured(), ConfigState: item.State.String(),
			MinimumConfidence: item.MinimumConfidence.Level.String(), Tools: []string{}, OutboundData: []string{}}
		if item.Declared {
			r.Collection = item.ID
		}
		for _, tl := range item.Tools {
			r.Tools = append(r.Tools, tl.ID)
			r.OutboundData = append(r.OutboundData, tl.OutboundData.String())
		}
		if p != nil {
			reason := registry.NoBlock
			for _, tl := range item.Tools {
				if rr := a.Registry.OfferBlockReason(ctx, tl.ID, a.RegistryProvider(p), registry.ComponentChat); rr != registry.NoBlock {
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
		out.Tools = append(out.Tools, r)
	}
	if p != nil {
		var all []string
		for _, r := range out.Tools {
			all = append(all, r.ID)
		}
		if t == nil {
			t = NewThread()
		}
		offered, _ := a.Registry.Runnable(ctx, a.RunnableRequest(t, p, all))
		if n, err := a.CountToolTokens(p.Model, offered); err == nil {
			out.ToolTokens = n
		}
	}
	return out
}
