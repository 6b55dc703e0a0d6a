package settings

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/stewardhq/steward/tool"
)

// Key returns the key under which an organization addresses a tool setting:
// "<toolId>.<field>". Collections do not change it; the settings of a tool
// stay with the tool.
func Key(toolID, field string) string { return toolID + "." + field }

// LockedValue is a value an organization plugin forces.
type LockedValue struct {
	// Value is the forced value. For a secret it arrives decrypted.
	Value string
	// Plugin names the plugin which locked the value.
	Plugin string
	// Invalid marks a locked secret which could not be used: written in
	// plain text, no enterprise secret present, or decryption failed. The
	// field then stays empty and the user's own secret is not read. It is
	// also set for a locked confidence the config package could not read.
	Invalid bool
}

// Org is what the organization's configuration plugins say about tool
// settings, keyed by Key(toolID, field).
type Org struct {
	// Locked values win over everything.
	Locked map[string]LockedValue
	// Defaults apply when the user saved nothing. They never apply to a
	// secret.
	Defaults map[string]string
}

// LockedBy reports whether the organization locked the tool's field, and
// by which plugin. A locked field is not the user's to change.
func (o Org) LockedBy(toolID, field string) (plugin string, locked bool) {
	l, ok := o.Locked[Key(toolID, field)]
	return l.Plugin, ok
}

// User holds the user's saved non-secret setting values by tool ID, then by
// field name. Secrets live in the keyring, never here.
type User map[string]map[string]string

// SecretStore reads a user's tool secrets, e.g. from the operating system's
// keyring under the ID "tool::<toolId>" and the field name.
type SecretStore interface {
	// ToolSecret returns the stored secret, with ok false when none is
	// stored. An error must not contain the secret.
	ToolSecret(ctx context.Context, toolID, field string) (value string, ok bool, err error)
}

// Origin says where a resolved value came from.
type Origin int

// The origins of a value.
const (
	// OriginNone means nobody set the field.
	OriginNone Origin = iota
	// OriginLocked is an organization's locked value.
	OriginLocked
	// OriginUser is the user's saved value.
	OriginUser
	// OriginDefault is an organization's default.
	OriginDefault
	// OriginKeyring is a secret from the user's keyring.
	OriginKeyring
	// OriginDeclared is the level the tool or its collection declares
	// (confidence only).
	OriginDeclared
)

func (o Origin) String() string {
	switch o {
	case OriginLocked:
		return "locked by the organization"
	case OriginUser:
		return "saved by the user"
	case OriginDefault:
		return "organization default"
	case OriginKeyring:
		return "keyring"
	case OriginDeclared:
		return "declared"
	default:
		return "not set"
	}
}

// Field is one resolved setting field.
type Field struct {
	Name   string
	Value  string
	Secret bool
	Origin Origin
	// LockedBy names the plugin which locked the value.
	LockedBy string
	// Invalid is true for a locked secret which could not be used.
	Invalid bool
}

// Set reports whether the field has a non-blank value.
func (f Field) Set() bool { return strings.TrimSpace(f.Value) != "" }

// String describes the field without ever showing a secret's value.
func (f Field) String() string {
	v := fmt.Sprintf("%q", f.Value)
	if f.Secret {
		v = "(secret not set)"
		if f.Set() {
			v = "(secret set)"
		}
		if f.Invalid {
			v = "(locked secret unusable)"
		}
	}
	s := f.Name + "=" + v + " [" + f.Origin.String()
	if f.LockedBy != "" {
		s += " by " + f.LockedBy
	}
	return s + "]"
}

// Resolved is the settings of one tool after precedence was applied.
type Resolved struct {
	ToolID string
	// Fields in the order of the tool's settings schema.
	Fields []Field
	// values is built once by Resolve.
	values tool.Settings
}

// Values returns the non-empty values by field name, secrets included:
// hand them to the tool only, never log them. The map of one resolution is
// shared by its callers.
func (r Resolved) Values() tool.Settings {
	if r.values != nil {
		return r.values
	}
	return r.buildValues()
}

func (r Resolved) buildValues() tool.Settings {
	out := make(tool.Settings, len(r.Fields))
	for _, f := range r.Fields {
		if f.Value != "" {
			out[f.Name] = f.Value
		}
	}
	return out
}

// Field returns the resolved field with the given name.
func (r Resolved) Field(name string) (Field, bool) {
	for _, f := range r.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// String lists the fields with their origins and masks every secret.
func (r Resolved) String() string {
	parts := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		parts[i] = f.String()
	}
	return r.ToolID + "{" + strings.Join(parts, ", ") + "}"
}

// Resolver resolves tool settings from the organization's values, the
// user's saved values and the keyring. The zero value resolves every field
// to empty; a nil Secrets store leaves the user's secrets unread.
type Resolver struct {
	Org     Org
	User    User
	Secrets SecretStore

	// mu guards User once SetUser is used: a long-running surface such as
	// `steward serve` saves settings while chats resolve them.
	mu sync.RWMutex
}

// SetUser replaces the user's saved values. It is safe while other
// goroutines resolve; the Resolver keeps u and the caller must not change it
// afterwards.
func (r *Resolver) SetUser(u User) {
	r.mu.Lock()
	r.User = u
	r.mu.Unlock()
}

// Clone returns a resolver with the same values, safe while SetUser runs;
// the user's values are shared, not copied.
func (r *Resolver) Clone() *Resolver {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return &Resolver{Org: r.Org, User: r.User, Secrets: r.Secrets}
}

func (r *Resolver) userValue(toolID, field string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.User[toolID][field]
	return v, ok
}

// Resolve applies the precedence to each field of the tool's settings
// schema. A keyring failure leaves that field empty and is returned, wrapped
// and naming tool and field, together with the rest of the resolution.
func (r *Resolver) Resolve(ctx context.Context, def tool.Definition) (Resolved, error) {
	out := Resolved{ToolID: def.ID, Fields: make([]Field, 0, len(def.Settings.Fields))}
	var errs []error
	for _, sf := range def.Settings.Fields {
		f, err := r.field(ctx, def.ID, sf)
		if err != nil {
			errs = append(errs, err)
		}
		out.Fields = append(out.Fields, f)
	}
	out.values = out.buildValues()
	return out, errors.Join(errs...)
}

func (r *Resolver) field(ctx context.Context, toolID string, sf tool.SettingField) (Field, error) {
	f := Field{Name: sf.Name, Secret: sf.Secret}
	if r == nil {
		return f, nil
	}
	key := Key(toolID, sf.Name)
	if l, ok := r.Org.Locked[key]; ok {
		f.Origin, f.LockedBy = OriginLocked, l.Plugin
		if sf.Secret && l.Invalid {
			// An unusable locked secret leaves the tool unconfigured; the
			// user's own secret must not stand in for the organization's.
			f.Invalid = true
			return f, nil
		}
		f.Value = l.Value
		return f, nil
	}
	if sf.Secret {
		if r.Secrets == nil {
			return f, nil
		}
		v, ok, err := r.Secrets.ToolSecret(ctx, toolID, sf.Name)
		if err != nil {
			return f, fmt.Errorf("settings: reading the secret %q of tool %q from the keyring: %w", sf.Name, toolID, err)
		}
		if ok {
			f.Value, f.Origin = v, OriginKeyring
		}
		return f, nil
	}
	// A blank saved value counts as not saved, so clearing a field brings
	// the organization's default back.
	if v, ok := r.userValue(toolID, sf.Name); ok && strings.TrimSpace(v) != "" {
		f.Value, f.Origin = v, OriginUser
		return f, nil
	}
	if v, ok := r.Org.Defaults[key]; ok {
		f.Value, f.Origin = v, OriginDefault
	}
	return f, nil
}
