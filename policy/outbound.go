package policy

import (
	"fmt"
	"strings"
)

// DataSecurity is what a data source demands of the providers that may see
// its content.
type DataSecurity int

// The data security levels. Only ever tightened in a chat: SELF_HOSTED sticks.
const (
	NotSpecified DataSecurity = iota
	AllowAny
	SelfHosted
)

func (d DataSecurity) String() string {
	switch d {
	case AllowAny:
		return "ALLOW_ANY"
	case SelfHosted:
		return "SELF_HOSTED"
	default:
		return "NOT_SPECIFIED"
	}
}

// ParseDataSecurity reads a data security name case-insensitively.
func ParseDataSecurity(s string) (DataSecurity, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "NOT_SPECIFIED", "":
		return NotSpecified, nil
	case "ALLOW_ANY":
		return AllowAny, nil
	case "SELF_HOSTED":
		return SelfHosted, nil
	}
	return NotSpecified, fmt.Errorf("unknown data security %q: use NOT_SPECIFIED, ALLOW_ANY or SELF_HOSTED", s)
}

// TightenDataSecurity returns the chat's data security after a result
// demanded next: SELF_HOSTED sticks, ALLOW_ANY is taken over NOT_SPECIFIED,
// and NOT_SPECIFIED changes nothing.
func TightenDataSecurity(current, next DataSecurity) DataSecurity {
	if current == SelfHosted || next == SelfHosted {
		return SelfHosted
	}
	if next == AllowAny || current == AllowAny {
		return AllowAny
	}
	return NotSpecified
}

// OutboundData says where a tool's arguments go.
type OutboundData int

// The outbound data kinds, from the most closed to the most open. The zero
// value is ModelChosenAddresses on purpose: a tool which declares nothing
// counts as the most open kind.
const (
	ModelChosenAddresses OutboundData = iota
	ThirdPartyQueries
	ConfiguredService
	NoOutbound
)

func (o OutboundData) String() string {
	switch o {
	case NoOutbound:
		return "NONE"
	case ConfiguredService:
		return "CONFIGURED_SERVICE"
	case ThirdPartyQueries:
		return "THIRD_PARTY_QUERIES"
	default:
		return "MODEL_CHOSEN_ADDRESSES"
	}
}

// Restriction is where a chat may still send data after it read mails.
// Smaller is stricter.
type Restriction int

// The outbound data restrictions, strictest first. ONLY_CONFIGURED_SERVICES
// is also what an unreadable value counts as.
const (
	OnlyConfiguredServices Restriction = 0
	OnlyLinksFromChat      Restriction = 1
	Unrestricted           Restriction = 2
)

func (r Restriction) String() string {
	switch r {
	case OnlyLinksFromChat:
		return "ONLY_LINKS_FROM_CHAT"
	case Unrestricted:
		return "UNRESTRICTED"
	default:
		return "ONLY_CONFIGURED_SERVICES"
	}
}

// Normalize maps an unknown value to the strictest level.
func (r Restriction) Normalize() Restriction {
	if r < OnlyConfiguredServices || r > Unrestricted {
		return OnlyConfiguredServices
	}
	return r
}

// ParseRestriction reads a restriction name. An unreadable value is returned
// as the strictest level together with an error that names the valid ones.
func ParseRestriction(s string) (Restriction, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "UNRESTRICTED":
		return Unrestricted, nil
	case "ONLY_LINKS_FROM_CHAT":
		return OnlyLinksFromChat, nil
	case "ONLY_CONFIGURED_SERVICES":
		return OnlyConfiguredServices, nil
	}
	return OnlyConfiguredServices, fmt.Errorf("unknown outbound data restriction %q: use UNRESTRICTED, ONLY_LINKS_FROM_CHAT or ONLY_CONFIGURED_SERVICES (an unreadable value counts as ONLY_CONFIGURED_SERVICES)", s)
}

// OutboundAllowed reports whether a tool with outbound kind data may run in a
// chat restricted to r. Below UNRESTRICTED only NONE and CONFIGURED_SERVICE
// run, unless the tool enforces the restriction itself on every call.
func OutboundAllowed(r Restriction, data OutboundData, enforcesItself bool) bool {
	if r.Normalize() == Unrestricted {
		return true
	}
	return data == NoOutbound || data == ConfiguredService || enforcesItself
}

// OutboundRequirement is a restriction together with the mailbox which
// demanded it. The zero value demands nothing.
type OutboundRequirement struct {
	// Set is false for "no requirement".
	Set         bool
	Restriction Restriction
	// MailboxID and MailboxName name the mailbox which demanded it.
	MailboxID   string
	MailboxName string
}

// Effective returns the restriction in force: UNRESTRICTED when nothing was
// demanded.
func (o OutboundRequirement) Effective() Restriction {
	if !o.Set {
		return Unrestricted
	}
	return o.Restriction.Normalize()
}

// Tighten returns the requirement after next was demanded: nothing changes
// for an unset next; a stricter level replaces the current one together with
// its mailbox; on a tie the first mailbox stays.
func (o OutboundRequirement) Tighten(next OutboundRequirement) OutboundRequirement {
	if !next.Set {
		return o
	}
	next.Restriction = next.Restriction.Normalize()
	if !o.Set || next.Restriction < o.Restriction.Normalize() {
		return next
	}
	return o
}
