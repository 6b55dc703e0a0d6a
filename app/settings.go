package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/settings"
)

// SettingView is one tool setting as a surface shows it: never a secret's
// value, always who set it and whether the organization locked it.
type SettingView struct {
	// Key is "<toolId>.<field>", the name organization plugins use.
	Key         string   `json:"key"`
	Tool        string   `json:"tool"`
	Field       string   `json:"field"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Type        string   `json:"type"`
	WriteOnly   bool     `json:"write_only"`
	Required    bool     `json:"required"`
	Default     string   `json:"default"`
	Enum        []string `json:"enum"`
	// Value is the effective value; empty for a secret, whose field is
	// WriteOnly: it can be set, never read back (see IsSet).
	Value string `json:"value"`
	// IsSet says whether the field has a value, secrets included.
	IsSet bool `json:"is_set"`
	// Origin says where the value came from ("locked by the organization",
	// "saved by the user", "organization default", "keyring", "not set").
	Origin string `json:"origin"`
	// LockedBy names the organization plugin that locked the field; such a
	// field cannot be changed.
	LockedBy string `json:"locked_by"`
}

// SettingError is a setting that cannot be changed as asked. Usage is true
// when the request itself was wrong (an unknown field, a value outside the
// choice), false when the organization locked the field.
type SettingError struct {
	Key   string
	Usage bool
	// Unknown is true when no tool or no field has that name.
	Unknown bool
	Locked  bool
	Msg     string
}

func (e *SettingError) Error() string { return e.Msg }

// ToolSettings lists every setting of every tool, in the order of the
// tools and their schemas.
func (a *App) ToolSettings(ctx context.Context) ([]SettingView, error) {
	var out []SettingView
	for _, t := range a.Tools {
		d := t.Definition()
		rv, _ := a.Resolver.Resolve(context.WithoutCancel(ctx), d)
		for _, f := range d.Settings.Fields {
			rf, _ := rv.Field(f.Name)
			v := SettingView{Key: settings.Key(d.ID, f.Name), Tool: d.ID, Field: f.Name, Title: f.Title, Description: f.Description,
				Type: "string", WriteOnly: f.Secret, Required: d.Settings.IsRequired(f.Name), Default: f.Default, Enum: append([]string{}, f.Enum...),
				IsSet: rf.Set(), Origin: rf.Origin.String(), LockedBy: rf.LockedBy}
			if !f.Secret {
				v.Value = rf.Value
			}
			out = append(out, v)
		}
	}
	return out, ctx.Err()
}

// ToolSetting returns one setting by "<toolId>.<field>".
func (a *App) ToolSetting(ctx context.Context, key string) (SettingView, error) {
	toolID, field, err := a.settingField(key)
	if err != nil {
		return SettingView{}, err
	}
	all, err := a.ToolSettings(ctx)
	if err != nil {
		return SettingView{}, err
	}
	for _, v := range all {
		if v.Tool == toolID && v.Field == field {
			return v, nil
		}
	}
	return SettingView{}, &SettingError{Key: key, Usage: true, Unknown: true, Msg: fmt.Sprintf("there is no setting %q", key)}
}

// SetToolSetting saves the user's value of a tool setting ("" removes it,
// bringing back the organization's default). A secret goes to the secret
// store. A field the organization locked is refused, naming the plugin.
// It returns where the value was stored.
func (a *App) SetToolSetting(ctx context.Context, key, value string) (where string, err error) {
	toolID, field, err := a.settingField(key)
	if err != nil {
		return "", err
	}
	def, _ := a.Definition(toolID)
	f, _ := def.Settings.Field(field)
	resolved, _ := a.Resolver.Resolve(context.WithoutCancel(ctx), def)
	if rf, _ := resolved.Field(field); rf.LockedBy != "" {
		return "", &SettingError{Key: key, Locked: true, Msg: fmt.Sprintf("%s is locked by the organization plugin %q and cannot be changed", key, rf.LockedBy)}
	}
	if value != "" {
		allowed := f.Enum
		if len(allowed) > 0 && !contains(allowed, value) {
			return "", &SettingError{Key: key, Usage: true, Msg: fmt.Sprintf("%s must be one of %s, not %q; nothing was saved", key, strings.Join(allowed, ", "), value)}
		}
		// The tool's own checks, as `steward config check` runs them.
		if err := a.CheckToolSetting(ctx, toolID, field, value); err != nil {
			shown := fmt.Sprintf("%q", value)
			if f.Secret {
				shown = "the secret"
			}
			return "", &SettingError{Key: key, Usage: true, Msg: fmt.Sprintf("%s: %s is refused: %v; nothing was saved", key, shown, err)}
		}
	}
	if f.Secret {
		if err := a.Secrets.Set("tool::"+toolID, field, value); err != nil {
			return "", fmt.Errorf("storing the secret in %s: %w", a.Secrets.Where(), err)
		}
		return a.Secrets.Where(), nil
	}
	a.settingsMu.Lock()
	defer a.settingsMu.Unlock()
	// Copy on write: chats running in other goroutines keep resolving the
	// values they read.
	tools := make(map[string]map[string]string, len(a.User.Tools)+1)
	for id, m := range a.User.Tools {
		tools[id] = maps.Clone(m)
	}
	next := *a.User
	next.Tools = tools
	next.SetToolValue(toolID, field, value)
	path := config.UserSettingsPath(a.ConfigDir)
	if err := next.Save(path); err != nil {
		return "", err
	}
	a.User.Tools = next.Tools
	a.Resolver.SetUser(settings.User(next.Tools))
	return path, nil
}

func (a *App) settingField(key string) (toolID, field string, err error) {
	toolID, field, ok := strings.Cut(key, ".")
	if !ok || toolID == "" || field == "" {
		return "", "", &SettingError{Key: key, Usage: true, Msg: fmt.Sprintf("%q is not TOOL.FIELD, e.g. web_search.maxResults", key)}
	}
	def, ok := a.Definition(toolID)
	if !ok {
		return "", "", &SettingError{Key: key, Usage: true, Unknown: true, Msg: fmt.Sprintf("there is no tool %q: see `steward tools`", toolID)}
	}
	if _, ok := def.Settings.Field(field); !ok {
		var names []string
		for _, x := range def.Settings.Fields {
			names = append(names, x.Name)
		}
		return "", "", &SettingError{Key: key, Usage: true, Unknown: true, Msg: fmt.Sprintf("tool %s has no setting %q; its settings are: %s", toolID, field, strings.Join(names, ", "))}
	}
	return toolID, field, nil
}

// AsSettingError reports whether err is a *SettingError.
func AsSettingError(err error) (*SettingError, bool) {
	var se *SettingError
	ok := errors.As(err, &se)
	return se, ok
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
