package app

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/tools/confluence"
	"github.com/stewardhq/steward/tools/mail"
	"github.com/stewardhq/steward/tools/semantic"
	"github.com/stewardhq/steward/tools/webpage"
	"github.com/stewardhq/steward/tools/websearch"
	"github.com/stewardhq/steward/web"
	"github.com/stewardhq/steward/web/kerberos"
)

// buildTools constructs every tool Steward ships.
func (a *App) buildTools() ([]tool.Tool, error) {
	ms, err := a.MailService(context.Background())
	if err != nil {
		return nil, err
	}
	mailTools := mail.Tools(mail.Options{Service: ms, Guard: a.Filter(), Location: time.Local, Logger: a.Logger})
	signIn := func() (web.SignIn, error) { return kerberos.New(kerberos.FromEnvironment()) }
	tools := append([]tool.Tool{
		websearch.New(websearch.Deps{Web: a.WebService(), Guard: a.Filter(), Logger: a.Logger}),
		webpage.New(webpage.Deps{Web: a.WebService(), Guard: a.Filter(), Wiki: a.wiki, Logger: a.Logger,
			SignIn: signIn,
			OnPrivateHostBlocked: func(host string) {
				a.Logger.Warn("read_web_page did not read an allowed private host because the provider's confidence is below HIGH", "host", host)
			}}),
		confluence.New(confluence.Deps{Web: a.WebService(), Guard: a.Filter(), Logger: a.Logger, SignIn: signIn,
			// The wiki's REST API is a configured service: resolved and
			// dialed like the web service (tests route both to loopback).
			HTTP: &http.Client{Transport: web.ServiceTransport(a.webOptions)}}),
	}, mailTools...)
	// semantic_search offers itself from the chat's data sources.
	tools = append(tools, semantic.New(semantic.Options{Service: a.SourceService(), Effective: a.EffectiveDataSources, Enabled: a.SourcesEnabled, Logger: a.Logger}))
	return tools, nil
}

// wiki returns the wiki search_confluence searches, for read_web_page: the
// resolved setting search_confluence.baseUrl (a locked organization value,
// then the user's, then an organization default), read by the tool's own
// parser, so that the two tools always mean the same wiki.
func (a *App) wiki() (*url.URL, bool) {
	if a.Resolver == nil {
		return nil, false
	}
	def := confluence.Definition()
	f, _ := def.Settings.Field(confluence.SettingBaseURL)
	// Only this field: the tool's secrets stay in the keyring.
	def.Settings = tool.SettingsSchema{Fields: []tool.SettingField{f}}
	r, _ := a.Resolver.Resolve(context.Background(), def)
	v := r.Values().Get(confluence.SettingBaseURL)
	if v == "" {
		return nil, false
	}
	u, err := confluence.ParseBaseURL(v)
	if err != nil {
		a.Logger.Warn("the configured wiki address is not usable; read_web_page ignores it", "setting", confluence.BaseURLKey, "error", err.Error())
		return nil, false
	}
	return u, true
}

// collections are the declared tool collections.
func (a *App) collections() []registry.Collection {
	return append([]registry.Collection{mail.Collection()}, a.mcpCollections...)
}

// optionSources are the option lists the application maintains.
func optionSources() []string {
	return []string{"FREE_ADDRESS_CHOICE", "SAFE_SEARCH", "WEB_SEARCH_BACKENDS", "WEB_SEARCH_STRATEGY", "LANGUAGES"}
}
