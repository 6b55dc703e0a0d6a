package settings

import (
	"context"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/tool"
)

// State is whether a tool is configured well enough to be offered.
type State struct {
	// Missing names the required fields which are missing or blank, in the
	// order of the schema's required list.
	Missing []string
	// Problem is set when the required fields are there but the settings
	// could not be read or the tool objects to them.
	Problem error
}

// Configured reports whether nothing is missing and nothing objected.
func (s State) Configured() bool { return len(s.Missing) == 0 && s.Problem == nil }

// String says what is wrong, or "configured". It never shows a value.
func (s State) String() string {
	switch {
	case len(s.Missing) == 1:
		return "not configured: the required setting " + s.Missing[0] + " is missing"
	case len(s.Missing) > 1:
		return "not configured: the required settings " + strings.Join(s.Missing, ", ") + " are missing"
	case s.Problem != nil:
		return "not configured: " + s.Problem.Error()
	}
	return "configured"
}

// MissingRequired returns the required fields of the schema which are
// missing or blank in the resolution.
func MissingRequired(schema tool.SettingsSchema, r Resolved) []string {
	var missing []string
	for _, name := range schema.Required {
		if f, ok := r.Field(name); !ok || !f.Set() {
			missing = append(missing, name)
		}
	}
	return missing
}

// Check decides the configuration state of a tool: a missing or blank
// required field first, then a failure to read the settings (resolveErr),
// then the tool's own ValidateConfiguration. A panic in the tool's check is
// reported as a problem rather than passed on.
func Check(ctx context.Context, t tool.Tool, def tool.Definition, r Resolved, resolveErr error) State {
	if m := MissingRequired(def.Settings, r); len(m) > 0 {
		return State{Missing: m}
	}
	if resolveErr != nil {
		return State{Problem: resolveErr}
	}
	if err := validate(ctx, t, r.Values()); err != nil {
		return State{Problem: err}
	}
	return State{}
}

// Validate runs the tool's own ValidateConfiguration on values, whether or
// not its required fields are there; a panic in it is reported as an
// error.
func Validate(ctx context.Context, t tool.Tool, values tool.Settings) error {
	return validate(ctx, t, values)
}

func validate(ctx context.Context, t tool.Tool, values tool.Settings) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("settings: the configuration check of the tool failed unexpectedly (%T)", p)
		}
	}()
	return t.ValidateConfiguration(ctx, values)
}

// State resolves the settings of t and decides its configuration state.
func (r *Resolver) State(ctx context.Context, t tool.Tool) (Resolved, State) {
	def := t.Definition()
	res, err := r.Resolve(ctx, def)
	return res, Check(ctx, t, def, res, err)
}
