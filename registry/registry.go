package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
)

// Well-known tool IDs the registry has rules for.
const (
	// SemanticSearchID decides the retrieval mode, see EffectiveRetrievalMode.
	SemanticSearchID = "semantic_search"
	// SearchConfluenceID brings ReadWebPageID along when selected.
	SearchConfluenceID = "search_confluence"
	ReadWebPageID      = "read_web_page"
)

// Collection groups tools which only make sense together: people select it
// as one entry, it needs one minimum provider confidence, and an
// organization switches it off as one. The model still sees and calls each
// tool on its own. A tool in no declared collection is a collection of its
// own under its own ID.
type Collection struct {
	// ID is lower-case with underscores and is no tool's ID.
	ID string
	// ToolIDs in the order they are listed.
	ToolIDs []string
	// MinimumConfidence replaces the minimums the tools declare.
	MinimumConfidence policy.Confidence
	// Description is for a model which picks the tools of an assistant.
	Description string
}

// Options configure a registry.
type Options struct {
	// Policy is the resolved tool policy: tools on or off, disabled IDs,
	// confidence overrides.
	Policy settings.Policy
	// Settings resolves tool settings; nil resolves every field to empty.
	Settings *settings.Resolver
	// OptionSources are the names of the option lists the application
	// maintains; a setting field may only name one of these.
	OptionSources []string
	// NamingReasons states, by tool ID, why a tool's ID, implementation key
	// and function name differ. Without a reason they must be identical.
	NamingReasons map[string]string
	// Logger receives why a tool was left out of a request; nil discards.
	Logger *slog.Logger
}

// RegistrationError says why a tool or collection was not registered, or
// why a collection left one of its tools out.
type RegistrationError struct {
	// Kind is "tool" or "collection".
	Kind string
	// ID of what was rejected; may be blank when the ID itself was missing.
	ID string
	// ToolID is set when a collection left out one of its tools.
	ToolID string
	Reason string
}

func (e *RegistrationError) Error() string {
	if e.ToolID != "" {
		return fmt.Sprintf("registry: collection %q leaves out tool %q: %s", e.ID, e.ToolID, e.Reason)
	}
	return fmt.Sprintf("registry: %s %q rejected: %s", e.Kind, e.ID, e.Reason)
}

// entry is one registered tool.
type entry struct {
	def  tool.Definition
	tool tool.Tool
	coll *collection
}

// collection is a declared collection or a lone tool's own.
type collection struct {
	Collection
	declared bool
	entries  []*entry
	// settingsIDs are the collection's ID and its tools' IDs: any of them
	// switches the collection off or raises its confidence.
	settingsIDs []string
}

// Registry holds the registered tools and collections. It is safe for
// concurrent use; nothing changes after New.
type Registry struct {
	opts        Options
	log         *slog.Logger
	entries     []*entry // registration order
	byID        map[string]*entry
	byName      map[string]*entry
	collections map[string]*collection
	collOrder   []*collection // by the position of their first tool
}

var (
	functionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
	idPattern    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*$`) })
)

// New registers tools, then collections. What it cannot accept is left out
// and reported, one error each; the first of several duplicates wins.
func New(opts Options, tools []tool.Tool, collections []Collection) (*Registry, []error) {
	r := &Registry{
		opts:        opts,
		log:         opts.Logger,
		byID:        map[string]*entry{},
		byName:      map[string]*entry{},
		collections: map[string]*collection{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	keys := map[string]bool{}
	for i, t := range tools {
		if t == nil {
			errs = append(errs, &RegistrationError{Kind: "tool", Reason: fmt.Sprintf("tool %d of the list is nil", i)})
			continue
		}
		def := t.Definition()
		reject := func(reason string) {
			errs = append(errs, &RegistrationError{Kind: "tool", ID: def.ID, Reason: reason})
		}
		if reason := r.validate(def); reason != "" {
			reject(reason)
			continue
		}
		switch {
		case keys[def.Key()]:
			reject(fmt.Sprintf("implementation key %q is taken by an earlier tool", def.Key()))
			continue
		case r.byID[def.ID] != nil:
			reject("the ID is taken by an earlier tool")
			continue
		case r.byName[def.Function.Name] != nil:
			reject(fmt.Sprintf("function name %q is taken by tool %q", def.Function.Name, r.byName[def.Function.Name].def.ID))
			continue
		}
		e := &entry{def: def, tool: t}
		keys[def.Key()] = true
		r.byID[def.ID] = e
		r.byName[def.Function.Name] = e
		r.entries = append(r.entries, e)
	}
	errs = append(errs, r.addCollections(collections)...)
	// Every tool outside a declared collection forms its own.
	for _, e := range r.entries {
		if e.coll == nil {
			c := &collection{
				Collection: Collection{
					ID:                e.def.ID,
					ToolIDs:           []string{e.def.ID},
					MinimumConfidence: e.def.MinimumConfidence,
					Description:       e.def.Function.Description,
				},
				entries:     []*entry{e},
				settingsIDs: []string{e.def.ID},
			}
			e.coll = c
			r.collections[c.ID] = c
		}
		if !slices.Contains(r.collOrder, e.coll) {
			r.collOrder = append(r.collOrder, e.coll)
		}
	}
	return r, errs
}

func (r *Registry) addCollections(cols []Collection) []error {
	var errs []error
	claimed := map[string]string{} // tool ID → collection ID
	for _, c := range cols {
		reject := func(reason string) {
			errs = append(errs, &RegistrationError{Kind: "collection", ID: c.ID, Reason: reason})
		}
		leave := func(toolID, reason string) {
			errs = append(errs, &RegistrationError{Kind: "collection", ID: c.ID, ToolID: toolID, Reason: reason})
		}
		switch {
		case strings.TrimSpace(c.ID) == "":
			reject("the ID is blank")
			continue
		case !idPattern().MatchString(c.ID):
			reject("the ID must be lower-case letters, digits and underscores, starting with a letter")
			continue
		case r.byID[c.ID] != nil:
			reject("the ID is a tool's ID")
			continue
		case r.collections[c.ID] != nil:
			reject("the ID is taken by an earlier collection")
			continue
		case !c.MinimumConfidence.Valid():
			reject(fmt.Sprintf("minimum confidence %d is no defined level", int(c.MinimumConfidence)))
			continue
		}
		col := &collection{Collection: c, declared: true}
		col.ToolIDs = nil
		for _, id := range c.ToolIDs {
			e := r.byID[id]
			switch {
			case slices.Contains(col.ToolIDs, id):
				leave(id, "the tool is listed twice")
			case e == nil:
				leave(id, "no such tool is registered")
			case e.def.Activation == tool.Context:
				leave(id, "the tool offers itself from the context of a chat and cannot be selected")
			case claimed[id] != "":
				leave(id, fmt.Sprintf("collection %q claimed the tool first", claimed[id]))
			default:
				col.ToolIDs = append(col.ToolIDs, id)
				col.entries = append(col.entries, e)
			}
		}
		if len(col.entries) == 0 {
			reject("none of its tools could be taken")
			continue
		}
		col.settingsIDs = append([]string{col.ID}, col.ToolIDs...)
		for _, e := range col.entries {
			claimed[e.def.ID] = col.ID
			e.coll = col
		}
		r.collections[col.ID] = col
	}
	return errs
}

// validate returns why def cannot be registered, or "". The first failure
// wins.
func (r *Registry) validate(def tool.Definition) string {
	switch {
	case strings.TrimSpace(def.ID) == "":
		return "the ID is blank"
	case !idPattern().MatchString(def.ID):
		return "the ID must be lower-case letters, digits and underscores, starting with a letter"
	case strings.TrimSpace(def.Key()) == "":
		return "the implementation key is blank"
	case !functionName().MatchString(def.Function.Name):
		return fmt.Sprintf("function name %q must be 1 to 64 ASCII letters, digits, underscores or hyphens", def.Function.Name)
	case !isJSONObject(def.Function.Parameters):
		return "the function parameters must be a JSON Schema object"
	}
	for _, list := range [][]string{def.VisibleIn.Allowed, def.VisibleIn.Denied} {
		for _, c := range list {
			if !IsComponent(c) {
				return fmt.Sprintf("visibility names the unknown component %q", c)
			}
		}
	}
	if reason := r.validateSettings(def.Settings); reason != "" {
		return reason
	}
	if def.Activation != tool.Selection && def.Activation != tool.Context {
		return fmt.Sprintf("activation %d is neither SELECTION nor CONTEXT", int(def.Activation))
	}
	if !def.MinimumConfidence.Valid() {
		return fmt.Sprintf("minimum confidence %d is no defined level", int(def.MinimumConfidence))
	}
	if (def.Key() != def.ID || def.Function.Name != def.ID) && strings.TrimSpace(r.opts.NamingReasons[def.ID]) == "" {
		return fmt.Sprintf("ID %q, implementation key %q and function name %q differ without a stated reason (Options.NamingReasons)", def.ID, def.Key(), def.Function.Name)
	}
	return ""
}

func (r *Registry) validateSettings(s tool.SettingsSchema) string {
	seen := map[string]bool{}
	for _, f := range s.Fields {
		switch {
		case strings.TrimSpace(f.Name) == "":
			return "a setting field has a blank name"
		case seen[f.Name]:
			return fmt.Sprintf("setting %q is defined twice", f.Name)
		case f.Type != "" && !strings.EqualFold(f.Type, "string"):
			return fmt.Sprintf("setting %q has type %q; only string is supported", f.Name, f.Type)
		case f.Group != "" && strings.TrimSpace(f.Group) == "":
			return fmt.Sprintf("setting %q has a group of only whitespace", f.Name)
		case f.OptionSource != "" && len(f.Enum) > 0:
			return fmt.Sprintf("setting %q has both an option source and an enum; use one", f.Name)
		case f.OptionSource != "" && !slices.Contains(r.opts.OptionSources, f.OptionSource):
			return fmt.Sprintf("setting %q names the unknown option source %q", f.Name, f.OptionSource)
		case f.Secret && f.Default != "":
			return fmt.Sprintf("secret setting %q has a default; a secret never takes one", f.Name)
		}
		seen[f.Name] = true
	}
	for _, name := range s.Required {
		switch {
		case strings.TrimSpace(name) == "":
			return "a required setting name is blank"
		case !seen[name]:
			return fmt.Sprintf("required setting %q is not defined", name)
		}
	}
	return ""
}

// isJSONObject reports whether raw is a valid JSON object.
func isJSONObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(raw)
}
