package app

import (
	"fmt"
	"strings"

	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/llm"
)

// providerKeyService is where a provider's API key is kept in the secret
// store: under the provider kind ("openai") or a configured provider's ID.
func providerKeyService(name string) string { return "provider::" + name }

// storedKey returns the API key stored with `steward keys set` for a
// provider kind or ID, or "".
func (a *App) storedKey(name string) string {
	v, ok, err := a.Secrets.Get(providerKeyService(name), "api_key")
	if err != nil || !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// storedKeyFrom says where the key stored with `steward keys set` under
// name is kept, for ResolvedProvider.KeyFrom; never the key.
func (a *App) storedKeyFrom(name string) string {
	where, err := config.LocateSecret(a.Secrets, providerKeyService(name), "api_key")
	if err != nil || where == "" {
		where = a.Secrets.Where()
	}
	return "stored with steward keys set in " + where
}

// storedKindKey finds the first hosted provider kind, in the order the
// environment is searched, that has a stored key.
func (a *App) storedKindKey() (llm.Kind, string, bool) {
	for _, k := range llm.Kinds() {
		if info, _ := k.Info(); info.SelfHosted {
			continue
		}
		if key := a.storedKey(string(k)); key != "" {
			return k, key, true
		}
	}
	return "", "", false
}

// KindKeyFrom says where the key of a provider kind comes from, the way
// ResolvedProvider.KeyFrom does ("in $OPENAI_API_KEY", "stored with
// steward keys set in …"), or "" when no key is found. It never returns
// the key.
func (a *App) KindKeyFrom(k llm.Kind) string {
	_, from := a.keyFromEnv(k)
	return from
}

// KeyTarget names what a stored key belongs to: a provider kind, or a
// provider configured in the user's settings or by the organization.
type KeyTarget struct {
	// Name is what the key is stored under: the kind or the provider ID.
	Name string
	// Title names it for people.
	Title string
	// EnvVars are the environment variables that win over a stored key,
	// for a kind.
	EnvVars []string
	// Where is the store holding its key, "" when none is stored.
	Where string
	// EnvSet names the environment variable that is set, if any.
	EnvSet string
	// OrgKey is true when the organization's plugin supplies the key, so
	// a stored one is not used.
	OrgKey bool
}

// ProviderKeyTarget resolves a name given to `steward keys` to what a key
// is stored under: a provider kind (openai, anthropic, …), the ID of a
// provider in the settings file, or the ID of an organization provider.
func (a *App) ProviderKeyTarget(name string) (KeyTarget, error) {
	name = strings.TrimSpace(name)
	for _, op := range a.Org.Providers {
		if strings.EqualFold(op.ID, name) {
			return KeyTarget{Name: op.ID, Title: op.InstanceName + " (organization)", OrgKey: op.APIKey != "" && !op.AllowUserProvidedAPIKey}, nil
		}
	}
	for _, up := range a.User.Providers {
		if strings.EqualFold(up.ID, name) {
			return KeyTarget{Name: up.ID, Title: up.ID + " (" + up.Kind + ", your settings)"}, nil
		}
	}
	k, ok := llm.LookupKind(name)
	if !ok {
		return KeyTarget{}, fmt.Errorf("%q is neither a provider kind nor a configured provider: use one of %s", name, kindList())
	}
	info, _ := k.Info()
	if info.SelfHosted && len(info.KeyEnv) == 0 {
		return KeyTarget{Name: string(k), Title: info.Title}, nil
	}
	return KeyTarget{Name: string(k), Title: info.Title, EnvVars: info.KeyEnv}, nil
}

// SetProviderKey stores (or, with "", removes) the API key of a provider
// kind or ID in the secret store; it returns where it went.
func (a *App) SetProviderKey(t KeyTarget, key string) (string, error) {
	if key == "" {
		return a.Secrets.Where(), a.Secrets.Delete(providerKeyService(t.Name), "api_key")
	}
	return a.Secrets.Where(), a.Secrets.Set(providerKeyService(t.Name), "api_key", key)
}

// ProviderKeys lists every provider kind and configured provider with where
// its key comes from; values are never read out.
func (a *App) ProviderKeys() ([]KeyTarget, error) {
	var out []KeyTarget
	add := func(t KeyTarget) error {
		where, err := config.LocateSecret(a.Secrets, providerKeyService(t.Name), "api_key")
		if err != nil {
			return err
		}
		t.Where = where
		for _, env := range t.EnvVars {
			if strings.TrimSpace(a.getenv(env)) != "" {
				t.EnvSet = env
				break
			}
		}
		out = append(out, t)
		return nil
	}
	for _, op := range a.Org.Providers {
		if err := add(KeyTarget{Name: op.ID, Title: op.InstanceName + " (organization)", OrgKey: op.APIKey != "" && !op.AllowUserProvidedAPIKey}); err != nil {
			return nil, err
		}
	}
	for _, up := range a.User.Providers {
		if err := add(KeyTarget{Name: up.ID, Title: up.ID + " (" + up.Kind + ", your settings)"}); err != nil {
			return nil, err
		}
	}
	for _, k := range llm.Kinds() {
		info, _ := k.Info()
		if len(info.KeyEnv) == 0 {
			continue
		}
		if err := add(KeyTarget{Name: string(k), Title: info.Title, EnvVars: info.KeyEnv}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
