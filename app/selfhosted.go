package app

import (
	"context"
	"fmt"
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
// scheme, and says why.
func (a *App) checkSelfHosted(ctx context.Context, rp *ResolvedProvider) {
	if rp.SchemeName != policy.ProviderSelfHosted {
		return
	}
	if why := a.notSelfHosted(ctx, rp.BaseURL); why != "" {
		rp.SchemeName = policy.ProviderUnlistedHost
		rp.NotSelfHosted = why
	}
}
