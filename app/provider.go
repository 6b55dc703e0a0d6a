package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/llm/anthropic"
	"github.com/stewardhq/steward/llm/chatcompletions"
	"github.com/stewardhq/steward/llm/responses"
	"github.com/stewardhq/steward/policy"
)

// defaultModels are used when neither a flag, STEWARD_MODEL nor the
// configuration names a model.
var defaultModels = map[llm.Kind]string{
	llm.KindOpenAI:      "gpt-4o-mini",
	llm.KindAnthropic:   "claude-sonnet-4-5",
	llm.KindGroq:        "llama-3.3-70b-versatile",
	llm.KindOpenRouter:  "openai/gpt-4o-mini",
	llm.KindHuggingFace: "moonshotai/Kimi-K2-Instruct",
	llm.KindMistral:     "mistral-small-latest",
	llm.KindDeepSeek:    "deepseek-chat",
	llm.KindXAI:         "grok-4-fast",
	llm.KindGoogle:      "gemini-2.5-flash",
	llm.KindTogether:    "meta-llama/Llama-3.3-70B-Instruct-Turbo",
	llm.KindFireworks:   "accounts/fireworks/models/llama-v3p3-70b-instruct",
	llm.KindPerplexity:  "sonar",
	llm.KindAlibaba:     "qwen-plus",
	llm.KindOllama:      "llama3.1",
	llm.KindLMStudio:    "local-model",
	llm.KindLlamaCpp:    "local-model",
	llm.KindVLLM:        "local-model",
}

// ProviderFlags are what a user may say on the command line.
type ProviderFlags struct {
	// Provider is a provider kind ("openai", "ollama") or the ID of a
	// configured provider.
	Provider string
	Model    string
	BaseURL  string
	// API forces "chat_completions" or "responses" for OpenAI.
	API string
}

// ResolvedProvider is the provider a request goes to, with what policy
// knows of it.
type ResolvedProvider struct {
	llm.Provider
	// Title names it for people, e.g. "OpenAI (gpt-4o-mini)".
	Title string
	// SchemeName is the provider name the confidence schemes use.
	SchemeName string
	Confidence policy.Confidence
	// Trusted is true when the organization lists the provider as trusted
	// for data-source security.
	Trusted bool
	// Extra are additional API parameters from the organization's
	// configuration; the adapters never let them override their own.
	Extra map[string]any
	// From says where Steward found it: "flag", "settings", "organization",
	// "environment", "keys" (stored with `steward keys set`) or "local".
	From string
	// KeyFrom says where APIKey came from, for people, never the key: "in
	// $OPENAI_API_KEY", "stored with steward keys set in the OS keyring",
	// "from the organization plugin \"Acme\""; "" without a key.
	KeyFrom string
	// NotSelfHosted says why a provider of a self-hosted kind counts as a
	// cloud provider (SchemeName policy.ProviderUnlistedHost): its host is
	// neither loopback nor private, nor listed by the organization.
	NotSelfHosted string
	// LocalOnly is true for a provider that is self-hosted because every
	// address of its host name was loopback or private when it was
	// resolved: its connections are made to such addresses only, so a
	// name that resolves elsewhere later (DNS rebinding) is refused.
	LocalOnly bool
}

// ErrNoProvider is returned when no provider can be found; its message is
// the one line telling the user what to set.
var ErrNoProvider = errors.New("no model provider found: set OPENAI_API_KEY or ANTHROPIC_API_KEY (or another provider's key, see `steward providers`), start Ollama on 127.0.0.1:11434, or pass --provider and --base-url")

// ResolveProvider finds the provider: flags first, then the user's default,
// then the organization's providers, then API keys in the environment, then
// a local Ollama answering on its default address.
func (a *App) ResolveProvider(ctx context.Context, f ProviderFlags) (*ResolvedProvider, error) {
	if f.BaseURL != "" {
		if err := CheckBaseURL(f.BaseURL); err != nil {
			return nil, fmt.Errorf("%w: --base-url %q: %w", ErrBadFlag, f.BaseURL, err)
		}
	}
	model := firstNonEmpty(f.Model, a.getenv("STEWARD_MODEL"))
	var rp *ResolvedProvider
	var err error
	switch {
	case f.Provider != "":
		rp, err = a.providerByName(f.Provider, model, f.BaseURL)
		if err != nil {
			return nil, err
		}
		rp.From = "flag"
	case f.BaseURL != "":
		// A base URL alone means an OpenAI-compatible server the user runs.
		k := llm.KindVLLM
		if p, ok := llm.FromEnvironment(a.getenv); ok {
			k = llm.Kind(p.Kind)
		}
		key, from := a.keyFromEnv(k)
		rp = a.fromKind(k, model, f.BaseURL, key)
		rp.From, rp.KeyFrom = "flag", from
	case a.User.DefaultProvider != "":
		rp, err = a.providerByName(a.User.DefaultProvider, model, "")
		if err != nil {
			return nil, fmt.Errorf("the default provider in %s: %w", config.UserSettingsPath(a.ConfigDir), err)
		}
		rp.From = "settings"
	case len(a.Org.Providers) > 0:
		rp, err = a.orgProvider(a.Org.Providers[0], model)
		if err != nil {
			return nil, err
		}
		rp.From = "organization"
	default:
		if p, ok := llm.FromEnvironment(a.getenv); ok {
			k := llm.Kind(p.Kind)
			_, variable := k.APIKeyEnv(a.getenv)
			rp = a.fromKind(k, model, "", p.APIKey)
			rp.From, rp.KeyFrom = "environment", "in $"+variable
		} else if k, key, ok := a.storedKindKey(); ok {
			rp = a.fromKind(k, model, "", key)
			rp.From, rp.KeyFrom = "keys", a.storedKeyFrom(string(k))
		} else if a.ollamaAnswers(ctx) {
			rp = a.fromKind(llm.KindOllama, model, "", "")
			rp.From = "local"
		} else {
			return nil, ErrNoProvider
		}
	}
	if f.API != "" {
		api, ok := llm.ParseAPI(f.API)
		if !ok {
			return nil, fmt.Errorf("--api %q is not known: use chat_completions or responses", f.API)
		}
		p, err := llm.WithAPI(rp.Provider, api)
		if err != nil {
			return nil, err
		}
		rp.Provider = p
	}
	a.checkSelfHosted(ctx, rp)
	rp.Confidence = a.Org.Scheme().ProviderConfidence(rp.SchemeName)
	for _, id := range a.Org.StringList("DataSourceSecuritySettings.TrustedProviderIds") {
		if strings.EqualFold(id, rp.ID) {
			rp.Trusted = true
		}
	}
	if rp.SchemeName == policy.ProviderSelfHosted {
		rp.Trusted = true
	}
	if min := a.Org.GlobalMinimum(); !policy.Allows(rp.Confidence, min) {
		return nil, fmt.Errorf("your organization allows only providers with confidence %s or higher; %s has %s: choose another provider", min, rp.Title, rp.Confidence)
	}
	return rp, nil
}

// ErrBadFlag is wrapped by the error of a provider flag that cannot be
// right, whatever the server would say.
var ErrBadFlag = errors.New("invalid flag")

// ErrNoKey is wrapped by the error of a cloud provider without an API key.
var ErrNoKey = errors.New("no API key")

// CheckKey refuses a cloud provider without an API key before anything is
// sent: the answer would be 401 however often Steward asked. Answer checks
// it too; a command calls it first to fail before it does anything else.
func CheckKey(rp *ResolvedProvider) error {
	if rp.APIKey != "" {
		return nil
	}
	k, ok := llm.LookupKind(rp.Kind)
	if !ok {
		return nil
	}
	info, _ := k.Info()
	if info.SelfHosted || len(info.KeyEnv) == 0 {
		return nil
	}
	where := "set $" + strings.Join(info.KeyEnv, " or $")
	if rp.ID != "" && rp.ID != string(k) {
		where += " (or store a key for the provider " + rp.ID + ")"
	}
	return fmt.Errorf("%w: %s needs an API key: %s", ErrNoKey, rp.Title, where)
}

// CheckBaseURL says what is wrong with a provider base URL given by the
// user: it must be an absolute http or https URL with a host, without
// credentials, a query or a fragment.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("not a URL (%w); use e.g. http://127.0.0.1:8080/v1/", errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("it must start with http:// or https://, e.g. http://127.0.0.1:8080/v1/")
	case u.Host == "" || u.Hostname() == "":
		return errors.New("it names no host, e.g. http://127.0.0.1:8080/v1/")
	case u.User != nil:
		return errors.New("it must not carry a user name or password; pass the key in the provider's environment variable")
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		return errors.New("it must not carry a query or a fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not a port number (1 to 65535)", p)
		}
	}
	return nil
}

func (a *App) providerByName(name, model, baseURL string) (*ResolvedProvider, error) {
	for _, op := range a.Org.Providers {
		if strings.EqualFold(op.ID, name) || strings.EqualFold(op.InstanceName, name) {
			return a.orgProvider(op, model)
		}
	}
	for _, up := range a.User.Providers {
		if strings.EqualFold(up.ID, name) {
			k, ok := llm.LookupKind(up.Kind)
			if !ok {
				return nil, fmt.Errorf("provider %q has kind %q, which Steward does not know: use one of %s", up.ID, up.Kind, kindList())
			}
			key, from := a.storedKey(up.ID), a.storedKeyFrom(up.ID)
			if key == "" {
				key, from = a.keyFromEnv(k)
			}
			rp := a.fromKind(k, firstNonEmpty(model, up.Model), firstNonEmpty(baseURL, up.BaseURL), key)
			rp.ID, rp.KeyFrom = up.ID, from
			return rp, nil
		}
	}
	k, ok := llm.LookupKind(name)
	if !ok {
		return nil, fmt.Errorf("--provider %q is neither a provider kind nor a configured provider: use one of %s", name, kindList())
	}
	key, from := a.keyFromEnv(k)
	rp := a.fromKind(k, model, baseURL, key)
	rp.KeyFrom = from
	return rp, nil
}

func (a *App) orgProvider(op config.ProviderConfig, model string) (*ResolvedProvider, error) {
	k, ok := llm.LookupKind(op.UsedLLMProvider)
	if ok && k == llm.KindOpenAI && !strings.EqualFold(op.Host, "NONE") && op.Host != "" {
		ok = false
	}
	if strings.EqualFold(op.UsedLLMProvider, "SELF_HOSTED") {
		switch strings.ToUpper(op.Host) {
		case "OLLAMA":
			k, ok = llm.KindOllama, true
		case "LM_STUDIO":
			k, ok = llm.KindLMStudio, true
		case "LLAMA_CPP":
			k, ok = llm.KindLlamaCpp, true
		default:
			k, ok = llm.KindVLLM, true
		}
	}
	if !ok {
		return nil, fmt.Errorf("the organization's provider %q uses %q, which Steward does not know", op.InstanceName, op.UsedLLMProvider)
	}
	base := op.Hostname
	if base != "" && (k == llm.KindOllama || k == llm.KindLMStudio || k == llm.KindLlamaCpp || k == llm.KindVLLM) {
		base = strings.TrimRight(base, "/") + "/v1/"
	}
	key, from := op.APIKey, fmt.Sprintf("from the organization plugin %q", op.Plugin)
	if op.AllowUserProvidedAPIKey || key == "" {
		if v := a.storedKey(op.ID); v != "" {
			key, from = v, a.storedKeyFrom(op.ID)
		}
	}
	if key == "" {
		from = ""
	}
	rp := a.fromKind(k, firstNonEmpty(model, op.ModelID), base, key)
	rp.ID, rp.KeyFrom = op.ID, from
	rp.Title = op.InstanceName + " (" + rp.Model + ")"
	if op.AdditionalParameters != "" {
		extra, err := ParseExtraParameters(op.AdditionalParameters)
		if err != nil {
			return nil, fmt.Errorf("the organization's provider %q: AdditionalJsonApiParameters: %w", op.InstanceName, err)
		}
		rp.Extra = extra
	}
	return rp, nil
}

func (a *App) fromKind(k llm.Kind, model, baseURL, key string) *ResolvedProvider {
	if model == "" {
		model = defaultModels[k]
	}
	p := k.Provider(model, baseURL, key)
	info, _ := k.Info()
	return &ResolvedProvider{Provider: p, Title: info.Title + " (" + model + ")", SchemeName: info.Scheme}
}

// keyFromEnv finds a kind's key in the environment, then among the keys
// stored with `steward keys set`, and says where it came from (see
// ResolvedProvider.KeyFrom); both are "" when there is none.
func (a *App) keyFromEnv(k llm.Kind) (key, from string) {
	if v, variable := k.APIKeyEnv(a.getenv); v != "" {
		return v, "in $" + variable
	}
	if v := a.storedKey(string(k)); v != "" {
		return v, a.storedKeyFrom(string(k))
	}
	return "", ""
}

// ollamaAnswers probes a local Ollama on its default loopback address.
func (a *App) ollamaAnswers(ctx context.Context) bool {
	if a.getenv("STEWARD_NO_OLLAMA_PROBE") != "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	d := net.Dialer{}
	c, err := d.DialContext(ctx, "tcp", "127.0.0.1:11434")
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func kindList() string {
	var names []string
	for _, k := range llm.Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// NewAdapter builds the adapter for the provider's wire API.
func NewAdapter(p llm.Provider, req llm.Request, client *http.Client) (llm.Adapter, error) {
	return newAdapter(p, req, &llm.Transport{Client: client})
}

func newAdapter(p llm.Provider, req llm.Request, tr *llm.Transport) (llm.Adapter, error) {
	if tr.Setting == "" {
		tr.Setting = providerSetting(p)
	}
	switch p.Caps.API {
	case llm.ChatCompletions, "":
		return chatcompletions.New(p, req, tr), nil
	case llm.Responses:
		return responses.New(p, req, tr), nil
	case llm.Messages:
		return anthropic.New(p, req, tr), nil
	}
	return nil, fmt.Errorf("provider %s speaks %q, which Steward has no adapter for", p.Kind, p.Caps.API)
}

// providerSetting names where a provider's address comes from, for errors
// about it.
func providerSetting(p llm.Provider) string {
	id := p.ID
	if id == "" {
		id = p.Kind
	}
	return "the base URL of provider " + id
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}
