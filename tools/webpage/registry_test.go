package webpage

import (
	"context"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
)

// TestRegistryOffers checks read_web_page as the registry sees it: the
// definition is accepted, the tool stays offered after a chat read mails
// (it enforces the restriction itself), and it offers nothing on the
// strictest level without a wiki.
func TestRegistryOffers(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	var rep webtest.Reports
	cases := []struct {
		name    string
		wiki    bool
		req     policy.OutboundRequirement
		offered bool
		mention string
	}{
		{"unrestricted", false, policy.OutboundRequirement{}, true, "word for word"},
		{"links from chat", false, linksOnly, true, "only addresses given in the conversation"},
		{"wiki only with wiki", true, wikiOnly, true, "only pages of the organization's wiki"},
		{"wiki only without wiki", false, wikiOnly, false, ""},
	}
	for _, c := range cases {
		reg, errs := registry.New(registry.Options{Logger: webtest.Discard()}, []tool.Tool{s.tool(t, c.wiki, &rep)}, nil)
		if len(errs) != 0 {
			t.Fatalf("registration: %v", errs)
		}
		offered, blocked := reg.Runnable(context.Background(), registry.Request{
			Component: registry.ComponentChat, Selected: []string{ID}, MayRunTools: true,
			Provider: registry.Provider{Confidence: policy.Medium, CanUseTools: true},
			Chat:     threadWith("", c.req),
		})
		if (len(offered) == 1) != c.offered {
			t.Errorf("%s: offered %d, blocked %v", c.name, len(offered), blocked)
			continue
		}
		if c.offered && !strings.Contains(reg.Instructions(offered), c.mention) {
			t.Errorf("%s: instructions lack %q:\n%s", c.name, c.mention, reg.Instructions(offered))
		}
	}
}
