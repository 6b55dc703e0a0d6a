package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Request is what decides which tools one request offers.
type Request struct {
	// Component is where the request comes from, e.g. ComponentChat.
	Component string
	// Selected are the selected tool or collection IDs, as stored; they are
	// expanded here.
	Selected []string
	// MayRunTools is true when the component shows a tool selection or an
	// assistant's rules name the tools. Without it nothing is offered.
	MayRunTools bool
	// Provider is the provider the request goes to.
	Provider Provider
	// Chat is the chat of the request. Nil stands for an empty chat: no
	// address given, no requirement.
	Chat tool.ChatView
	// Restriction is an outbound data restriction on top of the chat's;
	// the stricter of both applies. The zero value adds none.
	Restriction policy.OutboundRequirement
}

// dataSecurityView is the part of a chat that knows its data security;
// *chat.Thread has it. A chat without it demands none.
type dataSecurityView interface {
	DataSecurity() policy.DataSecurity
}

// demands returns what the request's chat demands: the stricter of the
// two outbound restrictions, the confidence its data requires and its data
// security.
func (q Request) demands() demands {
	req := q.Restriction
	d := demands{}
	if q.Chat != nil {
		req = req.Tighten(q.Chat.OutboundRequirement())
		d.confidence = q.Chat.RequiredConfidence()
		if ds, ok := q.Chat.(dataSecurityView); ok {
			d.security = ds.DataSecurity()
		}
	}
	d.restriction = req.Effective()
	return d
}

// Block says why a tool is not offered in a request.
type Block struct {
	ToolID string
	// Reason is the check that failed. It is NoBlock for a tool which
	// passed every check and then had nothing to offer (Err nil) or whose
	// resolution failed (Err set).
	Reason Reason
	// Detail says what is in the way, in words for a log or the user. It
	// never holds a setting's value.
	Detail string
	// Err is the resolution's failure, if any.
	Err error
}

func (b Block) String() string { return b.ToolID + ": " + b.Reason.String() + " (" + b.Detail + ")" }

// Runnable decides which tools the request offers and why each other
// candidate is not offered.
//
// The candidates are the tools visible in the component and present in this
// installation which offer themselves from the context of the chat or are
// in the expanded selection. Each runs through the checks in their fixed
// order (see OfferBlockReason), the chat's outbound data restriction
// included; a selected ID which is no candidate is reported with the reason
// OfferBlockReason gives. Each tool which passes is asked for its function
// (nothing to offer leaves it out) and then for its instructions; a failing
// or panicking resolution costs that one tool. A tailored function keeps
// the registered name and strict flag, and one whose parameters are no JSON
// object is replaced by the registered function.
//
// Offered tools come in registration order, blocked ones in registration
// order followed by unknown selected IDs in selection order. Without
// MayRunTools both are empty. When ctx ends during resolution, both are nil
// and the caller finds the cause in ctx.Err().
func (r *Registry) Runnable(ctx context.Context, req Request) (offered []tool.Offered, blocked []Block) {
	if !req.MayRunTools || ctx.Err() != nil {
		return nil, nil
	}
	selected := r.ExpandSelection(req.Selected)
	isSel := make(map[string]bool, len(selected))
	for _, id := range selected {
		isSel[id] = true
	}
	d := req.demands()
	for _, e := range r.entries {
		o, b, considered := r.consider(ctx, e, req, isSel[e.def.ID], d)
		if ctx.Err() != nil {
			return nil, nil
		}
		switch {
		case !considered:
		case b != nil:
			blocked = append(blocked, *b)
		default:
			offered = append(offered, o)
		}
	}
	for _, id := range selected {
		if r.byID[id] == nil {
			c := r.gate(ctx, nil, req.Component, req.Provider, d)
			blocked = append(blocked, Block{ToolID: id, Reason: c.reason, Detail: c.detail})
		}
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	return offered, blocked
}

// consider decides one registered tool: whether it is a candidate at all,
// then its checks, then its resolution. A panic anywhere in the tool's
// methods costs this tool only.
func (r *Registry) consider(ctx context.Context, e *entry, req Request, isSelected bool, d demands) (o tool.Offered, b *Block, considered bool) {
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("registry: tool %q panicked: %v", e.def.ID, p)
			r.log.ErrorContext(ctx, "tool left out: it panicked", slog.String("tool", e.def.ID), slog.Any("error", err))
			o, b, considered = tool.Offered{}, &Block{ToolID: e.def.ID, Reason: NoBlock, Detail: "it failed unexpectedly", Err: err}, true
		}
	}()
	candidate := Visible(e.def.VisibleIn, req.Component) && e.tool.IsAvailable() &&
		(e.def.Activation == tool.Context || isSelected)
	if !candidate && !isSelected {
		return tool.Offered{}, nil, false
	}
	c := r.gate(ctx, e, req.Component, req.Provider, d)
	if c.reason != NoBlock {
		r.log.DebugContext(ctx, "tool not offered", slog.String("tool", e.def.ID), slog.String("reason", c.reason.String()))
		return tool.Offered{}, &Block{ToolID: e.def.ID, Reason: c.reason, Detail: c.detail}, true
	}
	o, ok, err := r.resolve(ctx, e, req, c)
	var nothing *NothingToOfferError
	switch {
	case errors.As(err, &nothing):
		return tool.Offered{}, &Block{ToolID: e.def.ID, Reason: NoBlock, Detail: nothingToOffer + ": " + nothing.Reason}, true
	case err != nil:
		r.log.ErrorContext(ctx, "tool left out: its resolution failed", slog.String("tool", e.def.ID), slog.Any("error", err))
		return tool.Offered{}, &Block{ToolID: e.def.ID, Reason: NoBlock, Detail: "its resolution failed", Err: err}, true
	case !ok:
		return tool.Offered{}, &Block{ToolID: e.def.ID, Reason: NoBlock, Detail: nothingToOffer}, true
	}
	return o, nil, true
}

const nothingToOffer = "it has nothing to offer in this request"

// NothingToOfferError is what a tool's ResolveFunction returns instead of
// a nil function to say why it has nothing to offer in this request, e.g.
// which mailbox demands which level. The registry leaves the tool out as
// for a nil function and keeps the reason as the block's detail, so that
// whoever explains a request names what is in the way. The reason must
// hold no secret and no content from outside.
type NothingToOfferError struct {
	Reason string
}

func (e *NothingToOfferError) Error() string { return nothingToOffer + ": " + e.Reason }

// NothingToOffer returns a *NothingToOfferError with the reason.
func NothingToOffer(reason string) error { return &NothingToOfferError{Reason: reason} }

// errNotObject is logged when a tailored function's parameters are no
// JSON object.
var errNotObject = errors.New("the tailored parameters are no JSON object; the registered function is offered")

// resolve asks the tool for its function and then its instructions.
func (r *Registry) resolve(ctx context.Context, e *entry, req Request, c checked) (o tool.Offered, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			o, ok, err = tool.Offered{}, false, fmt.Errorf("registry: resolving tool %q panicked: %v", e.def.ID, p)
		}
	}()
	values := c.settings.Values()
	rc := tool.ResolveContext{
		Definition:         e.def,
		Settings:           values,
		Component:          req.Component,
		ProviderConfidence: req.Provider.Confidence,
		ProviderTrusted:    req.Provider.Trusted,
		Chat:               req.Chat,
	}
	if rc.Chat == nil {
		rc.Chat = emptyChat{}
	}
	fn, err := e.tool.ResolveFunction(ctx, rc)
	if err != nil {
		return tool.Offered{}, false, fmt.Errorf("registry: resolving the function of tool %q: %w", e.def.ID, err)
	}
	if fn == nil {
		return tool.Offered{}, false, nil
	}
	registered := e.def.Function
	offer := registered
	if bytes.Equal(fn.Parameters, registered.Parameters) {
		// Unchanged parameters need no second look.
		offer.Description = fn.Description
	} else if isJSONObject(fn.Parameters) {
		// Only description and parameters count; the model's calls find the
		// tool by its registered name.
		offer.Description, offer.Parameters = fn.Description, fn.Parameters
	} else {
		r.log.WarnContext(ctx, "tool resolution", slog.String("tool", e.def.ID), slog.Any("error", errNotObject))
	}
	instructions, err := e.tool.ResolveInstructions(ctx, rc)
	if err != nil {
		return tool.Offered{}, false, fmt.Errorf("registry: resolving the instructions of tool %q: %w", e.def.ID, err)
	}
	return tool.Offered{Definition: e.def, Function: offer, Instructions: instructions, Settings: values, Tool: e.tool}, true, nil
}

// emptyChat is the view of a chat in which nothing happened yet.
type emptyChat struct{}

func (emptyChat) IsWebAddressGiven(string) bool { return false }
func (emptyChat) OutboundRequirement() policy.OutboundRequirement {
	return policy.OutboundRequirement{}
}
func (emptyChat) RequiredConfidence() policy.Confidence { return policy.None }
