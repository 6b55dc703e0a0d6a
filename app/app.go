package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/redact"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/store"
	"github.com/stewardhq/steward/store/searchindex"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/web"
)

// Options say where Steward finds its configuration and data.
type Options struct {
	// ConfigDir overrides the configuration directory.
	ConfigDir string
	// DataDir overrides the data directory (chat store, mail index).
	DataDir string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// HTTPClient talks to providers; nil uses a default client.
	HTTPClient *http.Client
	// Web configures the page retrieval service; the zero value is the
	// production service. Tests inject a resolver and a dialer here.
	Web web.ServiceOptions
	// OnRetry, when not nil, hears of every retry of a provider request
	// before its wait (the command line prints one line per retry).
	OnRetry func(llm.RetryNotice)
	// Secrets learns every secret the App reads (provider keys from the
	// environment and the organization, whatever the secret store or an
	// ENC:v1 value gives), so that output and the chat store can be
	// redacted; nil keeps a set of the App's own.
	Secrets *redact.Set
	// PluginIsolation runs each configuration plugin in a child process
	// that can be stopped at any point (see config.ChildProcess); nil runs
	// plugins in this process.
	PluginIsolation *config.ChildProcess
	// SkipMCPServers leaves the configured MCP servers unstarted and their
	// tools out of the registry, for commands that offer no tools.
	SkipMCPServers bool
	// OneShot says the process answers one query and exits (steward mail
	// search, sources search): the mail and document indexes are opened
	// with a small page cache (searchindex.OneShotCacheKiB), which such a
	// process fills faster than it allocates a large one.
	OneShot bool
}

// App is Steward, wired.
type App struct {
	ConfigDir string
	DataDir   string
	Org       *config.Effective
	User      *config.UserSettings
	Secrets   config.SecretStore
	Policy    settings.Policy
	Resolver  *settings.Resolver
	Registry  *registry.Registry
	// RegistryProblems are definitions the registry refused.
	RegistryProblems []error
	Tools            []tool.Tool
	// MCP are the configured MCP servers and what became of them; empty
	// with Options.SkipMCPServers.
	MCP            []MCPServer
	mcpCollections []registry.Collection
	Logger         *slog.Logger
	HTTPClient     *http.Client

	// Redact is where every configured secret is known; everything the App
	// stores goes through it, and surfaces pass their output through it.
	Redact *redact.Set

	getenv     func(string) string
	onRetry    func(llm.RetryNotice)
	defs       map[string]tool.Definition
	webOnce    webParts
	mail       mailParts
	sources    sourceParts
	webOptions web.ServiceOptions
	// indexOptions open the mail and document indexes.
	indexOptions []searchindex.Option
	hosts        hostChecks
	pinned       pinnedClient
	// settingsMu guards a.User.Tools, which SetToolSetting replaces while
	// other goroutines may read it.
	settingsMu sync.RWMutex
}

// Open reads the configuration and builds everything a run needs. A plugin
// that fails is reported in a.Org.Problems and does not stop Steward.
func Open(ctx context.Context, opts Options) (*App, error) {
	a := &App{getenv: opts.Getenv, Logger: opts.Logger, HTTPClient: opts.HTTPClient, webOptions: opts.Web, onRetry: opts.OnRetry, Redact: opts.Secrets}
	if opts.OneShot {
		a.indexOptions = []searchindex.Option{searchindex.CacheKiB(searchindex.OneShotCacheKiB)}
	}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	if a.Redact == nil {
		a.Redact = &redact.Set{}
	}
	a.learnEnvironmentKeys()
	if a.Logger == nil {
		a.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if a.HTTPClient == nil {
		a.HTTPClient = &http.Client{}
	}
	var err error
	a.ConfigDir = opts.ConfigDir
	if a.ConfigDir == "" {
		if a.ConfigDir, err = config.Dir(a.getenv); err != nil {
			return nil, err
		}
	}
	a.DataDir = opts.DataDir
	if a.DataDir == "" {
		a.DataDir = a.getenv("STEWARD_DATA_DIR")
	}
	if a.DataDir == "" {
		p, err := store.DefaultPath()
		if err != nil {
			return nil, err
		}
		a.DataDir = filepath.Dir(p)
	}
	// The configuration comes first: tools such as the mail tools are
	// built from it. Tool setting keys are checked once the tools exist.
	a.Org, err = config.Load(ctx, a.ConfigDir, config.Options{Getenv: a.getenv, Isolation: opts.PluginIsolation})
	if err != nil {
		return nil, err
	}
	a.User, err = config.LoadUserSettings(config.UserSettingsPath(a.ConfigDir))
	if err != nil {
		return nil, err
	}
	a.Org.Problems = append(a.Org.Problems, a.User.SecurityProblems(config.UserSettingsPath(a.ConfigDir))...)
	a.learnOrgSecrets()
	a.Secrets = learningStore{s: &lazyStore{dir: a.ConfigDir}, set: a.Redact}
	a.Policy = a.buildPolicy()
	a.Tools, err = a.buildTools()
	if err != nil {
		return nil, err
	}
	if !opts.SkipMCPServers && a.Policy.ToolsOn() {
		a.addMCPTools(ctx)
	}
	a.defs = map[string]tool.Definition{}
	for _, t := range a.Tools {
		d := t.Definition()
		a.defs[d.ID] = d
	}
	a.checkToolSettingKeys()
	a.DataSources() // records what is wrong with the organization's data sources
	a.Resolver = a.buildResolver()
	a.Registry, a.RegistryProblems = registry.New(registry.Options{
		Policy:        a.Policy,
		Settings:      a.Resolver,
		OptionSources: optionSources(),
		Logger:        a.Logger,
	}, a.Tools, a.collections())
	return a, nil
}

// Notices are the configuration problems every command reports, one line
// each: plugins that were not loaded, security settings that could not be
// read and count as their strictest value, and local definitions refused
// because an organization plugin defines the same ID. The other problems
// are listed by `steward config check`.
func (a *App) Notices() []string {
	var out []string
	for _, p := range a.Org.Problems {
		if p.Always() {
			out = append(out, p.String())
		}
	}
	return out
}

// checkToolSettingKeys reports tool settings of plugins that name no tool
// field, with the plugin's file and line.
func (a *App) checkToolSettingKeys() {
	for _, p := range a.Org.Plugins {
		for _, st := range p.Settings {
			if strings.HasPrefix(st.Key, "Data") {
				continue
			}
			toolID, field, _ := strings.Cut(st.Key, ".")
			if !a.knownToolField(toolID, field) {
				a.Org.Problems = append(a.Org.Problems, config.Problem{File: p.Path, Line: st.Line,
					Message: fmt.Sprintf("unknown tool setting %q: no tool %q with a field %q (see `steward tools` and the example plugin)", st.Key, toolID, field)})
			}
		}
	}
}

func (a *App) knownToolField(toolID, field string) bool {
	d, ok := a.defs[toolID]
	if !ok {
		return false
	}
	_, ok = d.Settings.Field(field)
	return ok
}

// Definition returns a tool's definition by ID.
func (a *App) Definition(id string) (tool.Definition, bool) {
	d, ok := a.defs[id]
	return d, ok
}

func (a *App) buildPolicy() settings.Policy {
	p := settings.Policy{}
	if on, managed := a.Org.ToolsEnabled(); managed && !on {
		p.ToolsOff = true
	}
	p.DisabledIDs = append(p.DisabledIDs, a.Org.StringList("DataTools.DisabledToolIds")...)
	p.DisabledIDs = append(p.DisabledIDs, a.User.DisabledTools...)
	p.Previews = append(p.Previews, a.Org.StringList("DataApp.EnabledPreviewFeatures")...)
	p.Previews = append(p.Previews, a.User.EnabledPreviewFeatures...)
	p.Confidence.Locked = map[string]settings.LockedValue{}
	p.Confidence.User = map[string]policy.Confidence{}
	if levels, m, ok := a.Org.MinimumConfidenceByID(); ok {
		for id, lv := range levels {
			_, err := policy.ParseConfidence(lv)
			// An editable default counts like a user's own level: the user
			// may raise it further, never below the organization's locked one.
			if m.Locked {
				p.Confidence.Locked[id] = settings.LockedValue{Value: lv, Plugin: m.Plugin, Invalid: err != nil}
			} else if c, err := policy.ParseConfidence(lv); err == nil {
				p.Confidence.User[id] = c
			}
		}
	}
	for id, lv := range a.User.MinimumConfidence {
		c, err := policy.ParseConfidence(lv)
		if err != nil {
			// Unreadable counts as the strictest (reported by Notices).
			c = policy.High
		}
		p.Confidence.User[id] = policy.Max(p.Confidence.User[id], c)
	}
	return p
}

func (a *App) buildResolver() *settings.Resolver {
	org := settings.Org{Locked: map[string]settings.LockedValue{}, Defaults: map[string]string{}}
	secret := a.getenv(config.EncryptionSecretEnv)
	for key, m := range a.Org.Settings {
		toolID, field, ok := strings.Cut(key, ".")
		if !ok {
			continue
		}
		d, known := a.defs[toolID]
		if !known {
			continue
		}
		f, known := d.Settings.Field(field)
		if !known {
			continue
		}
		v := fmt.Sprint(m.Value)
		if f.Secret {
			// A locked secret must come encrypted; anything else leaves the
			// field empty, and the user's own secret is not read.
			if !m.Locked {
				continue
			}
			plain, err := config.Decrypt(v, secret)
			a.Redact.Add(plain)
			org.Locked[key] = settings.LockedValue{Value: plain, Plugin: m.Plugin, Invalid: err != nil}
			continue
		}
		if m.Locked {
			org.Locked[key] = settings.LockedValue{Value: v, Plugin: m.Plugin}
		} else {
			org.Defaults[key] = v
		}
	}
	return &settings.Resolver{Org: org, User: settings.User(a.User.Tools), Secrets: secretAdapter{a.Secrets}}
}

type secretAdapter struct{ s config.SecretStore }

func (s secretAdapter) ToolSecret(_ context.Context, toolID, field string) (string, bool, error) {
	return s.s.Get("tool::"+toolID, field)
}

// learnEnvironmentKeys adds every provider key and the organization's
// decryption secret found in the environment to the redaction set.
func (a *App) learnEnvironmentKeys() {
	a.Redact.Add(a.getenv(config.EncryptionSecretEnv))
	for _, k := range llm.Kinds() {
		info, _ := k.Info()
		for _, name := range info.KeyEnv {
			a.Redact.Add(a.getenv(name))
		}
	}
}

// learnOrgSecrets adds the decrypted secrets of the organization's plugins:
// provider and embedding keys, mailbox secrets, the classifier's key.
func (a *App) learnOrgSecrets() {
	for _, p := range a.Org.Providers {
		a.Redact.Add(p.APIKey)
	}
	for _, e := range a.Org.EmbeddingProviders {
		a.Redact.Add(e.APIKey)
	}
	for _, m := range a.Org.Mailboxes {
		a.Redact.Add(m.Secret)
	}
	// Every value of an MCP server's environment and headers counts as a
	// secret (see config.MCPServerConfig).
	for _, m := range a.Org.MCPServers {
		for _, v := range m.Env {
			a.Redact.Add(v)
		}
		for _, v := range m.Headers {
			a.Redact.Add(v)
		}
	}
	for key, m := range a.Org.Settings {
		if s, ok := m.Value.(string); ok && (strings.HasPrefix(s, "ENC:") || strings.HasSuffix(strings.ToLower(key), "apikey") || strings.HasSuffix(strings.ToLower(key), "token") || strings.HasSuffix(strings.ToLower(key), "password")) {
			if plain, err := config.Decrypt(s, a.getenv(config.EncryptionSecretEnv)); err == nil {
				a.Redact.Add(plain)
			} else if !strings.HasPrefix(s, "ENC:") {
				a.Redact.Add(s)
			}
		}
	}
}

// lazyStore opens the secret store on first use: finding out whether an OS
// keyring answers is a D-Bus round trip (and may start a keyring daemon or
// ask to unlock one), which commands that read no secret must not pay.
type lazyStore struct {
	dir  string
	once sync.Once
	s    config.SecretStore
}

func (l *lazyStore) store() config.SecretStore {
	l.once.Do(func() { l.s = config.OpenSecretStore(l.dir) })
	return l.s
}

func (l *lazyStore) Get(service, key string) (string, bool, error) {
	return l.store().Get(service, key)
}
func (l *lazyStore) Set(service, key, value string) error { return l.store().Set(service, key, value) }
func (l *lazyStore) Delete(service, key string) error     { return l.store().Delete(service, key) }
func (l *lazyStore) Where() string                        { return l.store().Where() }

// learningStore is the secret store, teaching the redaction set every
// secret read from it or written to it.
type learningStore struct {
	s   config.SecretStore
	set *redact.Set
}

func (l learningStore) Get(service, key string) (string, bool, error) {
	v, ok, err := l.s.Get(service, key)
	l.set.Add(v)
	return v, ok, err
}

func (l learningStore) Set(service, key, value string) error {
	l.set.Add(value)
	return l.s.Set(service, key, value)
}

func (l learningStore) Delete(service, key string) error { return l.s.Delete(service, key) }
func (l learningStore) Where() string                    { return l.s.Where() }

// Locate names where the store keeps a secret, without reading it.
func (l learningStore) Locate(service, key string) (string, error) {
	return config.LocateSecret(l.s, service, key)
}

// StorePath is the chat database.
func (a *App) StorePath() string { return filepath.Join(a.DataDir, "steward.db") }

// OpenStore opens the chat database.
func (a *App) OpenStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, a.StorePath())
	if err != nil {
		return nil, err
	}
	st.RedactWith(a.Redact.String)
	return st, nil
}

// SaveUserSettings writes the user's settings file atomically.
func (a *App) SaveUserSettings() error {
	return a.User.Save(config.UserSettingsPath(a.ConfigDir))
}
