package settings

import (
	"slices"
	"strings"

	"github.com/stewardhq/steward/policy"
)

// Preview features which tools depend on. Values are never reused.
const (
	PreviewRAG       = "PRE_RAG_2024"
	PreviewMailboxes = "PRE_MAILBOXES_2026"
)

// released lists preview features which are always on.
var released = []string{"PRE_PLUGINS_2025", "PRE_READ_PDF_2025", "PRE_DOCUMENT_ANALYSIS_2025", "PRE_SPEECH_TO_TEXT_2026"}

// Policy is the organization's and user's say over which tools may run at
// all, as resolved by the config package. The zero value has tools on,
// nothing disabled, no confidence overrides and no preview features.
type Policy struct {
	// ToolsOff switches every tool off.
	ToolsOff bool
	// DisabledIDs lists tool or collection IDs which are switched off.
	// Naming one tool of a collection switches off the whole collection;
	// AllIDs switches off every tool.
	DisabledIDs []string
	// Confidence holds the minimum provider confidence overrides.
	Confidence ConfidenceOverrides
	// Previews lists the enabled preview features, e.g. PRE_RAG_2024.
	Previews []string
}

// ConfidenceOverrides are the minimum provider confidence levels set for
// tool or collection IDs.
type ConfidenceOverrides struct {
	// Locked holds organization values by ID, as level names. An entry
	// which is Invalid, unreadable or UNKNOWN counts as HIGH.
	Locked map[string]LockedValue
	// User holds the user's own levels by ID. Levels which are not defined
	// are ignored.
	User map[string]policy.Confidence
}

// AllIDs in DisabledIDs or among the locked confidence levels stands for
// every tool and collection: the config package puts it there for a
// security setting it could not read, which then counts as its strictest
// value.
const AllIDs = "*"

// ToolsOn reports whether tools are switched on globally.
func (p Policy) ToolsOn() bool { return !p.ToolsOff }

// Disabled reports whether any of the IDs is switched off. Pass the settings
// IDs of a tool: its collection's ID and the IDs of the collection's tools.
func (p Policy) Disabled(ids ...string) bool {
	if slices.Contains(p.DisabledIDs, AllIDs) {
		return true
	}
	for _, id := range ids {
		if slices.Contains(p.DisabledIDs, id) {
			return true
		}
	}
	return false
}

// Active reports whether tools are on and none of the IDs is switched off.
func (p Policy) Active(ids ...string) bool { return p.ToolsOn() && !p.Disabled(ids...) }

// Minimum is a resolved minimum provider confidence.
type Minimum struct {
	Level  policy.Confidence
	Origin Origin
	// LockedBy names the plugin of the winning locked entry.
	LockedBy string
}

// MinimumConfidence resolves the minimum provider confidence over the
// settings IDs of a tool or collection. declared is the collection's
// declared minimum, or for a lone tool the tool's own.
//
// A locked organization entry comes first (a readable level other than
// UNKNOWN counts as itself, anything else as HIGH), then the user's own
// entries, then declared. Among several entries of the same kind, the
// highest level wins.
func (p Policy) MinimumConfidence(ids []string, declared policy.Confidence) Minimum {
	var m Minimum
	found := false
	for _, id := range append(slices.Clip(ids), AllIDs) {
		l, ok := p.Confidence.Locked[id]
		if !ok {
			continue
		}
		level := lockedLevel(l)
		if !found || level > m.Level {
			m = Minimum{Level: level, Origin: OriginLocked, LockedBy: l.Plugin}
		}
		found = true
	}
	if found {
		return m
	}
	for _, id := range append(slices.Clip(ids), AllIDs) {
		level, ok := p.Confidence.User[id]
		if !ok || !level.Valid() {
			continue
		}
		if !found || level > m.Level {
			m = Minimum{Level: level, Origin: OriginUser}
		}
		found = true
	}
	if found {
		return m
	}
	return Minimum{Level: declared, Origin: OriginDeclared}
}

func lockedLevel(l LockedValue) policy.Confidence {
	if l.Invalid {
		return policy.High
	}
	level, err := policy.ParseConfidence(l.Value)
	if err != nil || level == policy.Unknown {
		return policy.High
	}
	return level
}

// PreviewEnabled reports whether a preview feature is on: released ones
// always are, the others when listed in Previews. Names compare
// case-insensitively.
func (p Policy) PreviewEnabled(feature string) bool {
	for _, f := range released {
		if strings.EqualFold(f, feature) {
			return true
		}
	}
	for _, f := range p.Previews {
		if strings.EqualFold(strings.TrimSpace(f), feature) {
			return true
		}
	}
	return false
}

// PreviewFeatures lists the preview features Steward knows, those that are
// released (always on) included, in the order they were introduced.
func PreviewFeatures() []string {
	return append([]string{PreviewRAG}, append(slices.Clone(released), PreviewMailboxes)...)
}
