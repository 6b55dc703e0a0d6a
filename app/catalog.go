package app

import (
	"context"
	"sort"
	"strings"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
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
	// Key says where the API key comes from ("key in $OPENAI_API_KEY",
	// "key stored with steward keys set in …", "key from the organization
	// plugin …"), or what would give the provider one; never the key.
	Key string `json:"key"`
	// From says who configured it: "organization (plugin)", "your
	// settings" or "built in".
	From string `json:"configured_by"`
	// NotSelfHosted says why a server of a self-hosted kind gets the
	// confidence of a cloud provider.
	NotSelfHosted string `json:"not_self_hosted_because,omitempty"`
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
		rows = append(rows, ProviderChoice{ID: op.ID, Kind: rp.Kind, Title: op.InstanceName, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp), From: "organization (" + op.Plugin + ")", NotSelfHosted: rp.NotSelfHosted})
	}
	for _, up := range a.User.Providers {
		rp, err := a.ResolveProvider(ctx, ProviderFlags{Provider: up.ID})
		if err != nil {
			problems = append(problems, err)
			continue
		}
		rows = append(rows, ProviderChoice{ID: up.ID, Kind: rp.Kind, Title: rp.Title, BaseURL: rp.BaseURL, Model: rp.Model, Confidence: rp.Confidence.String(), Key: keyState(rp), From: "your settings", NotSelfHosted: rp.NotSelfHosted})
	}
	scheme := a.Org.Scheme()
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
		rows = append(rows, ProviderChoice{ID: string(k), Kind: string(k), Title: info.Title, BaseURL: info.DefaultBaseURL, Model: defaultModels[k], Confidence: scheme.ProviderConfidence(info.Scheme).String(), Key: state, From: "built in"})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].From != "built in" && rows[j].From == "built in" })
	return rows, problems
}

// keyState says where a configured provider's key comes from, never the
// key, or what would give it one.
func keyState(rp *ResolvedProvider) string {
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
		return missingKey(info.KeyEnv, firstNonEmpty(rp.ID, rp.Kind))
	}
	return "no key"
}

// missingKey says how to give a provider of a kind with the variables env
// its key: the environment, or `steward keys set name`.
func missingKey(env []string, name string) string {
	return "no key: set $" + strings.Join(env, " or $") + " or store one with steward keys set " + name
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
	OfferedTools      []string `json:"offered_tools,omitempty"`
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
// provider (p not nil) the answer comes from the request path itself: the
// registry decides a request of the chat t (nil: a new chat) with every
// tool selected, exactly as a turn would, resolution included, and each
// tool that is not offered names the check in its way. It also counts what
// the offered tools add to a request.
func (a *App) ToolCatalog(ctx context.Context, p *ResolvedProvider, t *chat.Thread) Catalog {
	out := Catalog{Tools: []ToolRow{}, ToolTokens: -1}
	catalog := a.Registry.Catalog(ctx, registry.ComponentChat)
	var offered []tool.Offered
	blocks := map[string]registry.Block{}
	if p != nil {
		var all []string
		for _, item := range catalog {
			all = append(all, item.ID)
		}
		if t == nil {
			t = NewThread()
		}
		var blocked []registry.Block
		offered, blocked = a.Registry.Runnable(ctx, a.RunnableRequest(t, p, all))
		for _, b := range blocked {
			blocks[b.ToolID] = b
		}
	}
	isOffered := map[string]bool{}
	for _, o := range offered {
		isOffered[o.Definition.ID] = true
	}
	for _, item := range catalog {
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
			ok := len(item.Tools) > 0
			for _, tl := range item.Tools {
				if isOffered[tl.ID] {
					r.OfferedTools = append(r.OfferedTools, tl.ID)
					continue
				}
				ok = false
				if r.NotOfferedBecause == "" {
					r.NotOfferedBecause = blockText(tl.ID, blocks[tl.ID], len(item.Tools) > 1)
				}
			}
			r.Offered = &ok
		}
		out.Tools = append(out.Tools, r)
	}
	if p != nil {
		if n, err := a.CountToolTokens(p.Model, offered); err == nil {
			out.ToolTokens = n
		}
	}
	return out
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
