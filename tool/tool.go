package tool

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/stewardhq/steward/policy"
)

// Tool is the contract every Steward tool fulfils. Embed Base to take the
// defaults and override what the tool needs.
type Tool interface {
	// Definition states the tool; it is read once when the tool is
	// registered.
	Definition() Definition
	// IsAvailable is false while the tool is not present in this
	// installation, e.g. while its preview feature is off. Keep it cheap.
	IsAvailable() bool
	// OutboundData declares where the tool's arguments go.
	OutboundData() policy.OutboundData
	// EnforcesOutboundRestriction is true when the tool tells allowed
	// destinations from others itself and refuses what goes too far on
	// every call. It is then offered at every restriction level.
	EnforcesOutboundRestriction() bool
	// ReturnsUntrustedContent is true when the tool returns content fetched
	// from outside Steward, which it then filters for prompt injection.
	ReturnsUntrustedContent() bool
	// SensitiveArguments names the model arguments masked in traces.
	SensitiveArguments() []string
	// ValidateConfiguration checks resolved settings beyond the required
	// fields. A nil error means no objection; otherwise the error says what
	// is wrong and what would be right.
	ValidateConfiguration(ctx context.Context, settings Settings) error
	// ResolveFunction returns what the tool offers in this request, or nil
	// when it has nothing to offer. Only description and parameters count.
	// The answer must be stable for an unchanged chat, and cheap.
	ResolveFunction(ctx context.Context, rc ResolveContext) (*Function, error)
	// ResolveInstructions returns the system prompt instructions for this
	// request.
	ResolveInstructions(ctx context.Context, rc ResolveContext) (string, error)
	// Execute runs one call. A policy block returns a *BlockedError; any
	// other error is reported to the model as a failure.
	Execute(ctx context.Context, args json.RawMessage, ec ExecContext) (Result, error)
}

// Base gives a tool the defaults of the contract. Embed it by value and set
// Def; a tool then only writes Execute and what it changes.
type Base struct {
	Def Definition
}

// Definition returns Def.
func (b Base) Definition() Definition { return b.Def }

// IsAvailable returns true.
func (Base) IsAvailable() bool { return true }

// OutboundData returns ModelChosenAddresses, the most open kind, because a
// tool which says nothing counts as that.
func (Base) OutboundData() policy.OutboundData { return policy.ModelChosenAddresses }

// EnforcesOutboundRestriction returns false.
func (Base) EnforcesOutboundRestriction() bool { return false }

// ReturnsUntrustedContent returns false.
func (Base) ReturnsUntrustedContent() bool { return false }

// SensitiveArguments returns nothing.
func (Base) SensitiveArguments() []string { return nil }

// ValidateConfiguration has no objection.
func (Base) ValidateConfiguration(context.Context, Settings) error { return nil }

// ResolveFunction offers the registered function.
func (b Base) ResolveFunction(_ context.Context, rc ResolveContext) (*Function, error) {
	f := rc.Definition.Function
	return &f, nil
}

// ResolveInstructions returns the registered instructions.
func (b Base) ResolveInstructions(_ context.Context, rc ResolveContext) (string, error) {
	return rc.Definition.SystemPromptInstructions, nil
}

// Settings are a tool's resolved setting values by field name. Secrets are
// included; never log or echo them.
type Settings map[string]string

// Get returns a value, or "" when unset.
func (s Settings) Get(name string) string { return s[name] }

// ChatView is the narrow view of the chat a tool may read.
type ChatView interface {
	// IsWebAddressGiven reports whether the address was given to the model:
	// in the system prompt of the last request, a user message or its
	// documents, or a tool result. Model output never counts.
	IsWebAddressGiven(rawURL string) bool
	// OutboundRequirement is the chat's current outbound data restriction
	// with the mailbox which demanded it.
	OutboundRequirement() policy.OutboundRequirement
	// RequiredConfidence is the confidence the chat already demands.
	RequiredConfidence() policy.Confidence
}

// ResolveContext is what a tool may look at when it resolves its function
// or instructions for a request.
type ResolveContext struct {
	Definition         Definition
	Settings           Settings
	Component          string
	ProviderConfidence policy.Confidence
	// ProviderTrusted is true when the provider is self-hosted or the
	// organization lists it as trusted for data-source security. It does
	// not raise confidence.
	ProviderTrusted bool
	Chat            ChatView
}

// ExecContext is what a tool receives with each call.
type ExecContext struct {
	Definition Definition
	// CallID is the provider's (or Steward's) ID of this call.
	CallID string
	// Settings are the resolved settings of the tool.
	Settings Settings
	// ProviderConfidence is the level of the provider that asked.
	ProviderConfidence policy.Confidence
	// ProviderTrusted is true when the organization lists the provider as
	// trusted for data-source security. It does not raise confidence.
	ProviderTrusted bool
	// Chat is the chat the call belongs to; never nil.
	Chat ChatView
}

// Source is material a tool returned which the user may want to check.
type Source struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Result is what a call returns to the model and what it demands of the
// chat from then on.
type Result struct {
	// Text is used when JSON is nil.
	Text string
	// JSON is serialized with relaxed escaping: only what JSON requires.
	JSON any
	// Sources are added to the answer's "Sources used by tools".
	Sources []Source
	// RequiredConfidence is the provider confidence later messages need,
	// for what actually reached the model.
	RequiredConfidence policy.Confidence
	// RequiredDataSecurity is SELF_HOSTED for data which may only go to
	// self-hosted providers.
	RequiredDataSecurity policy.DataSecurity
	// RequiredOutbound is the restriction a mailbox demands.
	RequiredOutbound policy.OutboundRequirement
}

// BlockedError is an intentional policy block. Its message reaches the model
// as plain text and the trace reads BLOCKED.
type BlockedError struct {
	Message string
}

func (e *BlockedError) Error() string { return e.Message }

// Blocked returns a policy block with the given message.
func Blocked(message string) error { return &BlockedError{Message: message} }

// IsBlocked reports whether err is, or wraps, a policy block, and returns it.
func IsBlocked(err error) (*BlockedError, bool) {
	var b *BlockedError
	if errors.As(err, &b) {
		return b, true
	}
	return nil, false
}

// Offered is a tool the registry decided to offer in one request, with the
// function and instructions resolved for it.
type Offered struct {
	Definition   Definition
	Function     Function
	Instructions string
	Settings     Settings
	Tool         Tool
}
