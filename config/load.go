package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stewardhq/steward/policy"
)

// Dir returns the configuration directory: $STEWARD_CONFIG_DIR, else
// $XDG_CONFIG_HOME/steward, else ~/.config/steward.
func Dir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("STEWARD_CONFIG_DIR"); d != "" {
		return d, nil
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "steward"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the configuration directory: set STEWARD_CONFIG_DIR, XDG_CONFIG_HOME or HOME: %w", err)
	}
	return filepath.Join(home, ".config", "steward"), nil
}

// Managed is a setting value a plugin manages, with who set it.
type Managed struct {
	Value any
	// Locked values are forced; unlocked ones are editable defaults.
	Locked   bool
	PluginID string
	Plugin   string
	Org      bool
}

// Effective is the merged configuration of every plugin.
type Effective struct {
	Plugins  []*Plugin
	Problems []Problem
	// Settings maps a setting key to its winning value.
	Settings map[string]Managed

	Providers          []ProviderConfig
	EmbeddingProviders []EmbeddingConfig
	DataSources        []DataSourceConfig
	Mailboxes          []MailboxConfig
	MCPServers         []MCPServerConfig
}

// Load runs every plugin under dir/plugins/org/*/plugin.lua and
// dir/plugins/local/*/plugin.lua and merges them. A plugin that fails is
// reported in Problems and left out; Load itself fails only when ctx ends.
func Load(ctx context.Context, dir string, opts Options) (*Effective, error) {
	orgFiles, localFiles := pluginFiles(dir)
	eff := &Effective{Settings: map[string]Managed{}}
	seen := map[string]*Plugin{}
	for _, group := range []struct {
		files []string
		org   bool
	}{{orgFiles, true}, {localFiles, false}} {
		for _, f := range group.files {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			p, probs, err := LoadPlugin(ctx, f, group.org, opts)
			eff.Problems = append(eff.Problems, probs...)
			if err != nil {
				eff.Problems = append(eff.Problems, Problem{File: f, Line: errLine(err), Message: "the plugin was not loaded: " + cleanLuaError(err)})
				continue
			}
			if prev, dup := seen[p.ID]; dup {
				// An organization plugin beats a local one with the same ID.
				eff.Problems = append(eff.Problems, Problem{File: f, Message: fmt.Sprintf("plugin ID %s is also used by %s; only one is loaded", p.ID, prev.Path)})
				if prev.Org || !p.Org {
					continue
				}
			}
			seen[p.ID] = p
		}
	}
	for _, p := range seen {
		eff.Plugins = append(eff.Plugins, p)
	}
	// Start order: organization plugins first, then local ones; within a
	// rank ascending PRIORITY, then path. Later wins, except that a local
	// plugin never takes over what an organization plugin manages.
	sort.SliceStable(eff.Plugins, func(i, j int) bool {
		a, b := eff.Plugins[i], eff.Plugins[j]
		if a.Org != b.Org {
			return a.Org
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.Path < b.Path
	})
	for _, p := range eff.Plugins {
		for _, s := range p.Settings {
			prev, had := eff.Settings[s.Key]
			if had && prev.Org && !p.Org {
				eff.Problems = append(eff.Problems, Problem{File: p.Path, Line: s.Line, Message: fmt.Sprintf("%s is managed by the organization plugin %q; the local value is ignored", s.Key, prev.Plugin)})
				continue
			}
			v := s.Value
			if s.Key == "DataApp.EnabledPreviewFeatures" && had {
				v = unionList(prev.Value, v)
			}
			eff.Settings[s.Key] = Managed{Value: v, Locked: s.Locked, PluginID: p.ID, Plugin: p.Name, Org: p.Org}
		}
		eff.Providers = mergeByID(eff.Providers, p.Providers, func(x ProviderConfig) string { return x.ID })
		eff.EmbeddingProviders = mergeByID(eff.EmbeddingProviders, p.EmbeddingProviders, func(x EmbeddingConfig) string { return x.ID })
		eff.DataSources = mergeByID(eff.DataSources, p.DataSources, func(x DataSourceConfig) string { return x.ID })
		eff.Mailboxes = mergeByID(eff.Mailboxes, p.Mailboxes, func(x MailboxConfig) string { return x.ID })
		eff.MCPServers = mergeMCPServers(eff.MCPServers, p, &eff.Problems)
	}
	return eff, nil
}

func mergeByID[T any](have, add []T, id func(T) string) []T {
	for _, a := range add {
		replaced := false
		for i, h := range have {
			if id(h) == id(a) {
				have[i] = a
				replaced = true
			}
		}
		if !replaced {
			have = append(have, a)
		}
	}
	return have
}

func unionList(a, b any) []any {
	out := append([]any{}, listOf(a)...)
	for _, v := range listOf(b) {
		dup := false
		for _, o := range out {
			if o == v {
				dup = true
			}
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

func errLine(err error) int {
	var n int
	msg := err.Error()
	if i := strings.Index(msg, "line:"); i >= 0 {
		fmt.Sscanf(msg[i+len("line:"):], "%d", &n)
	}
	return n
}

func cleanLuaError(err error) string {
	switch {
	case errors.Is(err, ErrTimeLimit), errors.Is(err, ErrMemoryLimit):
		return err.Error()
	}
	msg := err.Error()
	if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// Scheme returns the confidence scheme the organization chose.
func (e *Effective) Scheme() policy.SchemeConfig {
	sc := policy.SchemeConfig{Scheme: policy.TrustAll}
	if m, ok := e.Settings["DataConfidence.ConfidenceScheme"]; ok {
		if s, err := policy.ParseScheme(fmt.Sprint(m.Value)); err == nil {
			sc.Scheme = s
		}
	}
	if m, ok := e.Settings["DataConfidence.CustomConfidenceScheme"]; ok {
		sc.Custom = levelMap(m.Value)
	}
	return sc
}

// GlobalMinimum returns the enforced global minimum confidence, or NONE.
func (e *Effective) GlobalMinimum() policy.Confidence {
	if m, ok := e.Settings["DataConfidence.EnforceGlobalMinimumConfidence"]; !ok || m.Value != true {
		return policy.None
	}
	if m, ok := e.Settings["DataConfidence.GlobalMinimumConfidence"]; ok {
		if c, err := policy.ParseConfidence(fmt.Sprint(m.Value)); err == nil && c != policy.Unknown {
			return c
		}
	}
	return policy.None
}

// ToolsEnabled is false when the organization switched tools off.
func (e *Effective) ToolsEnabled() (enabled bool, managed bool) {
	if m, ok := e.Settings["DataTools.EnableTools"]; ok {
		b, _ := m.Value.(bool)
		return b, true
	}
	return true, false
}

// StringList returns a list setting as strings.
func (e *Effective) StringList(key string) []string {
	m, ok := e.Settings[key]
	if !ok {
		return nil
	}
	var out []string
	for _, v := range listOf(m.Value) {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// MinimumConfidenceByID returns the organization's minimum confidence per
// tool or collection ID. Unreadable levels are kept as the raw text so the
// registry can count them as HIGH.
func (e *Effective) MinimumConfidenceByID() (levels map[string]string, m Managed, ok bool) {
	m, ok = e.Settings["DataTools.MinimumProviderConfidenceByToolId"]
	if !ok {
		return nil, m, false
	}
	levels = map[string]string{}
	if mm, isMap := m.Value.(map[string]any); isMap {
		for k, v := range mm {
			levels[k] = fmt.Sprint(v)
		}
	}
	return levels, m, true
}

// ToolSetting returns the managed value of "<toolID>.<field>".
func (e *Effective) ToolSetting(toolID, field string) (Managed, bool) {
	m, ok := e.Settings[toolID+"."+field]
	return m, ok
}

func levelMap(v any) map[string]policy.Confidence {
	out := map[string]policy.Confidence{}
	if mm, ok := v.(map[string]any); ok {
		for k, lv := range mm {
			if c, err := policy.ParseConfidence(fmt.Sprint(lv)); err == nil {
				out[k] = c
			}
		}
	}
	return out
}
