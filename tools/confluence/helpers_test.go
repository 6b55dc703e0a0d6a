package confluence

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/internal/confluencetest"
	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Made-up hosts of the tests, all served by one fake on loopback: the wiki
// on a private address, a wiki on a public one, Cloud's site and API.
const (
	wikiHost   = "wiki.example.com"
	publicHost = "public-wiki.example.com"
	siteHost   = "acme.atlassian.net"
	apiHost    = "api.atlassian.com"
	evilHost   = "evil.example.com"
	cloudID    = "0f3c2a4e-1b2d-4c5e-8f90-123456789abc"
	email      = "user@example.com"
	apiToken   = "ATATT3xFfGF0-secret-token-4711"
	pat        = "pat-123-secret-personal-token"
)

// wiki is a fake Confluence on a made-up network.
type wiki struct {
	*confluencetest.Running
	net *webtest.Net
}

// newWiki starts the fake for o. evil.example.com resolves too, so a test
// can prove it is never even looked up.
func newWiki(t *testing.T, o confluencetest.Options) *wiki {
	t.Helper()
	r := confluencetest.Start(t, o, "example.com", "*.example.com", "*.atlassian.net", apiHost)
	n := webtest.NewNetFor(t, r.HTTP)
	n.Host(wikiHost, "10.20.30.40")
	n.Host(publicHost, "93.184.215.20")
	n.Host(siteHost, "93.184.215.30")
	n.Host(apiHost, "93.184.215.31")
	n.Host(evilHost, "93.184.215.66")
	return &wiki{Running: r, net: n}
}

// url is an address on a made-up host of the fake.
func (w *wiki) url(host, path string) string { return w.net.URL(host, path) }

// sleeper records the waits instead of waiting.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return nil
}

func (s *sleeper) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// tool builds the tool against the fake's network.
func (w *wiki) tool(t *testing.T, r *webtest.Reports, deps Deps) (*Tool, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	deps.Web = w.net.Service()
	deps.Guard = webtest.NewFilter(r)
	deps.HTTP = w.net.Client()
	deps.Logger = webtest.Discard()
	deps.Sleep = sl.sleep
	return New(deps), sl
}

// call runs one call as the executor would, for a HIGH provider unless
// confidence says otherwise.
func call(t *testing.T, tl *Tool, settings tool.Settings, args string, confidence policy.Confidence) (tool.Result, error) {
	t.Helper()
	return tl.Execute(context.Background(), json.RawMessage(args), tool.ExecContext{
		Definition: Definition(), CallID: "call_1", Settings: settings, ProviderConfidence: confidence, Chat: &chat.Thread{}})
}

// merge returns a copy of base with more on top.
func merge(base tool.Settings, more tool.Settings) tool.Settings {
	out := tool.Settings{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// restResult decodes a REST result.
func restResult(t *testing.T, r tool.Result) RESTResult {
	t.Helper()
	rr, ok := r.JSON.(RESTResult)
	if !ok {
		t.Fatalf("result is %T, want RESTResult", r.JSON)
	}
	return rr
}

// assertNoSecret fails when any of the texts holds a token or the phrase.
func assertNoSecret(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, secret := range []string{apiToken, pat, "dXNlckBleGFtcGxlLmNvbTpBVEFUVDN4RmZHRjAtc2VjcmV0LXRva2VuLTQ3MTE"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds a secret: %s", what, s)
			}
		}
	}
}
