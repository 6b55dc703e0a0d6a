package webpage

import (
	"net/url"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// AllowedByRestriction reports whether the outbound data restriction of
// chat lets rawURL be reached, by the rule read_web_page applies before
// every call: any http or https address while the chat is unrestricted;
// on ONLY_LINKS_FROM_CHAT an address given to the model or a page of the
// wiki; on ONLY_CONFIGURED_SERVICES (and anything unreadable) a page of
// the wiki only. wiki is nil when no wiki is configured. Surfaces use it
// to decide which addresses in an answer are made clickable: a click
// sends the address, and whatever the model put into it, out of the chat.
// The free address choice plays no part: the user, not the model, clicks.
func AllowedByRestriction(chat tool.ChatView, wiki *url.URL, rawURL string) bool {
	target, err := parseTarget(rawURL)
	if err != nil {
		return false
	}
	inWiki := wiki != nil && insideWiki(wiki, target)
	switch restrictionOf(chat) {
	case policy.Unrestricted:
		return true
	case policy.OnlyLinksFromChat:
		return inWiki || (chat != nil && chat.IsWebAddressGiven(rawURL))
	default:
		return inWiki
	}
}
