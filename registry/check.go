package registry

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/settings"
)

// Reason names what keeps a tool from being offered.
type Reason int

// The offer-block reasons, in the order the checks run.
const (
	// NoBlock: nothing is in the way.
	NoBlock Reason = iota
	// ToolsSwitchedOff: tools are switched off globally.
	ToolsSwitchedOff
	// ModelCannotUseTools: the provider's model cannot call tools.
	ModelCannotUseTools
	// NotAvailableHere: the tool is unknown, not visible in the component,
	// or not present in this installation.
	NotAvailableHere
	// ToolSwitchedOff: the tool or its collection is switched off.
	ToolSwitchedOff
	// NotConfigured: a required setting is missing or the tool objects to
	// its settings.
	NotConfigured
	// ProviderConfidenceTooLow: the provider is below the tool's minimum,
	// or below the confidence the chat's data demands.
	ProviderConfidenceTooLow
	// DataSecurityRestricted: the chat holds data for self-hosted
	// providers only, and the provider is none.
	DataSecurityRestricted
	// OutboundDataRestricted: the chat may not send data where the tool
	// would send it.
	OutboundDataRestricted
)

var reasonNames = [...]string{"NONE", "TOOLS_SWITCHED_OFF", "MODEL_CANNOT_USE_TOOLS", "NOT_AVAILABLE_HERE",
	"TOOL_SWITCHED_OFF", "NOT_CONFIGURED", "PROVIDER_CONFIDENCE_TOO_LOW", "DATA_SECURITY_RESTRICTED", "OUTBOUND_DATA_RESTRICTED"}

func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Provider is what the registry needs to know of the provider a request
// goes to. Build it with the provider settings the request uses, or the
// registry and the request come to different answers.
type Provider struct {
	// Confidence is the provider's level under the organization's scheme.
	Confidence policy.Confidence
	// CanUseTools is true when the model can call functions over an API
	// Steward speaks.
	CanUseTools bool
	// Trusted is true when the provider is self-hosted or the organization
	// lists it as trusted for data-source security. It never raises
	// confidence; it meets a chat's SELF_HOSTED data security, and tools
	// resolving what they offer read it (semantic_search's SELF_HOSTED
	// sources).
	Trusted bool
}

// demands are what the chat of a request demands of the provider and the
// tools: its outbound data restriction, the confidence its data requires
// and its data security.
type demands struct {
	restriction policy.Restriction
	confidence  policy.Confidence
	security    policy.DataSecurity
}

// unrestricted demands nothing: a chat in which nothing happened yet.
var unrestricted = demands{restriction: policy.Unrestricted}

// checked is the outcome of the checks for one tool.
type checked struct {
	reason   Reason
	detail   string
	settings settings.Resolved
}

// gate runs the request-wide checks, then the per-component one, then the
// tool's own checks, in the one order every caller shares. e is nil for an
// unknown ID.
func (r *Registry) gate(ctx context.Context, e *entry, component string, p Provider, d demands) checked {
	if !r.opts.Policy.ToolsOn() {
		return checked{reason: ToolsSwitchedOff, detail: "tools are switched off"}
	}
	if !p.CanUseTools {
		return checked{reason: ModelCannotUseTools, detail: "the model cannot call tools"}
	}
	if e == nil {
		return checked{reason: NotAvailableHere, detail: "no tool has this ID"}
	}
	if !Visible(e.def.VisibleIn, component) {
		return checked{reason: NotAvailableHere, detail: "the tool is not available in " + component}
	}
	return r.checkTool(ctx, e, p, d)
}

// checkTool is the per-tool check in its fixed order: switched off, not
// present, not configured, confidence (the tool's minimum, then what the
// chat's data demands), data security, outbound data.
func (r *Registry) checkTool(ctx context.Context, e *entry, p Provider, d demands) checked {
	confidence, restriction := p.Confidence, d.restriction
	pol := r.opts.Policy
	if !pol.Active(e.coll.settingsIDs...) {
		return checked{reason: ToolSwitchedOff, detail: "switched off by the settings"}
	}
	if !e.tool.IsAvailable() {
		return checked{reason: NotAvailableHere, detail: "the tool is not present in this installation"}
	}
	res, state := r.opts.Settings.State(ctx, e.tool)
	if !state.Configured() {
		return checked{reason: NotConfigured, detail: state.String()}
	}
	if min := r.minimum(e.coll); !policy.Allows(confidence, min.Level) {
		return checked{reason: ProviderConfidenceTooLow, detail: fmt.Sprintf("the provider's confidence %s is below the required %s", confidence, min.Level)}
	}
	if !policy.Allows(confidence, d.confidence) {
		return checked{reason: ProviderConfidenceTooLow, detail: fmt.Sprintf("the chat holds data that may only go to providers with confidence %s or higher, and the provider has %s", d.confidence, confidence)}
	}
	if d.security == policy.SelfHosted && !p.Trusted {
		return checked{reason: DataSecurityRestricted, detail: "the chat holds data that may only go to self-hosted providers, and the provider is not one"}
	}
	if !policy.OutboundAllowed(restriction, e.tool.OutboundData(), e.tool.EnforcesOutboundRestriction()) {
		return checked{reason: OutboundDataRestricted, detail: fmt.Sprintf("the chat is restricted to %s and the tool sends data to %s", restriction.Normalize(), e.tool.OutboundData())}
	}
	return checked{reason: NoBlock, settings: res}
}

func (r *Registry) minimum(c *collection) settings.Minimum {
	return r.opts.Policy.MinimumConfidence(c.settingsIDs, c.MinimumConfidence)
}

// OfferBlockReason answers whether the tool can be offered to the provider
// in the component, with the same checks in the same order as a request:
// tools switched off, the model, the component, then the tool's own checks.
// The outbound check counts as unrestricted here, so it is never the
// answer. On purpose it ignores the selection and cannot tell whether the
// tool has something to offer right now; only a request can.
func (r *Registry) OfferBlockReason(ctx context.Context, toolID string, p Provider, component string) Reason {
	return r.gate(ctx, r.byID[toolID], component, p, unrestricted).reason
}

// RetrievalMode says how a chat searches its data sources.
type RetrievalMode int

const (
	// EveryMessage is the classic process: search with every message.
	EveryMessage RetrievalMode = iota
	// SemanticSearch lets the model search with the semantic_search tool.
	SemanticSearch
)

func (m RetrievalMode) String() string {
	if m == SemanticSearch {
		return "SEMANTIC_SEARCH"
	}
	return "EVERY_MESSAGE"
}

// EffectiveRetrievalMode decides whether the chat's data sources are
// searched by the model through semantic_search or by the classic process
// with every message. Semantic search runs only when the user prefers it
// and the tool can be offered; the reason it cannot is returned either way,
// so that a chat never ends up searching nothing. Outside the chat the
// answer is always the classic process.
func (r *Registry) EffectiveRetrievalMode(ctx context.Context, prefersSemantic bool, p Provider, component string) (RetrievalMode, Reason) {
	if component != ComponentChat {
		return EveryMessage, NotAvailableHere
	}
	reason := r.OfferBlockReason(ctx, SemanticSearchID, p, component)
	if prefersSemantic && reason == NoBlock {
		return SemanticSearch, reason
	}
	return EveryMessage, reason
}

// Active reports whether tools are on and neither the tool nor its
// collection is switched off.
func (r *Registry) Active(id string) bool {
	if c := r.collections[r.CollectionID(id)]; c != nil {
		return r.opts.Policy.Active(c.settingsIDs...)
	}
	return false
}

// MinimumConfidence returns the minimum provider confidence of a tool or
// collection, and false for an unknown ID.
func (r *Registry) MinimumConfidence(id string) (settings.Minimum, bool) {
	c := r.collections[r.CollectionID(id)]
	if c == nil {
		return settings.Minimum{}, false
	}
	return r.minimum(c), true
}
