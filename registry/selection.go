package registry

import (
	"slices"

	"github.com/stewardhq/steward/tool"
)

// CollectionID names the collection of a tool. A lone tool is its own
// collection, and an ID the registry does not know names itself.
func (r *Registry) CollectionID(id string) string {
	if e := r.byID[id]; e != nil {
		return e.coll.ID
	}
	return id
}

// IsKnown reports whether id names a registered tool or collection.
func (r *Registry) IsKnown(id string) bool {
	return r.byID[id] != nil || r.collections[id] != nil
}

// Collection returns the collection with the given ID, a lone tool's
// included. It exists only while one of its tools is available.
func (r *Registry) Collection(id string) (Collection, bool) {
	c := r.collections[id]
	if c == nil || !c.exists() {
		return Collection{}, false
	}
	out := c.Collection
	out.ToolIDs = slices.Clone(c.ToolIDs)
	return out, true
}

func (c *collection) exists() bool {
	for _, e := range c.entries {
		if e.tool.IsAvailable() {
			return true
		}
	}
	return false
}

// NormalizeSelection turns a selection into the collections which run; every
// place which shows or stores a selection calls it. A tool becomes its
// collection, search_confluence brings read_web_page along, context tools
// are dropped, unknown IDs are kept (a plugin may bring them later), and
// duplicates go, the first one staying. The input is not changed, the order
// is kept, and normalizing twice changes nothing more.
func (r *Registry) NormalizeSelection(ids []string) []string {
	out := make([]string, 0, len(ids)+1)
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, id := range ids {
		if e := r.byID[id]; e != nil && e.def.Activation == tool.Context {
			continue
		}
		cid := r.CollectionID(id)
		add(cid)
		if r.bringsReadWebPage(cid) {
			// Right behind it, so that a normalized selection stays as it is.
			if e := r.byID[ReadWebPageID]; e == nil || e.def.Activation != tool.Context {
				add(r.CollectionID(ReadWebPageID))
			}
		}
	}
	return out
}

// ExpandSelection turns a selection into the tools which run: it normalizes
// it, then each collection becomes its tools in their listed order. Unknown
// IDs stay. The input is not changed, and expanding twice changes nothing
// more.
func (r *Registry) ExpandSelection(ids []string) []string {
	norm := r.NormalizeSelection(ids)
	out := make([]string, 0, len(norm))
	for _, id := range norm {
		c := r.collections[id]
		if c == nil {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
			continue
		}
		for _, t := range c.ToolIDs {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// bringsReadWebPage reports whether the collection cid holds
// search_confluence, whose hits the model opens with read_web_page.
func (r *Registry) bringsReadWebPage(cid string) bool {
	if c := r.collections[cid]; c != nil {
		return slices.Contains(c.ToolIDs, SearchConfluenceID)
	}
	return cid == SearchConfluenceID
}
