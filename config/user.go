package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stewardhq/steward/policy"
)

// UserSettingsVersion is the version this Steward writes.
const UserSettingsVersion = 2

// UserSettings is the user's own settings file, settings.json in the
// configuration directory. Secrets are never in it: they go to the keyring
// or the user-only secrets file.
type UserSettings struct {
	Version int `json:"version"`
	// DefaultProvider is the ID of the provider `steward ask` uses when none
	// is named.
	DefaultProvider string         `json:"default_provider,omitempty"`
	Providers       []UserProvider `json:"providers,omitempty"`
	// Tools holds tool settings by tool ID and field name.
	Tools map[string]map[string]string `json:"tools,omitempty"`
	// SelectedTools is the default tool selection of the chat.
	SelectedTools []string `json:"selected_tools,omitempty"`
	// DisabledTools are tool or collection IDs the user switched off.
	DisabledTools []string `json:"disabled_tools,omitempty"`
	// MinimumConfidence raises the minimum provider confidence per tool or
	// collection ID.
	MinimumConfidence      map[string]string `json:"minimum_confidence,omitempty"`
	EnabledPreviewFeatures []string          `json:"enabled_preview_features,omitempty"`
	Mailboxes              []UserMailbox     `json:"mailboxes,omitempty"`
	// DataSources are the user's data sources (see datasources.go).
	DataSources        []UserDataSource   `json:"data_sources,omitempty"`
	DataSourceDefaults DataSourceDefaults `json:"data_source_defaults,omitzero"`
	// MCP holds the user's MCP servers and the confidence of MCP clients.
	MCP *UserMCP `json:"mcp,omitempty"`
}

// UserProvider is a provider the user configured.
type UserProvider struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Model   string `json:"model,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
}

// UserMailbox is a mailbox the user added with `steward mail add`.
type UserMailbox struct {
	ID                         string   `json:"id"`
	Name                       string   `json:"name"`
	Host                       string   `json:"host"`
	Port                       int      `json:"port"`
	Security                   string   `json:"security"`
	Auth                       string   `json:"auth"`
	Username                   string   `json:"username"`
	Folders                    []string `json:"folders,omitempty"`
	EmbeddingProvider          string   `json:"embedding_provider,omitempty"`
	RequiredProviderConfidence string   `json:"required_provider_confidence"`
	OutboundDataRestriction    string   `json:"outbound_data_restriction"`
	// MaxAgeDays limits the index to the mails of the last days (plus
	// flagged mails and drafts); 0 indexes every mail.
	MaxAgeDays int `json:"max_age_days,omitempty"`
}

// UserSettingsPath returns settings.json in dir.
func UserSettingsPath(dir string) string { return filepath.Join(dir, "settings.json") }

// LoadUserSettings reads the settings file; a missing file gives empty
// settings. Older versions are migrated; a newer version is refused so that
// this Steward never writes over what it cannot read.
func LoadUserSettings(path string) (*UserSettings, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &UserSettings{Version: UserSettingsVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	var probe struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v): fix or remove it", path, err)
	}
	switch {
	case probe.Version > UserSettingsVersion:
		return nil, fmt.Errorf("%s has version %d, this Steward reads up to version %d: update Steward", path, probe.Version, UserSettingsVersion)
	case probe.Version < UserSettingsVersion:
		if b, err = migrate(b, probe.Version); err != nil {
			return nil, fmt.Errorf("%s: migrating from version %d: %w", path, probe.Version, err)
		}
	}
	s := &UserSettings{}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for _, m := range s.Mailboxes {
		if m.MaxAgeDays < 0 || m.MaxAgeDays > MaxMailboxAgeDays {
			return nil, fmt.Errorf("%s: mailbox %s: max_age_days %d: use 0 (index every mail) to %d days", path, m.ID, m.MaxAgeDays, MaxMailboxAgeDays)
		}
	}
	return s, nil
}

// migrate lifts an older settings document to the current version, one
// step at a time.
func migrate(b []byte, from int) ([]byte, error) {
	doc := map[string]any{}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if from <= 1 {
		// Version 1 kept tool settings flat as "<toolId>.<field>": value
		// under "tool_settings"; version 2 nests them under "tools".
		flat, _ := doc["tool_settings"].(map[string]any)
		tools := map[string]any{}
		keys := make([]string, 0, len(flat))
		for k := range flat {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			id, field, ok := strings.Cut(k, ".")
			if !ok || id == "" || field == "" {
				return nil, fmt.Errorf("tool setting %q is not \"<toolId>.<field>\"", k)
			}
			m, _ := tools[id].(map[string]any)
			if m == nil {
				m = map[string]any{}
				tools[id] = m
			}
			m[field] = flat[k]
		}
		delete(doc, "tool_settings")
		if len(tools) > 0 {
			doc["tools"] = tools
		}
	}
	doc["version"] = UserSettingsVersion
	return json.Marshal(doc)
}

// Save writes the settings atomically: a temporary file in the same
// directory, synced, then renamed over the old one.
func (s *UserSettings) Save(path string) error {
	s.Version = UserSettingsVersion
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// WriteFileAtomic replaces path with data so that a crash leaves either the
// old or the new file, never a mix.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ToolValue returns the user's saved value of a tool setting.
func (s *UserSettings) ToolValue(toolID, field string) (string, bool) {
	v, ok := s.Tools[toolID][field]
	return v, ok
}

// SetToolValue stores a value; an empty value removes it.
func (s *UserSettings) SetToolValue(toolID, field, value string) {
	if value == "" {
		delete(s.Tools[toolID], field)
		if len(s.Tools[toolID]) == 0 {
			delete(s.Tools, toolID)
		}
		return
	}
	if s.Tools == nil {
		s.Tools = map[string]map[string]string{}
	}
	if s.Tools[toolID] == nil {
		s.Tools[toolID] = map[string]string{}
	}
	s.Tools[toolID][field] = value
}

// SecurityProblems reports the security settings of the user's file that
// cannot be read, with the file and line; each counts as its strictest
// value: an unreadable minimum confidence as HIGH, a mailbox's unreadable
// level as HIGH and its unreadable restriction as ONLY_CONFIGURED_SERVICES.
func (s *UserSettings) SecurityProblems(path string) []Problem {
	raw, _ := os.ReadFile(path)
	var out []Problem
	add := func(anchor string, format string, a ...any) {
		out = append(out, Problem{File: path, Line: lineOf(raw, anchor), Kind: ProblemSecurity, Message: fmt.Sprintf(format, a...)})
	}
	ids := make([]string, 0, len(s.MinimumConfidence))
	for id := range s.MinimumConfidence {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := policy.ParseConfidence(s.MinimumConfidence[id]); err != nil {
			add(s.MinimumConfidence[id], "minimum_confidence[%q]: %v; it counts as HIGH", id, err)
		}
	}
	for _, m := range s.Mailboxes {
		if c, err := policy.ParseConfidence(m.RequiredProviderConfidence); err != nil || c < policy.VeryLow {
			add(m.RequiredProviderConfidence, "mailbox %s: required_provider_confidence %q must be VERY_LOW, LOW, MODERATE, MEDIUM or HIGH; it counts as HIGH", m.ID, m.RequiredProviderConfidence)
		}
		if _, err := policy.ParseRestriction(m.OutboundDataRestriction); err != nil {
			add(m.OutboundDataRestriction, "mailbox %s: outbound_data_restriction: %v", m.ID, err)
		}
	}
	return out
}
