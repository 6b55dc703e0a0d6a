package webpage

import (
	"net/url"
	"testing"

	"github.com/stewardhq/steward/policy"
)

// linkChat is a chat with a restriction and the addresses given to it.
type linkChat struct {
	req   policy.OutboundRequirement
	given map[string]bool
}

func (c linkChat) IsWebAddressGiven(u string) bool                 { return c.given[u] }
func (c linkChat) OutboundRequirement() policy.OutboundRequirement { return c.req }
func (c linkChat) RequiredConfidence() policy.Confidence           { return policy.None }

func TestAllowedByRestriction(t *testing.T) {
	wiki, _ := url.Parse("https://wiki.example.org/confluence/")
	given := map[string]bool{"https://news.example.com/given": true}
	on := func(r policy.Restriction) linkChat {
		return linkChat{req: policy.OutboundRequirement{Set: true, Restriction: r, MailboxID: "work"}, given: given}
	}
	cases := []struct {
		name string
		chat linkChat
		wiki *url.URL
		url  string
		want bool
	}{
		{"unrestricted, any web address", linkChat{}, nil, "https://evil.example.com/x?d=1", true},
		{"unrestricted, javascript", linkChat{}, nil, "javascript:alert(1)", false},
		{"unrestricted, data", linkChat{}, nil, "data:text/html,hi", false},
		{"unrestricted, no host", linkChat{}, nil, "https:///path", false},
		{"links from chat, given", on(policy.OnlyLinksFromChat), nil, "https://news.example.com/given", true},
		{"links from chat, made up", on(policy.OnlyLinksFromChat), nil, "https://evil.example.com/collect?d=secret", false},
		{"links from chat, wiki page", on(policy.OnlyLinksFromChat), wiki, "https://wiki.example.org/confluence/display/X", true},
		{"links from chat, beside the wiki", on(policy.OnlyLinksFromChat), wiki, "https://wiki.example.org/other", false},
		{"configured services, given", on(policy.OnlyConfiguredServices), wiki, "https://news.example.com/given", false},
		{"configured services, wiki", on(policy.OnlyConfiguredServices), wiki, "https://wiki.example.org/confluence/x", true},
		{"configured services, no wiki", on(policy.OnlyConfiguredServices), nil, "https://wiki.example.org/confluence/x", false},
		{"configured services, dot segments", on(policy.OnlyConfiguredServices), wiki, "https://wiki.example.org/confluence/%2e%2e/admin", false},
	}
	for _, c := range cases {
		if got := AllowedByRestriction(c.chat, c.wiki, c.url); got != c.want {
			t.Errorf("%s: AllowedByRestriction(%s) = %v, want %v", c.name, c.url, got, c.want)
		}
	}
	if !AllowedByRestriction(nil, nil, "https://example.org/") {
		t.Error("without a chat every web address is allowed")
	}
}
