package registry

import (
	"context"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
)

// CatalogItem is one selectable entry of a component: a collection, or a
// lone tool as its own collection.
type CatalogItem struct {
	ID string
	// Declared is false for a lone tool.
	Declared    bool
	Description string
	Tools       []CatalogTool
	// State is the configuration state of the first tool which is not
	// configured, else a configured state.
	State settings.State
	// Active is false while tools are off or the collection is switched off.
	Active bool
	// MinimumConfidence is the resolved minimum provider confidence.
	MinimumConfidence settings.Minimum
}

// CatalogTool is one tool of a catalog item.
type CatalogTool struct {
	ID           string
	Name         string
	Description  string
	OutboundData policy.OutboundData
}

// Catalog lists what people can select in a component: one item per
// collection with at least one tool which is visible there, present in
// this installation and selectable (context tools never are). Items come
// in the order of their first registered tool; the tools keep the order of
// their collection.
func (r *Registry) Catalog(ctx context.Context, component string) []CatalogItem {
	var items []CatalogItem
	for _, c := range r.collOrder {
		item := CatalogItem{
			ID:                c.ID,
			Declared:          c.declared,
			Description:       c.Description,
			Active:            r.opts.Policy.Active(c.settingsIDs...),
			MinimumConfidence: r.minimum(c),
		}
		stateSet := false
		for _, e := range c.entries {
			if e.def.Activation == tool.Context || !e.tool.IsAvailable() || !Visible(e.def.VisibleIn, component) {
				continue
			}
			item.Tools = append(item.Tools, CatalogTool{
				ID:           e.def.ID,
				Name:         e.def.Function.Name,
				Description:  e.def.Function.Description,
				OutboundData: e.tool.OutboundData(),
			})
			if !stateSet {
				if _, st := r.opts.Settings.State(ctx, e.tool); !st.Configured() {
					item.State, stateSet = st, true
				}
			}
		}
		if len(item.Tools) > 0 {
			items = append(items, item)
		}
	}
	return items
}
