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
	return r.catalog(ctx, func(e *entry) bool {
		return e.def.Activation != tool.Context && Visible(e.def.VisibleIn, component)
	})
}

// SettingsCatalog lists every collection with a tool present in this
// installation, whatever its visibility, context tools included: the list
// where an organization or user switches tools off or raises the
// confidence they require.
func (r *Registry) SettingsCatalog(ctx context.Context) []CatalogItem {
	return r.catalog(ctx, func(*entry) bool { return true })
}

// Selectable returns the IDs of the catalog items of the component which
// are active and configured, whatever the provider's confidence.
func (r *Registry) Selectable(ctx context.Context, component string) []string {
	var ids []string
	for _, it := range r.Catalog(ctx, component) {
		if it.Active && it.State.Configured() {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

// Tool returns the registered tool with the given ID.
func (r *Registry) Tool(id string) (tool.Tool, bool) {
	if e := r.byID[id]; e != nil {
		return e.tool, true
	}
	return nil, false
}

func (r *Registry) catalog(ctx context.Context, include func(*entry) bool) []CatalogItem {
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
			if !e.tool.IsAvailable() || !include(e) {
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
