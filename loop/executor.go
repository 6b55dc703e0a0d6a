package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"unicode/utf8"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/internal/textcut"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Chat is what the loop and the executor need of the chat a run belongs to.
// *chat.Thread satisfies it. Its methods must be safe for concurrent use.
type Chat interface {
	tool.ChatView
	// RequireConfidence raises the provider confidence the chat demands.
	RequireConfidence(c policy.Confidence)
	// RequireDataSecurity tightens the chat's data security.
	RequireDataSecurity(d policy.DataSecurity)
	// DataSecurity is the data security the chat demands.
	DataSecurity() policy.DataSecurity
	// RequireOutbound tightens the chat's outbound data restriction.
	RequireOutbound(r policy.OutboundRequirement)
	// AddToolAddresses adds request keys of web addresses a tool returned to
	// the session's ledger of addresses given to the model.
	AddToolAddresses(keys ...string)
}

var _ Chat = (*chat.Thread)(nil)

// MailboxLookup returns the current display name of a mailbox, and false when
// the mailbox has been removed.
type MailboxLookup func(id string) (name string, ok bool)

// AddressFinder returns the request keys of the web addresses in a tool
// result's content, minus those that also appear in the call's argument
// values. chat.ReturnedAddresses is the one to use.
type AddressFinder func(content string, args json.RawMessage) []string

// Offer is what a round offers the model: the tools as the registry
// resolved them, and the effective system prompt with their instructions.
type Offer struct {
	Tools  []tool.Offered
	System string
}

// OfferFunc returns what a round offers for the chat as it is now, with
// its current requirements. The app builds it from the registry; the loop
// knows no tool and no registry.
type OfferFunc func(ctx context.Context) (Offer, error)

// ErrorFilter filters the error text of a call of the tool toolID and
// returns what the model may read.
type ErrorFilter func(ctx context.Context, toolID, text string) string

// RunContext is what a run needs besides the adapter.
type RunContext struct {
	// Tools are the tools offered in this request, as the registry resolved
	// them. Calls are looked up here by exact function name.
	Tools []tool.Offered
	// Reoffer, when set, is asked before the next round whenever the chat's
	// requirements (confidence, data security, outbound data restriction)
	// tightened during the run. From then on the rounds offer its tools and
	// system prompt instead of the adapter's own, and calls are looked up
	// among its tools, so the model is never offered what would be refused.
	// The executor still checks each call. Nil keeps the first offer.
	Reoffer OfferFunc
	// Withdrawn are the tools an earlier round of this run offered and the
	// current offer no longer does; the loop fills it. A call of one is
	// BLOCKED with the reason (the outbound restriction and who demanded
	// it, or the confidence or data security the chat now requires).
	Withdrawn []tool.Offered
	// Chat is the chat the run belongs to; required.
	Chat Chat
	// ProviderConfidence is the confidence of the provider asked.
	ProviderConfidence policy.Confidence
	// ProviderTrusted is true when the organization lists the provider as
	// trusted for data-source security.
	ProviderTrusted bool
	// ProviderName names the provider in messages to the user.
	ProviderName string
	// Mailboxes looks up the mailbox named by the chat's outbound
	// requirement; nil uses the name stored with the requirement.
	Mailboxes MailboxLookup
	// DataSourceSources are the sources of the passages the classic
	// retrieval process put into this request's system prompt; the answer
	// lists them under DataSourcesHeading.
	DataSourceSources []tool.Source
	// ReturnedAddresses finds the web addresses a result gives the model;
	// nil means chat.ReturnedAddresses.
	ReturnedAddresses AddressFinder
	// FilterError filters the text of a failed call for prompt injections
	// before the model sees it (the app passes guard.Filter's); the text is
	// already cut to MaxErrorChars. An error message carries what a server
	// sent as often as what the tool wrote. Nil passes the cut text
	// unfiltered. A policy block's message (tool.Blocked) is the tool's own
	// refusal, returned as written and only cut: a tool that quotes
	// outside text in one filters it itself, as any content it returns.
	FilterError ErrorFilter
	// Logger receives diagnostics; nil discards them. Argument values and
	// tool results are never logged.
	Logger *slog.Logger
}

func (rc *RunContext) logger() *slog.Logger {
	if rc.Logger != nil {
		return rc.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Outcome is what one executed call came to.
type Outcome struct {
	// Content is what the model receives as the call's result.
	Content string
	// Trace records the call for the user.
	Trace Trace
	// Sources are the result's sources; none for blocked and failed calls.
	Sources []tool.Source
	// ReturnedAddresses are the request keys the result added to the chat's
	// ledger.
	ReturnedAddresses []string
}

// IsError reports whether the call is answered as an error: every status
// but SUCCESS, so a blocked call counts as one.
func (o Outcome) IsError() bool { return o.Trace.Status != StatusSuccess }

// The texts the executor answers with.
const (
	notAvailableStatus = "Tool is not available in the current context."
	failedPrefix       = "Tool execution failed: "
	panicMessage       = "the tool stopped with an internal error"
)

// MaxErrorChars is the longest error text of a failed or blocked call the
// model reads, in characters; the rest is cut off with "…".
const MaxErrorChars = 1000

// Execute runs one valid call: it looks the tool up by exact function name
// among rc.Tools, re-checks the chat's current outbound data restriction,
// runs the tool and turns what happened into an Outcome. On success it
// applies the result's requirements to rc.Chat and adds the returned web
// addresses to its ledger; blocked and failed calls demand nothing.
//
// A policy block (tool.BlockedError) and an unknown tool give a BLOCKED
// trace with the message as content; any other failure, a panic included,
// gives an ERROR trace with "Tool execution failed: …" and the details go to
// the log. The only error returned is the context's, when ctx was cancelled
// while the tool ran: cancellation propagates.
func Execute(ctx context.Context, call llm.Call, order int, rc RunContext) (Outcome, error) {
	log := rc.logger()
	off, found := findTool(rc.Tools, call.Name)
	var sensitive []string
	if found && off.Tool != nil {
		sensitive = off.Tool.SensitiveArguments()
	}
	tr := Trace{
		Order:     order,
		Name:      call.Name,
		CallID:    call.ID,
		Arguments: MaskArguments(call.Arguments, sensitive),
	}
	if tr.Arguments == nil && len(call.Arguments) > 0 {
		log.Warn("tool call arguments are not a JSON object; the trace shows none",
			"tool", call.Name, "call_id", call.ID)
	}
	if gone, was := findTool(rc.Withdrawn, call.Name); !found && was && gone.Tool != nil {
		content := withdrawnRefusal(rc, gone)
		tr.ToolID = gone.Definition.ID
		tr.Status, tr.StatusMessage, tr.Result = StatusBlocked, content, content
		log.Info("call of a tool withdrawn after the chat's requirements tightened", "tool", tr.ToolID, "call_id", call.ID)
		return Outcome{Content: content, Trace: tr}, nil
	}
	if !found || off.Tool == nil {
		content := fmt.Sprintf("Tool '%s' is not available.", call.Name)
		tr.Status, tr.StatusMessage, tr.Result = StatusBlocked, notAvailableStatus, content
		return Outcome{Content: content, Trace: tr}, nil
	}
	tr.ToolID = off.Definition.ID

	req := rc.Chat.OutboundRequirement()
	if !policy.OutboundAllowed(req.Effective(), off.Tool.OutboundData(), off.Tool.EnforcesOutboundRestriction()) {
		content := outboundRefusal(req, rc.Mailboxes)
		tr.Status, tr.StatusMessage, tr.Result = StatusBlocked, content, content
		log.Info("tool call blocked by the chat's outbound data restriction",
			"tool", tr.ToolID, "call_id", call.ID, "restriction", req.Effective().String())
		return Outcome{Content: content, Trace: tr}, nil
	}

	ec := tool.ExecContext{
		Definition:         off.Definition,
		CallID:             call.ID,
		Settings:           off.Settings,
		ProviderConfidence: rc.ProviderConfidence,
		ProviderTrusted:    rc.ProviderTrusted,
		Chat:               rc.Chat,
	}
	tr.Executed = true
	res, err := runTool(ctx, off.Tool, call.Arguments, ec)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{Trace: tr}, ctx.Err()
		}
		if b, ok := tool.IsBlocked(err); ok {
			// A policy block is the tool's own words, telling the model
			// what it may do instead; the filter would take that for an
			// instruction planted by someone else. It is cut, not filtered.
			msg := CutErrorText(b.Message)
			tr.Status, tr.StatusMessage, tr.Result = StatusBlocked, msg, msg
			return Outcome{Content: msg, Trace: tr}, nil
		}
		var p *panicError
		msg := err.Error()
		if asPanic(err, &p) {
			log.Error("tool panicked", "tool", tr.ToolID, "call_id", call.ID, "stack", p.stack)
			msg = panicMessage
		} else {
			// The message may quote a server (a header line, a content
			// type): the log names its kind and size, never its text.
			log.Warn("tool execution failed", "tool", tr.ToolID, "call_id", call.ID, "error_type", fmt.Sprintf("%T", err), "error_chars", utf8.RuneCountInString(msg))
			msg = rc.errorText(ctx, tr.ToolID, msg)
		}
		content := failedPrefix + msg
		tr.Status, tr.StatusMessage, tr.Result = StatusError, content, content
		return Outcome{Content: content, Trace: tr}, nil
	}

	content := res.ModelContent()
	rc.Chat.RequireConfidence(res.RequiredConfidence)
	rc.Chat.RequireDataSecurity(res.RequiredDataSecurity)
	rc.Chat.RequireOutbound(res.RequiredOutbound)
	find := rc.ReturnedAddresses
	if find == nil {
		find = chat.ReturnedAddresses
	}
	addrs := find(content, call.Arguments)
	if len(addrs) > 0 {
		rc.Chat.AddToolAddresses(addrs...)
	}
	tr.Status, tr.Result = StatusSuccess, content
	return Outcome{Content: content, Trace: tr, Sources: res.Sources, ReturnedAddresses: addrs}, nil
}

// errorText cuts an error text to MaxErrorChars, makes it one readable
// line (control characters become spaces) and filters it.
func (rc *RunContext) errorText(ctx context.Context, toolID, text string) string {
	text = CutErrorText(text)
	if rc.FilterError != nil {
		text = rc.FilterError(ctx, toolID, text)
	}
	return text
}

// CutErrorText returns text with control characters other than newline and
// tab replaced by spaces and, when longer than MaxErrorChars characters,
// cut there with "…", never inside a UTF-8 sequence.
func CutErrorText(text string) string { return textcut.Readable(text, MaxErrorChars, true) }

func findTool(tools []tool.Offered, name string) (tool.Offered, bool) {
	for _, t := range tools {
		if t.Function.Name == name {
			return t, true
		}
	}
	return tool.Offered{}, false
}

// panicError carries a recovered panic's stack to the log. The panic value
// itself is not kept: it may hold what the tool was working on.
type panicError struct {
	stack string
}

func (e *panicError) Error() string { return panicMessage }

func asPanic(err error, p **panicError) bool {
	pe, ok := err.(*panicError)
	if ok {
		*p = pe
	}
	return ok
}

func runTool(ctx context.Context, t tool.Tool, args json.RawMessage, ec tool.ExecContext) (res tool.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = tool.Result{}, &panicError{stack: string(debug.Stack())}
		}
	}()
	return t.Execute(ctx, args, ec)
}

// outboundRefusal says why a tool may not run in a chat that read mails
// or used a tool of an MCP server, naming the mailbox or server and the
// restriction level it demanded.
// withdrawnRefusal says why a tool offered earlier in the run may no
// longer run: where the chat may send data, or what it now demands of the
// provider.
func withdrawnRefusal(rc RunContext, t tool.Offered) string {
	req := rc.Chat.OutboundRequirement()
	if !policy.OutboundAllowed(req.Effective(), t.Tool.OutboundData(), t.Tool.EnforcesOutboundRestriction()) {
		return outboundRefusal(req, rc.Mailboxes)
	}
	if need := rc.Chat.RequiredConfidence(); rc.ProviderConfidence < need {
		return fmt.Sprintf("This chat now holds content that may only go to providers with confidence %s or higher, and the current provider has %s. "+
			"The tool '%s' can no longer be used in this chat.", need, rc.ProviderConfidence, t.Function.Name)
	}
	if rc.Chat.DataSecurity() == policy.SelfHosted && !rc.ProviderTrusted {
		return fmt.Sprintf("This chat now holds content that may only be used with self-hosted providers. The tool '%s' can no longer be used in this chat.", t.Function.Name)
	}
	return fmt.Sprintf("The tool '%s' is no longer offered in this chat: what the chat read since changed what may run.", t.Function.Name)
}

func outboundRefusal(req policy.OutboundRequirement, lookup MailboxLookup) string {
	level := RestrictionLabel(req.Effective())
	name, exists := req.MailboxName, req.MailboxID != "" || req.MailboxName != ""
	if lookup != nil && req.MailboxID != "" {
		name, exists = lookup(req.MailboxID)
	}
	if _, isServer := req.MCPServer(); isServer {
		if !exists || name == "" {
			return fmt.Sprintf("This chat has used a tool of an MCP server that has since been removed, which demanded '%s'. "+
				"This tool would send data further than that allows, so it cannot be used in this chat. Start a new chat to use it again.", level)
		}
		return fmt.Sprintf("This chat has used a tool of the MCP server '%s', which demands '%s' once its content reached the model. "+
			"This tool would send data further than that allows, so it cannot be used in this chat. Start a new chat to use it again.", name, level)
	}
	const setting = "Where a chat may send data after reading mails"
	if !exists || name == "" {
		return fmt.Sprintf("This chat has read mails from a mailbox that has since been removed, while its setting '%s' was '%s'. "+
			"This tool would send data further than that allows, so it cannot be used in this chat. Start a new chat to use it again.",
			setting, level)
	}
	return fmt.Sprintf("This chat has read mails from the mailbox '%s' while its setting '%s' was '%s'. "+
		"This tool would send data further than that allows, so it cannot be used in this chat. Start a new chat to use it again.",
		name, setting, level)
}

// RestrictionLabel is the user-facing name of an outbound data restriction.
func RestrictionLabel(r policy.Restriction) string {
	switch r.Normalize() {
	case policy.Unrestricted:
		return "Unrestricted"
	case policy.OnlyLinksFromChat:
		return "Only links from the chat"
	default:
		return "Only configured services"
	}
}
