package app

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/tools/mail"
	"github.com/stewardhq/steward/tools/webpage"
	"github.com/stewardhq/steward/tools/websearch"
	"github.com/stewardhq/steward/web"
	"github.com/stewardhq/steward/web/kerberos"
)

// wikiSettingKey is search_confluence's base URL. search_confluence itself
// is not built yet, but read_web_page already reads the configured wiki: a
// chat restricted after reading mails may still open its pages.
const wikiSettingKey = "search_confluence.baseUrl"

// buildTools constructs every tool Steward ships.
func (a *App) buildTools() ([]tool.Tool, error) {
	ms, err := a.MailService(context.Background())
	if err != nil {
		return nil, err
	}
	mailTools := mail.Tools(mail.Options{Service: ms, Guard: a.Filter(), Location: time.Local, Logger: a.Logger})
	return append([]tool.Tool{
		websearch.New(websearch.Deps{Web: a.WebService(), Guard: a.Filter(), Logger: a.Logger}),
		webpage.New(webpage.Deps{Web: a.WebService(), Guard: a.Filter(), Wiki: a.wiki, Logger: a.Logger,
			SignIn: func() (web.SignIn, error) { return kerberos.New(kerberos.FromEnvironment()) },
			OnPrivateHostBlocked: func(host string) {
				a.Logger.Warn("read_web_page did not read an allowed private host because the provider's confidence is below HIGH", "host", host)
			}}),
	}, mailTools...), nil
}

// wiki returns the configured Confluence wiki, if any: an organization's
// value first, then the user's.
func (a *App) wiki() (*url.URL, bool) {
	v := ""
	if a.Org != nil {
		if m, ok := a.Org.Settings[wikiSettingKey]; ok {
			v, _ = m.Value.(string)
		}
	}
	if v == "" && a.User != nil {
		id, field, _ := strings.Cut(wikiSettingKey, ".")
		v, _ = a.User.ToolValue(id, field)
	}
	if v == "" {
		return nil, false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		a.Logger.Warn("the configured wiki address is not an https base URL without user, query or fragment; it is ignored", "setting", wikiSettingKey)
		return nil, false
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
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
