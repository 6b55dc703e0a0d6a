package app

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/web"
)

// selfHostedLookupTimeout bounds the name lookup that decides whether a
// self-hosted provider's host is local.
const selfHostedLookupTimeout = 5 * time.Second

// hostChecks caches, per host, whether it counts as self-hosted, for the
// App's lifetime: the mailbox configuration is asked on every request.
type hostChecks struct {
	mu   sync.Mutex
	seen map[string]string // host → why it is not self-hosted ("" when it is)
}

// notSelfHosted says why a provider of a self-hosted kind at baseURL does
// not count as self-hosted, or "" when it does: when the organization
// lists its host (as the host of one of its self-hosted providers or
// embedding providers), or when every address of the host is loopback or
// private. A name is resolved with the resolver the web service uses;
// nothing is connected. Data sent to any other host leaves the machine and
// the organization's network, whatever the kind of server answers there.
func (a *App) notSelfHosted(ctx context.Context, baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Hostname() == "" {
		return fmt.Sprintf("its base URL %q names no host", baseURL)
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if a.orgListsHost(host) {
		return ""
	}
	a.hosts.mu.Lock()
	why, ok := a.hosts.seen[host]
	a.hosts.mu.Unlock()
	if ok {
		return why
	}
	ctx, cancel := context.WithTimeout(ctx, selfHostedLookupTimeout)
	defer cancel()
	loc, _ := web.LocalHost(ctx, a.webOptions.Resolver, host)
	if !loc.Local {
		why = loc.Reason + "; a self-hosted provider needs every address of its host to be loopback or private, or its host listed by the organization"
	}
	a.hosts.mu.Lock()
	if a.hosts.seen == nil {
		a.hosts.seen = map[string]string{}
	}
	a.hosts.seen[host] = why
	a.hosts.mu.Unlock()
	return why
}

// orgListsHost reports whether the organization configured host as the
// host of one of its self-hosted providers or embedding providers.
func (a *App) orgListsHost(host string) bool {
	same := func(raw string) bool {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return false
		}
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		u, err := url.Parse(raw)
		return err == nil && strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), host)
	}
	for _, op := range a.Org.Providers {
		selfHosted := strings.EqualFold(op.UsedLLMProvider, policy.ProviderSelfHosted)
		if k, ok := llm.LookupKind(op.UsedLLMProvider); ok {
			info, _ := k.Info()
			selfHosted = selfHosted || info.SelfHosted
		}
		if selfHosted && same(op.Hostname) {
			return true
		}
	}
	for _, e := range a.Org.EmbeddingProviders {
		if strings.EqualFold(e.UsedLLMProvider, policy.ProviderSelfHosted) && same(e.Hostname) {
			return true
		}
	}
	return false
}

// checkSelfHosted turns a provider of a self-hosted kind whose host is
// neither local nor listed into a cloud provider for the confidence
// scheme, and says why. One that stays self-hosted because of the
// addresses its host name has is pinned to them (LocalOnly).
func (a *App) checkSelfHosted(ctx context.Context, rp *ResolvedProvider) {
	if rp.SchemeName != policy.ProviderSelfHosted {
		return
	}
	if why := a.notSelfHosted(ctx, rp.BaseURL); why != "" {
		rp.SchemeName = policy.ProviderUnlistedHost
		rp.NotSelfHosted = why
		return
	}
	rp.LocalOnly = a.selfHostedByAddress(policy.ProviderSelfHosted, rp.BaseURL)
}

// selfHostedByAddress reports whether a provider the scheme knows as
// scheme, at baseURL, counts as self-hosted only because every address its
// host name had was loopback or private: a self-hosted provider whose host
// is a name the organization does not list. Its connections must stay on
// such addresses (providerClient). An IP literal cannot change, and a host
// the organization lists is self-hosted wherever it is.
func (a *App) selfHostedByAddress(scheme, baseURL string) bool {
	if scheme != policy.ProviderSelfHosted {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return false
	}
	return !a.orgListsHost(host)
}

// providerClient is the HTTP client of a provider (a chat model or an
// embedding provider) the confidence scheme knows as scheme, at baseURL:
// a.HTTPClient, except for a provider that is self-hosted by the addresses
// of its host name (selfHostedByAddress). Its client connects only to
// loopback and private addresses (web.LocalOnlyDial, with the web
// service's resolver and dialer), so a name that resolves elsewhere at
// connect time (DNS rebinding) is refused with a clear error before
// anything is sent, and it uses no proxy. It keeps the settings of
// a.HTTPClient's *http.Transport; a client with another kind of transport
// cannot be pinned and is refused for such a provider.
func (a *App) providerClient(scheme, baseURL string) (*http.Client, error) {
	if !a.selfHostedByAddress(scheme, baseURL) {
		return a.HTTPClient, nil
	}
	a.pinned.once.Do(func() {
		var tr *http.Transport
		switch t := a.HTTPClient.Transport.(type) {
		case nil:
			tr = http.DefaultTransport.(*http.Transport).Clone()
		case *http.Transport:
			tr = t.Clone()
		default:
			a.pinned.err = fmt.Errorf("the HTTP client Steward was given has a transport (%T) whose connections cannot be kept to loopback and private addresses, so a self-hosted provider on a host name is not contacted with it: give Steward a client with an *http.Transport, or none", t)
			return
		}
		tr.Proxy = nil
		tr.DialContext = web.LocalOnlyDial(a.webOptions)
		tr.DialTLSContext = nil
		c := *a.HTTPClient
		c.Transport = tr
		a.pinned.client = &c
	})
	return a.pinned.client, a.pinned.err
}

// pinnedClient is the App's one client for providers that are self-hosted
// by the addresses of their host names.
type pinnedClient struct {
	once   sync.Once
	client *http.Client
	err    error
}
