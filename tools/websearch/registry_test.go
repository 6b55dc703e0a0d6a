package websearch

import (
	"context"
	"testing"

	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
)

// TestRegistryOffers checks web_search as the registry sees it: the
// definition is accepted, and a chat which read mails no longer gets it,
// because its queries go to a third party.
func TestRegistryOffers(t *testing.T) {
	t.Parallel()
	res := &settings.Resolver{Org: settings.Org{Defaults: map[string]string{
		settings.Key(ID, SettingSearxngBaseURL):  "https://searx.example.org",
		settings.Key(ID, SettingDefaultLanguage): "en",
	}}}
	reg, errs := registry.New(registry.Options{Logger: webtest.Discard(), Settings: res}, []tool.Tool{New(Deps{})}, nil)
	if len(errs) != 0 {
		t.Fatalf("registration: %v", errs)
	}
	free := registry.Request{Component: registry.ComponentChat, Selected: []string{ID}, MayRunTools: true,
		Provider: registry.Provider{Confidence: policy.Medium, CanUseTools: true}}
	if offered, blocked := reg.Runnable(context.Background(), free); len(offered) != 1 || offered[0].Instructions != Instructions {
		t.Fatalf("unrestricted: offered %d, blocked %v", len(offered), blocked)
	}
	req := registry.Request{Component: registry.ComponentChat, Selected: []string{ID}, MayRunTools: true,
		Provider:    registry.Provider{Confidence: policy.Medium, CanUseTools: true},
		Restriction: policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat}}
	offered, blocked := reg.Runnable(context.Background(), req)
	if len(offered) != 0 || len(blocked) != 1 {
		t.Fatalf("offered %d, blocked %v", len(offered), blocked)
	}
	if blocked[0].Reason.String() != "OUTBOUND_DATA_RESTRICTED" {
		t.Errorf("reason = %s, want OUTBOUND_DATA_RESTRICTED", blocked[0].Reason)
	}
}
