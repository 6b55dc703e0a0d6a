package config

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/policy"
)

// Problem is one thing wrong with the configuration, with where it is.
type Problem struct {
	File    string
	Line    int // 0 when unknown
	Message string
	// Kind says how much the problem matters; every command reports the
	// kinds other than ProblemOther (see Problem.Always).
	Kind ProblemKind
}

// ProblemKind sorts problems by what they mean for the user.
type ProblemKind int

// The kinds of problems.
const (
	// ProblemOther is a setting or definition left out that loosens
	// nothing; `steward config check` lists it.
	ProblemOther ProblemKind = iota
	// ProblemSkipped is a plugin that was not loaded at all.
	ProblemSkipped
	// ProblemSecurity is a security setting that could not be read and
	// counts as its strictest value.
	ProblemSecurity
	// ProblemConflict is a local plugin's definition refused because an
	// organization plugin defines the same ID.
	ProblemConflict
)

// Always reports whether every command reports the problem, not only
// `steward config check`.
func (p Problem) Always() bool { return p.Kind != ProblemOther }

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

// Plugin is one configuration plugin after it ran.
type Plugin struct {
	ID       string
	Name     string
	Version  string
	Priority int
	// Org is true for organization plugins, which always rank above local
	// ones.
	Org  bool
	Path string

	Providers          []ProviderConfig
	EmbeddingProviders []EmbeddingConfig
	DataSources        []DataSourceConfig
	Mailboxes          []MailboxConfig
	MCPServers         []MCPServerConfig
	Settings           []Setting

	// src is the plugin's source, to point problems found later at a line.
	src []byte
}

// ProviderConfig is one entry of CONFIG["LLM_PROVIDERS"].
type ProviderConfig struct {
	ID              string
	InstanceName    string
	UsedLLMProvider string
	Host            string
	Hostname        string
	ModelID         string
	ModelName       string
	// APIKey is decrypted; empty when none or undecryptable.
	APIKey                  string
	AllowUserProvidedAPIKey bool
	AdditionalParameters    string
	Plugin                  string
}

// EmbeddingConfig is one entry of CONFIG["EMBEDDING_PROVIDERS"].
type EmbeddingConfig struct {
	ID, Name, UsedLLMProvider, Host, Hostname, ModelID string
	APIKey                                             string
	Plugin                                             string
}

// MailboxConfig is one entry of CONFIG["MAILBOXES"].
type MailboxConfig struct {
	ID, Name, Host, Security, Auth, Username string
	Port                                     int
	Folders                                  []string
	EmbeddingProviderID                      string
	RequiredProviderConfidence               policy.Confidence
	OutboundDataRestriction                  policy.Restriction
	// MaxAgeDays limits the index to the mails of the last days (plus
	// flagged mails and drafts); 0 indexes every mail.
	MaxAgeDays int
	// Secret is the decrypted password or token, if the plugin gave one.
	Secret string
	Plugin string
}

// Setting is one entry of CONFIG["SETTINGS"].
type Setting struct {
	Key   string
	Value any
	// Locked is false when "<Key>.AllowUserOverride" is true: the value is
	// then an editable default.
	Locked bool
	Line   int
}

// Options steer loading.
type Options struct {
	Limits Limits
	// KnownToolField reports whether toolID has a setting field; nil accepts
	// every tool setting.
	KnownToolField func(toolID, field string) bool
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Isolation runs each plugin in a child process that can be stopped at
	// any point; nil runs plugins in this process, where the limits hold
	// inside every library function but a single instruction of the Lua
	// virtual machine may overshoot the memory limit before it is stopped.
	// Programs that load plugins they do not control should set it.
	Isolation *ChildProcess
}

// Known keys of CONFIG["SETTINGS"] other than tool settings, with the kind
// of value each takes.
var appSettings = map[string]string{
	"DataConfidence.ConfidenceScheme":               "string",
	"DataConfidence.CustomConfidenceScheme":         "map",
	"DataConfidence.EnforceGlobalMinimumConfidence": "bool",
	"DataConfidence.GlobalMinimumConfidence":        "string",
	"DataTools.EnableTools":                         "bool",
	"DataTools.DisabledToolIds":                     "list",
	"DataTools.MinimumProviderConfidenceByToolId":   "map",
	"DataApp.EnabledPreviewFeatures":                "list",
	"DataSourceSecuritySettings.TrustedProviderIds": "list",
	"DataMailboxes.AllowedServers":                  "list",
	// Which data sources a new chat searches and how (see datasources.go).
	"DataChat.PreselectedDataSourceIds":            "list",
	"DataChat.PreselectedDataSourcesRetrievalMode": "string",
	"DataMailboxes.MinimumOutboundDataRestriction": "string",
	// The prompt-injection filter's external classifier (see guard).
	"DataPromptInjection.ClassifierUrl":            "string",
	"DataPromptInjection.ClassifierApiKey":         "string",
	"DataPromptInjection.ClassifierThreshold":      "string",
	"DataPromptInjection.ClassifierTimeoutSeconds": "string",
	"DataPromptInjection.UseLocalClassifier":       "bool",
	// The confidence `steward mcp serve` gives the connecting MCP client.
	"DataMCP.ClientConfidence": "string",
}

// AppSettingKeys lists the application settings a plugin may manage.
func AppSettingKeys() []string {
	out := make([]string, 0, len(appSettings))
	for k := range appSettings {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// LoadPlugin runs one plugin.lua and reads it. Problems that leave the rest
// of the plugin usable are returned alongside it; an error means the plugin
// could not be used at all.
func LoadPlugin(ctx context.Context, path string, org bool, opts Options) (*Plugin, []Problem, error) {
	var globals map[string]any
	var err error
	if opts.Isolation != nil {
		res := opts.Isolation.runAll(ctx, []string{path}, opts.Limits)
		globals, err = res[0].globals, res[0].err
	} else {
		globals, err = runLua(ctx, path, opts.Limits)
	}
	return readPlugin(path, org, opts, globals, err)
}

// readPlugin reads a plugin from the globals its run left, or fails with
// the run's error.
func readPlugin(path string, org bool, opts Options, globals map[string]any, err error) (*Plugin, []Problem, error) {
	if err != nil {
		return nil, nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	src, _ := os.ReadFile(path)
	p := &Plugin{Org: org, Path: path, src: src}
	var probs []Problem
	problem := func(key, format string, a ...any) {
		probs = append(probs, Problem{File: path, Line: lineOf(src, key), Message: fmt.Sprintf(format, a...)})
	}
	p.ID, _ = globals["ID"].(string)
	p.Name, _ = globals["NAME"].(string)
	p.Version, _ = globals["VERSION"].(string)
	if p.ID == "" {
		return nil, probs, errors.New("ID is missing: every plugin needs a unique ID (a GUID)")
	}
	if p.Name == "" {
		p.Name = p.ID
	}
	if t, _ := globals["TYPE"].(string); !strings.EqualFold(t, "CONFIGURATION") {
		return nil, probs, fmt.Errorf("TYPE is %q; only CONFIGURATION plugins are read", t)
	}
	if v, ok := globals["PRIORITY"]; ok {
		f, isNum := v.(float64)
		if !isNum || f != math.Trunc(f) {
			problem("PRIORITY", "PRIORITY must be a whole number, but is %v; using 0", v)
		} else {
			p.Priority = int(f)
		}
	}
	cfg, ok := globals["CONFIG"].(map[string]any)
	if !ok {
		return nil, probs, errors.New(`CONFIG is missing or not a table: a configuration plugin needs CONFIG = {} and CONFIG["SETTINGS"] = {}`)
	}
	secret := getenv(EncryptionSecretEnv)
	decrypt := func(key, v string) string {
		if v == "" {
			return ""
		}
		plain, err := Decrypt(v, secret)
		if err != nil {
			problem(key, "%s: %v", key, err)
			return ""
		}
		return plain
	}
	for key := range cfg {
		switch key {
		case "LLM_PROVIDERS", "EMBEDDING_PROVIDERS", "DATA_SOURCES", "MAILBOXES", "MCP_SERVERS", "SETTINGS",
			"TRANSCRIPTION_PROVIDERS", "CHAT_TEMPLATES", "PROFILES", "DOCUMENT_ANALYSIS_POLICIES", "INTRODUCTIONS", "MANDATORY_INFOS":
		default:
			problem(key, "unknown CONFIG section %q; known sections are LLM_PROVIDERS, EMBEDDING_PROVIDERS, DATA_SOURCES, MAILBOXES, MCP_SERVERS and SETTINGS", key)
		}
	}
	for i, e := range listOf(cfg["LLM_PROVIDERS"]) {
		m, ok := e.(map[string]any)
		if !ok {
			problem("LLM_PROVIDERS", "LLM_PROVIDERS[%d] must be a table", i+1)
			continue
		}
		pc := ProviderConfig{Plugin: p.Name}
		pc.ID = str(m, "Id")
		pc.InstanceName = str(m, "InstanceName")
		pc.UsedLLMProvider = str(m, "UsedLLMProvider")
		pc.Host = str(m, "Host")
		pc.Hostname = str(m, "Hostname")
		if model, ok := m["Model"].(map[string]any); ok {
			pc.ModelID, pc.ModelName = str(model, "Id"), str(model, "DisplayName")
		}
		pc.AllowUserProvidedAPIKey, _ = m["AllowUserProvidedAPIKey"].(bool)
		pc.AdditionalParameters = str(m, "AdditionalJsonApiParameters")
		if !pc.AllowUserProvidedAPIKey {
			pc.APIKey = decrypt("APIKey", str(m, "APIKey"))
		}
		missing := missingFields(map[string]string{"Id": pc.ID, "InstanceName": pc.InstanceName, "UsedLLMProvider": pc.UsedLLMProvider, "Host": pc.Host, "Model.Id": pc.ModelID})
		if len(missing) > 0 {
			problem(firstNonEmpty(pc.ID, "LLM_PROVIDERS"), "LLM_PROVIDERS[%d] lacks %s (Host is required even for cloud providers, e.g. \"NONE\")", i+1, strings.Join(missing, ", "))
			continue
		}
		p.Providers = append(p.Providers, pc)
	}
	for i, e := range listOf(cfg["EMBEDDING_PROVIDERS"]) {
		m, ok := e.(map[string]any)
		if !ok {
			problem("EMBEDDING_PROVIDERS", "EMBEDDING_PROVIDERS[%d] must be a table", i+1)
			continue
		}
		ec := EmbeddingConfig{ID: str(m, "Id"), Name: str(m, "Name"), UsedLLMProvider: str(m, "UsedLLMProvider"), Host: str(m, "Host"), Hostname: str(m, "Hostname"), Plugin: p.Name}
		if model, ok := m["Model"].(map[string]any); ok {
			ec.ModelID = str(model, "Id")
		}
		ec.APIKey = decrypt("APIKey", str(m, "APIKey"))
		if missing := missingFields(map[string]string{"Id": ec.ID, "Name": ec.Name, "UsedLLMProvider": ec.UsedLLMProvider, "Model.Id": ec.ModelID}); len(missing) > 0 {
			problem(firstNonEmpty(ec.ID, "EMBEDDING_PROVIDERS"), "EMBEDDING_PROVIDERS[%d] lacks %s", i+1, strings.Join(missing, ", "))
			continue
		}
		p.EmbeddingProviders = append(p.EmbeddingProviders, ec)
	}
	p.DataSources = parseDataSources(cfg["DATA_SOURCES"], p.Name, path, org, problem, func(key string) int { return lineOf(src, key) }, decrypt)
	for i, e := range listOf(cfg["MAILBOXES"]) {
		m, ok := e.(map[string]any)
		if !ok {
			problem("MAILBOXES", "MAILBOXES[%d] must be a table", i+1)
			continue
		}
		mb := MailboxConfig{ID: str(m, "Id"), Name: str(m, "Name"), Host: str(m, "Host"), Security: strings.ToUpper(firstNonEmpty(str(m, "Security"), "TLS")),
			Auth: strings.ToUpper(firstNonEmpty(str(m, "Auth"), "PASSWORD")), Username: str(m, "Username"), Port: intOf(m["Port"]),
			EmbeddingProviderID: str(m, "EmbeddingProviderId"), Plugin: p.Name}
		for _, f := range listOf(m["Folders"]) {
			if s, ok := f.(string); ok {
				mb.Folders = append(mb.Folders, s)
			}
		}
		level, err := policy.ParseConfidence(firstNonEmpty(str(m, "RequiredProviderConfidence"), "HIGH"))
		if err != nil || level < policy.VeryLow {
			probs = append(probs, Problem{File: path, Line: lineOf(src, firstNonEmpty(mb.ID, "MAILBOXES")), Kind: ProblemSecurity,
				Message: fmt.Sprintf("MAILBOXES[%d] (%s): RequiredProviderConfidence must be one of VERY_LOW, LOW, MODERATE, MEDIUM, HIGH (NONE, UNTRUSTED and UNKNOWN would close the mailbox), but is %q; it counts as HIGH", i+1, mb.ID, str(m, "RequiredProviderConfidence"))})
			level = policy.High
		}
		mb.RequiredProviderConfidence = level
		restr, err := policy.ParseRestriction(firstNonEmpty(str(m, "OutboundDataRestriction"), "ONLY_LINKS_FROM_CHAT"))
		if err != nil {
			// ParseRestriction answers the strictest level for what it
			// cannot read.
			probs = append(probs, Problem{File: path, Line: lineOf(src, firstNonEmpty(mb.ID, "MAILBOXES")), Kind: ProblemSecurity,
				Message: fmt.Sprintf("MAILBOXES[%d] (%s): OutboundDataRestriction: %v", i+1, mb.ID, err)})
		}
		mb.OutboundDataRestriction = restr
		mb.Secret = decrypt("Secret", str(m, "Secret"))
		if v, ok := m["MaxAgeDays"]; ok {
			n, err := maxAgeDays(v)
			if err != nil {
				problem(firstNonEmpty(mb.ID, "MAILBOXES"), "MAILBOXES[%d]: %v", i+1, err)
				continue
			}
			mb.MaxAgeDays = n
		}
		if mb.Security != "TLS" && mb.Security != "STARTTLS" {
			problem(firstNonEmpty(mb.ID, "MAILBOXES"), "MAILBOXES[%d]: Security must be TLS or STARTTLS, but is %q", i+1, mb.Security)
			continue
		}
		if mb.Auth != "PASSWORD" && mb.Auth != "XOAUTH2" {
			problem(firstNonEmpty(mb.ID, "MAILBOXES"), "MAILBOXES[%d]: Auth must be PASSWORD or XOAUTH2, but is %q", i+1, mb.Auth)
			continue
		}
		if missing := missingFields(map[string]string{"Id": mb.ID, "Name": mb.Name, "Host": mb.Host, "Username": mb.Username}); len(missing) > 0 {
			problem(firstNonEmpty(mb.ID, "MAILBOXES"), "MAILBOXES[%d] lacks %s", i+1, strings.Join(missing, ", "))
			continue
		}
		p.Mailboxes = append(p.Mailboxes, mb)
	}
	p.MCPServers = parseMCPServers(cfg["MCP_SERVERS"], org, p.Name, func(_, v string) (string, error) { return Decrypt(v, secret) }, problem)
	settings, ok := cfg["SETTINGS"].(map[string]any)
	if !ok {
		if _, present := cfg["SETTINGS"]; present {
			problem("SETTINGS", `CONFIG["SETTINGS"] must be a table of "<Key>" = value`)
		}
		settings = map[string]any{}
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasSuffix(k, ".AllowUserOverride") {
			base := strings.TrimSuffix(k, ".AllowUserOverride")
			if _, ok := settings[base]; !ok {
				problem(k, "%s names a setting the plugin does not set", k)
			} else if _, isBool := settings[k].(bool); !isBool {
				probs = append(probs, Problem{File: path, Line: lineOf(src, k), Kind: ProblemSecurity,
					Message: fmt.Sprintf("%s must be true or false, but is %s; the setting stays locked", k, kindName(settings[k]))})
			}
			continue
		}
		v := settings[k]
		line := lineOf(src, k)
		if kind, ok := appSettings[k]; ok {
			msg := checkKind(k, kind, v)
			if msg == "" {
				msg = checkAppValue(k, v)
			}
			if msg != "" && IsSecuritySetting(k) {
				// An unreadable security setting counts as its strictest
				// value; leaving it out would switch the protection off.
				probs = append(probs, Problem{File: path, Line: line, Kind: ProblemSecurity,
					Message: fmt.Sprintf("%s; it counts as its strictest value (%s)", msg, strictestDescription(k))})
				v = strictestValues[k]()
			} else if msg != "" {
				probs = append(probs, Problem{File: path, Line: line, Message: msg})
				continue
			}
			if mm, isMap := v.(map[string]any); isMap {
				strict := map[string]string{"DataTools.MinimumProviderConfidenceByToolId": "HIGH", "DataConfidence.CustomConfidenceScheme": "NONE"}[k]
				if strict != "" {
					v = sanitizeLevelMap(k, mm, strict, func(entry, m string) {
						probs = append(probs, Problem{File: path, Line: lineOfAfter(src, entry, line), Message: m, Kind: ProblemSecurity})
					})
				}
			}
			if l, isList := v.([]any); isList && IsSecuritySetting(k) {
				for i, e := range l {
					if _, isStr := e.(string); !isStr {
						probs = append(probs, Problem{File: path, Line: line, Kind: ProblemSecurity,
							Message: fmt.Sprintf("%s[%d] must be a string, but is %s; the setting counts as its strictest value (%s)", k, i+1, kindName(e), strictestDescription(k))})
						v = strictestValues[k]()
						break
					}
				}
			}
			if k == "DataPromptInjection.ClassifierApiKey" {
				// A secret: only accepted encrypted, kept decrypted.
				if v = decrypt(k, v.(string)); v == "" {
					continue
				}
			}
		} else {
			toolID, field, ok := strings.Cut(k, ".")
			if !ok || toolID == "" || field == "" || strings.HasPrefix(toolID, "Data") {
				probs = append(probs, Problem{File: path, Line: line, Message: fmt.Sprintf("unknown setting %q: use \"<toolId>.<field>\" for tool settings or one of %s", k, strings.Join(AppSettingKeys(), ", "))})
				continue
			}
			if opts.KnownToolField != nil && !opts.KnownToolField(toolID, field) {
				probs = append(probs, Problem{File: path, Line: line, Message: fmt.Sprintf("unknown tool setting %q: no tool %q with a field %q (see `steward tools` and the example plugin)", k, toolID, field)})
				continue
			}
			if _, isStr := v.(string); !isStr {
				probs = append(probs, Problem{File: path, Line: line, Message: fmt.Sprintf("tool setting %q must be a string, but is %s", k, kindName(v))})
				continue
			}
		}
		allow, _ := settings[k+".AllowUserOverride"].(bool)
		p.Settings = append(p.Settings, Setting{Key: k, Value: v, Locked: !allow, Line: line})
	}
	return p, probs, nil
}

// strictestValues are what an unreadable security setting counts as: the
// value that allows the least. "*" in DataTools.DisabledToolIds switches
// every tool off, and in DataTools.MinimumProviderConfidenceByToolId it
// raises every tool to the level.
var strictestValues = map[string]func() any{
	"DataConfidence.ConfidenceScheme":               func() any { return "LOCAL_TRUST_ONLY" },
	"DataConfidence.CustomConfidenceScheme":         func() any { return map[string]any{} },
	"DataConfidence.EnforceGlobalMinimumConfidence": func() any { return true },
	"DataConfidence.GlobalMinimumConfidence":        func() any { return "HIGH" },
	"DataTools.EnableTools":                         func() any { return false },
	"DataTools.DisabledToolIds":                     func() any { return []any{"*"} },
	"DataTools.MinimumProviderConfidenceByToolId":   func() any { return map[string]any{"*": "HIGH"} },
	"DataSourceSecuritySettings.TrustedProviderIds": func() any { return []any{} },
	"DataMailboxes.AllowedServers":                  func() any { return []any{} },
	"DataMailboxes.MinimumOutboundDataRestriction":  func() any { return "ONLY_CONFIGURED_SERVICES" },
}

// IsSecuritySetting reports whether an application setting governs where
// data may go; such a setting that cannot be read counts as its strictest
// value rather than being left out.
func IsSecuritySetting(key string) bool { _, ok := strictestValues[key]; return ok }

// strictestDescription words the strictest value of a key for a problem.
func strictestDescription(key string) string {
	switch key {
	case "DataTools.DisabledToolIds":
		return "every tool switched off"
	case "DataTools.MinimumProviderConfidenceByToolId":
		return "HIGH for every tool"
	case "DataSourceSecuritySettings.TrustedProviderIds":
		return "no provider trusted"
	case "DataMailboxes.AllowedServers":
		return "no mail server allowed"
	case "DataConfidence.CustomConfidenceScheme":
		return "no provider listed (UNKNOWN for each)"
	}
	return fmt.Sprint(strictestValues[key]())
}

// sanitizeLevelMap reads a map of confidence levels entry by entry: an
// entry that cannot be read counts as strict, and the rest keeps working.
func sanitizeLevelMap(key string, m map[string]any, strict string, problem func(entry, msg string)) map[string]any {
	out := make(map[string]any, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lv := m[k]
		s, isStr := lv.(string)
		if !isStr {
			problem(k, fmt.Sprintf("%s[%q] must be a confidence level name such as \"HIGH\", but is %s; it counts as %s", key, k, kindName(lv), strict))
			out[k] = strict
			continue
		}
		if _, err := policy.ParseConfidence(s); err != nil {
			problem(k, fmt.Sprintf("%s[%q]: %v; it counts as %s", key, k, err, strict))
			out[k] = strict
			continue
		}
		out[k] = s
	}
	return out
}

func checkKind(key, kind string, v any) string {
	ok := false
	switch kind {
	case "string":
		_, ok = v.(string)
	case "bool":
		_, ok = v.(bool)
	case "list":
		switch x := v.(type) {
		case []any:
			ok = true
		case map[string]any:
			ok = len(x) == 0 // an empty Lua table
		}
	case "map":
		_, ok = v.(map[string]any)
		if l, isList := v.([]any); isList && len(l) == 0 {
			ok = true
		}
	}
	if ok {
		return ""
	}
	want := map[string]string{"string": "a string", "bool": "true or false", "list": "a list such as { \"a\", \"b\" }", "map": "a table such as { [\"key\"] = \"value\" }"}[kind]
	return fmt.Sprintf("%s must be %s, but is %s", key, want, kindName(v))
}

func checkAppValue(key string, v any) string {
	switch key {
	case "DataConfidence.ConfidenceScheme":
		if _, err := policy.ParseScheme(v.(string)); err != nil {
			return key + ": " + err.Error()
		}
	case "DataConfidence.GlobalMinimumConfidence":
		if _, err := policy.ParseConfidence(v.(string)); err != nil {
			return key + ": " + err.Error()
		}
	case "DataChat.PreselectedDataSourcesRetrievalMode":
		if m := strings.ToUpper(strings.TrimSpace(v.(string))); m != "SEMANTIC_SEARCH" && m != "EVERY_MESSAGE" {
			return fmt.Sprintf("%s must be SEMANTIC_SEARCH (the model searches with semantic_search) or EVERY_MESSAGE (every message is searched), but is %q", key, v)
		}
	case "DataMailboxes.MinimumOutboundDataRestriction":
		if _, err := policy.ParseRestriction(v.(string)); err != nil {
			return key + ": " + err.Error()
		}
	case "DataMCP.ClientConfidence":
		if err := checkMCPClientConfidence(v.(string)); err != nil {
			return key + ": " + err.Error()
		}
	case "DataPromptInjection.ClassifierUrl":
		u, err := url.Parse(v.(string))
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
			return fmt.Sprintf("%s must be an http or https address such as \"https://classifier.example.org/v1/classify\", without a user name, but is %q", key, v)
		}
	case "DataPromptInjection.ClassifierThreshold":
		f, err := strconv.ParseFloat(strings.TrimSpace(v.(string)), 64)
		if err != nil || f <= 0 || f > 1 {
			return fmt.Sprintf("%s must be a number above 0 and at most 1 such as \"0.5\", but is %q", key, v)
		}
	case "DataPromptInjection.ClassifierTimeoutSeconds":
		n, err := strconv.Atoi(strings.TrimSpace(v.(string)))
		if err != nil || n < 1 || n > 120 {
			return fmt.Sprintf("%s must be a whole number of seconds from 1 to 120 such as \"10\", but is %q", key, v)
		}
	}
	return ""
}

func kindName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}

func listOf(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		// A table with holes or string keys: take its values in key order.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, 0, len(x))
		for _, k := range keys {
			out = append(out, x[k])
		}
		return out
	}
	return nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return strings.TrimSpace(s)
}

// MaxMailboxAgeDays is the largest max age of a mailbox in days (about
// 100 years), the same bound as the mailbox package's.
const MaxMailboxAgeDays = 36500

// maxAgeDays reads a mailbox's MaxAgeDays: a whole number of days from 0
// (every mail) to MaxMailboxAgeDays.
func maxAgeDays(v any) (int, error) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || f < 0 || f > MaxMailboxAgeDays {
		return 0, fmt.Errorf("MaxAgeDays must be a whole number of days from 0 (index every mail) to %d, but is %v", MaxMailboxAgeDays, v)
	}
	return int(f), nil
}

func intOf(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func missingFields(fields map[string]string) []string {
	var out []string
	for k, v := range fields {
		if strings.TrimSpace(v) == "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// lineOfAfter finds the first line at or after from mentioning key, the
// way lineOf does; it falls back to from.
func lineOfAfter(src []byte, key string, from int) int {
	lines := strings.Split(string(src), "\n")
	for _, pat := range []string{`"` + key + `"`, `'` + key + `'`, key + " =", key + "="} {
		for i := max(from-1, 0); i < len(lines); i++ {
			if strings.Contains(lines[i], pat) {
				return i + 1
			}
		}
	}
	return from
}

// lineOf finds the first line of src mentioning key as a quoted string or an
// assignment, so a problem can point at it.
func lineOf(src []byte, key string) int {
	if key == "" {
		return 0
	}
	lines := strings.Split(string(src), "\n")
	for _, pat := range []string{`"` + key + `"`, `'` + key + `'`, key + " =", key + "="} {
		for i, l := range lines {
			if strings.Contains(l, pat) {
				return i + 1
			}
		}
	}
	return 0
}

// pluginDirs lists plugin.lua files under root/plugins/{org,local}.
func pluginFiles(root string) (org, local []string) {
	find := func(sub string) []string {
		var out []string
		entries, err := os.ReadDir(filepath.Join(root, "plugins", sub))
		if err != nil {
			return nil
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(root, "plugins", sub, e.Name(), "plugin.lua")
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
		sort.Strings(out)
		return out
	}
	return find("org"), find("local")
}
