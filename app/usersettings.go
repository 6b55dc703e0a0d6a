package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
)

// CheckToolSetting runs the checks `steward config check` runs on a tool's
// settings as they would be with field set to value, before anything is
// saved. It returns the tool's objection, or nil; a problem the settings
// had already before, with another field, is not this value's fault and
// does not count.
func (a *App) CheckToolSetting(ctx context.Context, toolID, field, value string) error {
	var t tool.Tool
	for _, x := range a.Tools {
		if x.Definition().ID == toolID {
			t = x
		}
	}
	if t == nil {
		return fmt.Errorf("there is no tool %q", toolID)
	}
	def := t.Definition()
	sf, ok := def.Settings.Field(field)
	if !ok {
		return fmt.Errorf("tool %s has no setting %q", toolID, field)
	}
	resBefore, _ := a.Resolver.Resolve(ctx, def)
	before := settings.Validate(ctx, t, resBefore.Values())
	r := a.Resolver.Clone()
	if sf.Secret {
		r.Secrets = secretOverride{base: r.Secrets, toolID: toolID, field: field, value: value}
	} else {
		user := settings.User{}
		for id, fields := range r.User {
			user[id] = map[string]string{}
			for k, v := range fields {
				user[id][k] = v
			}
		}
		if user[toolID] == nil {
			user[toolID] = map[string]string{}
		}
		user[toolID][field] = value
		r.User = user
	}
	res, err := r.Resolve(ctx, def)
	if err != nil {
		return err
	}
	after := settings.Validate(ctx, t, res.Values())
	// The tool's check runs whether or not the tool is configured yet; what
	// it says about the new value is what it did not say before.
	if news := newLines(before, after); len(news) > 0 {
		return errors.New(strings.Join(news, "; "))
	}
	return nil
}

// newLines returns the lines of after's message that before's lacks.
func newLines(before, after error) []string {
	if after == nil {
		return nil
	}
	had := map[string]bool{}
	if before != nil {
		for _, l := range strings.Split(before.Error(), "\n") {
			had[strings.TrimSpace(l)] = true
		}
	}
	var out []string
	for _, l := range strings.Split(after.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !had[l] {
			out = append(out, l)
		}
	}
	return out
}

type secretOverride struct {
	base                 settings.SecretStore
	toolID, field, value string
}

func (s secretOverride) ToolSecret(ctx context.Context, toolID, field string) (string, bool, error) {
	if toolID == s.toolID && field == s.field {
		return s.value, s.value != "", nil
	}
	if s.base == nil {
		return "", false, nil
	}
	return s.base.ToolSecret(ctx, toolID, field)
}

// CheckProviderName reports whether name can be the default provider: a
// provider kind or the ID of a configured provider.
func (a *App) CheckProviderName(name string) error {
	_, err := a.providerByName(name, "", "")
	return err
}

// SelectableIDs lists the tool and collection IDs a selection may name.
func (a *App) SelectableIDs(ctx context.Context) []string {
	var ids []string
	for _, it := range a.Registry.SettingsCatalog(ctx) {
		ids = append(ids, it.ID)
		for _, t := range it.Tools {
			if !slices.Contains(ids, t.ID) {
				ids = append(ids, t.ID)
			}
		}
	}
	return ids
}

// CheckSelection refuses unknown IDs in a tool selection, naming the known
// ones, and returns the selection normalized (a tool of a collection
// becomes its collection).
func (a *App) CheckSelection(ctx context.Context, ids []string) ([]string, error) {
	known := a.SelectableIDs(ctx)
	var unknown []string
	for _, id := range ids {
		if !slices.Contains(known, id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown tool or collection ID %s: use %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return a.Registry.NormalizeSelection(ids), nil
}
