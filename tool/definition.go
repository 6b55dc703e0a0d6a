package tool

import (
	"encoding/json"

	"github.com/stewardhq/steward/policy"
)

// Definition is what a tool states about itself. The registry validates it
// when the tool is registered.
type Definition struct {
	// ID is lower-case with underscores. By convention it equals
	// ImplementationKey and Function.Name.
	ID string
	// ImplementationKey names the Go implementation; blank means ID.
	ImplementationKey string
	// Function is what the model sees.
	Function Function
	// Settings describes the tool's settings fields.
	Settings SettingsSchema
	// VisibleIn says in which components the tool may appear.
	VisibleIn Visibility
	// Activation says whether people select the tool or it offers itself.
	Activation Activation
	// MinimumConfidence is the lowest provider confidence the tool may be
	// offered to. NONE allows every provider. Ignored once the tool belongs
	// to a declared collection.
	MinimumConfidence policy.Confidence
	// SystemPromptInstructions is the registered policy text appended to the
	// system prompt when the tool runs (those of its default settings).
	SystemPromptInstructions string
}

// Key returns the implementation key, defaulting to the ID.
func (d Definition) Key() string {
	if d.ImplementationKey != "" {
		return d.ImplementationKey
	}
	return d.ID
}

// Function is the function a tool offers the model.
type Function struct {
	// Name is what the model calls; 1 to 64 of [A-Za-z0-9_-].
	Name string
	// Description says only what the tool does; rules belong in the
	// system prompt instructions.
	Description string
	// Parameters is a JSON Schema object, written the ordinary way: an
	// optional argument is simply absent from "required".
	Parameters json.RawMessage
	// NoStrict keeps the tool out of strict mode everywhere, for a schema
	// strict mode cannot express. Strict mode is on by default.
	NoStrict bool
}

// Strict reports whether the function may be sent in strict mode.
func (f Function) Strict() bool { return !f.NoStrict }

// Activation says how a tool comes into a request.
type Activation int

const (
	// Selection tools are selected by people, defaults, templates or rules.
	Selection Activation = iota
	// Context tools offer themselves from the chat and can never be
	// selected.
	Context
)

func (a Activation) String() string {
	if a == Context {
		return "CONTEXT"
	}
	return "SELECTION"
}

// Visibility says in which components a tool may appear. The zero value
// shows the tool nowhere; use DefaultVisibility for the usual case.
type Visibility struct {
	Chat       bool
	Assistants bool
	// Allowed and Denied are component names. When either has an entry,
	// they replace the Chat and Assistants flags: an empty allow list allows
	// every component, a non-empty one only its entries, and the deny list
	// always wins.
	Allowed []string
	Denied  []string
}

// DefaultVisibility shows a tool in the chat and in assistants.
func DefaultVisibility() Visibility { return Visibility{Chat: true, Assistants: true} }

// SettingsSchema describes a tool's settings. Every field is a string.
type SettingsSchema struct {
	// Fields in display order.
	Fields []SettingField
	// Required lists the names of fields the tool cannot work without.
	Required []string
}

// Field returns the field with the given name.
func (s SettingsSchema) Field(name string) (SettingField, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return SettingField{}, false
}

// IsRequired reports whether name is a required field.
func (s SettingsSchema) IsRequired(name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

// SettingField is one setting of a tool.
type SettingField struct {
	Name        string
	Title       string
	Description string
	// Type is always "string"; kept for the documented schema.
	Type string
	// Default is the value used when nobody set one; documentation only
	// unless the tool reads it.
	Default string
	// Secret fields go to the keyring, never take an organization default
	// and never appear in traces or errors.
	Secret bool
	// Group is an optional heading; whitespace-only is invalid.
	Group string
	// Enum spells the allowed values out. Mutually exclusive with
	// OptionSource.
	Enum []string
	// OptionSource names a list the application maintains.
	OptionSource string
}
