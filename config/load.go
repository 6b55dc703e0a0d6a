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
	// With isolation, every plugin runs in one child process (a new one
	// only after a plugin had to be stopped), so a command pays for one
	// process start, not one per plugin.
	var isolated map[string]runResult
	if opts.Isolation != nil {
		files := append(append([]string{}, orgFiles...), localFiles...)
		isolated = map[string]runResult{}
		for i, r := range opts.Isolation.runAll(ctx, files, opts.Limits) {
			isolated[files[i]] = r
		}
	}
	for _, group := range []struct {
		files []string
		org   bool
	}{{orgFiles, true}, {localFiles, false}} {
		for _, f := range group.files {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var p *Plugin
			var probs []Problem
			var err error
			if r, ok := isolated[f]; ok {
				p, probs, err = readPlugin(f, group.org, opts, r.globals, r.err)
			} else {
				p, probs, err = LoadPlugin(ctx, f, group.org, opts)
			}
			if ctx.Err() != nil {
				// Ctrl-C while a plugin ran: stop here, not with a
				// half-read configuration.
				return nil, ctx.Err()
			}
			eff.Problems = append(eff.Problems, probs...)
			if err != nil {
				eff.Problems = append(eff.Problems, Problem{File: f, Line: errLine(err), Message: "the plugin was not loaded: " + cleanLuaError(err), Kind: ProblemSkipped})
				continue
			}
			if prev, dup := seen[p.ID]; dup {
				// An organization plugin beats a local one with the same ID.
				eff.Problems = append(eff.Problems, Problem{File: f, Message: fmt.Sprintf("plugin ID %s is also used by %s; only one is loaded", p.ID, prev.Path), Kind: ProblemSkipped})
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
	owners := map[string]map[string]*Plugin{}
	for _, p := range eff.Plugins {
		for _, s := range p.Settings {
			prev, had := eff.Settings[s.Key]
			if !p.Org {
				if owner := orgOwner(eff, s.Key); owner != "" {
					eff.Problems = append(eff.Problems, Problem{File: p.Path, Line: s.Line, Kind: ProblemConflict,
						Message: fmt.Sprintf("%s is managed by the organization plugin %q; the local plugin %q may not change it, its value is ignored", s.Key, owner, p.Name)})
					continue
				}
			}
			v := s.Value
			if s.Key == "DataApp.EnabledPreviewFeatures" && had {
				v = unionList(prev.Value, v)
			}
			eff.Settings[s.Key] = Managed{Value: v, Locked: s.Locked, PluginID: p.ID, Plugin: p.Name, Org: p.Org}
		}
		eff.Providers = mergeDefinitions(eff, owners, "provider", eff.Providers, p, p.Providers, func(x ProviderConfig) string { return x.ID })
		eff.EmbeddingProviders = mergeDefinitions(eff, owners, "embedding provider", eff.EmbeddingProviders, p, p.EmbeddingProviders, func(x EmbeddingConfig) string { return x.ID })
		eff.DataSources = mergeDefinitions(eff, owners, "data source", eff.DataSources, p, p.DataSources, func(x DataSourceConfig) string { return x.ID })
		eff.Mailboxes = mergeDefinitions(eff, owners, "mailbox", eff.Mailboxes, p, p.Mailboxes, func(x MailboxConfig) string { return x.ID })
		eff.MCPServers = mergeDefinitions(eff, owners, "MCP server", eff.MCPServers, p, p.MCPServers, func(x MCPServerConfig) string { return x.ID })
	}
	return eff, nil
}

// linkedSettings are settings that decide together: an organization that
// manages one of them manages all, so that a local plugin cannot loosen the
// organization's choice through the other (e.g. list OPEN_AI as HIGH in
// the custom scheme the organization chose without a map).
var linkedSettings = [][]string{
	{"DataConfidence.ConfidenceScheme", "DataConfidence.CustomConfidenceScheme"},
}

// orgOwner names the organization plugin managing key, or a setting linked
// with it; "" when none does.
func orgOwner(eff *Effective, key string) string {
	keys := []string{key}
	for _, group := range linkedSettings {
		for _, k := range group {
			if k == key {
				keys = group
			}
		}
	}
	for _, k := range keys {
		if m, ok := eff.Settings[k]; ok && m.Org {
			return m.Plugin
		}
	}
	return ""
}

// mergeDefinitions adds one plugin's definitions of one kind (providers,
// mailboxes, data sources, and whatever kind a plugin defines next) to
// those of the plugins before it, by ID. A later plugin replaces an earlier
// one's definition, except that a local plugin never replaces an
// organization plugin's: its definition is refused with one problem naming
// both plugins. Plugins arrive in start order, organization plugins first.
func mergeDefinitions[T any](eff *Effective, owners map[string]map[string]*Plugin, kind string, have []T, p *Plugin, add []T, id func(T) string) []T {
	if owners[kind] == nil {
		owners[kind] = map[string]*Plugin{}
	}
	var keep []T
	for _, a := range add {
		key := strings.ToLower(id(a))
		if owner, ok := owners[kind][key]; ok && owner.Org && !p.Org {
			eff.Problems = append(eff.Problems, Problem{File: p.Path, Line: lineOf(p.src, id(a)), Kind: ProblemConflict,
				Message: fmt.Sprintf("%s %q is defined by the organization plugin %q (%s); the local plugin %q may not redefine it, its definition is ignored", kind, id(a), owner.Name, owner.Path, p.Name)})
			continue
		}
		owners[kind][key] = p
		keep = append(keep, a)
	}
	return mergeByID(have, keep, func(x T) string { return strings.ToLower(id(x)) })
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
