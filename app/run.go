package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/llm/tokens"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/store"
	"github.com/stewardhq/steward/tool"
)

// DefaultSystemPrompt is the system prompt of a new chat.
const DefaultSystemPrompt = "You are a helpful assistant. Answer in the language of the user. When tools are available, use them when the question calls for current, local or private information, and say which sources you used."

// Turn is one user message to answer.
type Turn struct {
	Text      string
	Documents []chat.Document
	// Selected are tool or collection IDs; nil uses the user's selection.
	Selected []string
	// NoTools sends the request without tools.
	NoTools bool
	// OnOffer, when not nil, hears which tools are offered and which are
	// not (with the reason), before the request is sent.
	OnOffer func(offered []tool.Offered, blocked []registry.Block)
}

// TurnResult is what answering a turn came to.
type TurnResult struct {
	loop.Result
	Offered []tool.Offered
	Blocked []registry.Block
	// Retrieval says how the chat's data sources were searched; nil when
	// the chat searches none.
	Retrieval *Retrieval
}

// NewThread starts a chat.
func NewThread() *chat.Thread {
	t := &chat.Thread{ID: newID(), SystemPrompt: DefaultSystemPrompt, Created: time.Now().UTC()}
	t.Updated = t.Created
	return t
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// CheckProviderAllowed refuses a provider the chat may no longer use: the
// chat's requirements only ever tighten, so a chat which read data for a
// HIGH-confidence provider never goes to a lower one again.
func CheckProviderAllowed(t *chat.Thread, p *ResolvedProvider) error {
	if req := t.RequiredConfidence(); !policy.Allows(p.Confidence, req) {
		return fmt.Errorf("this chat contains data that may only go to providers with confidence %s or higher; %s has %s under the organization's scheme: choose another provider or start a new chat", req, p.Title, p.Confidence)
	}
	if t.DataSecurity() == policy.SelfHosted && !p.Trusted {
		return fmt.Errorf("this chat contains data that may only go to self-hosted providers; %s is not one: choose a self-hosted provider or start a new chat", p.Title)
	}
	return nil
}

// Answer adds the user's turn to the thread, runs the loop against the
// provider and adds the answer. Events reach sink as they happen.
func (a *App) Answer(ctx context.Context, t *chat.Thread, p *ResolvedProvider, turn Turn, sink loop.Sink) (*TurnResult, error) {
	if err := CheckProviderAllowed(t, p); err != nil {
		return nil, err
	}
	if err := CheckKey(p); err != nil {
		return nil, err
	}
	t.AddMessage(chat.Message{Role: chat.RoleUser, Text: turn.Text, Documents: turn.Documents, Time: time.Now().UTC()})
	if t.Title == "" {
		t.Title = titleFrom(turn.Text)
	}
	res := &TurnResult{}
	if !turn.NoTools {
		res.Offered, res.Blocked = a.Registry.Runnable(ctx, a.RunnableRequest(t, p, turn.Selected))
	}
	// What the filter removed from an attachment is told first, then what
	// it removed from the passages of the classic process, then after each
	// tool call what it removed from that call's content. The turn's
	// filtering is collected apart from the App's shared list, so that
	// turns running at once (steward serve) hear only of their own. A
	// surface that collects for the turn itself did its own attachments.
	fs := filterSink{a: a, next: sink, col: guard.CollectorFrom(ctx)}
	if fs.col == nil {
		fs.drainShared()
		fs.col = &guard.Collector{}
		ctx = guard.WithCollector(ctx, fs.col)
	}
	sink = fs
	base := t.SystemPrompt
	res.Retrieval = a.retrieve(ctx, t, p, turn, res.Offered)
	fs.drain()
	var passageSources []tool.Source
	if c := res.Retrieval.classic(); c != nil {
		if c.System != "" {
			base = strings.TrimSpace(base) + "\n\n" + c.System
		}
		// The passages reach the model with this request: the chat demands
		// what their sources demand, and only theirs.
		conf, sec := c.Assembly.Requirements()
		t.RequireConfidence(conf)
		t.RequireDataSecurity(sec)
		passageSources = c.Assembly.Sources
		if !turn.NoTools && (conf > policy.None || sec != policy.NotSpecified) {
			// What the passages demand may keep a tool from this provider:
			// the request offers what the registry allows for the chat now.
			res.Offered, res.Blocked = a.Registry.Runnable(ctx, a.RunnableRequest(t, p, turn.Selected))
		}
	}
	if turn.OnOffer != nil {
		turn.OnOffer(res.Offered, res.Blocked)
	}
	system := a.withInstructions(base, res.Offered)
	t.SetLastSystemPrompt(system)
	req := llm.Request{Model: p.Model, System: system, Extra: p.Extra, Tools: loop.ToolSpecs(res.Offered)}
	for _, m := range t.History() {
		text := m.Text
		if m.Role == chat.RoleUser {
			text = withDocuments(m)
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.Role(m.Role), Text: text})
	}
	client, err := a.providerClient(p.SchemeName, p.BaseURL)
	if err != nil {
		return nil, err
	}
	adapter, err := newAdapter(p.Provider, req, &llm.Transport{Client: client, OnRetry: a.onRetry})
	if err != nil {
		return nil, err
	}
	var reoffer loop.OfferFunc
	if !turn.NoTools {
		// When a result tightens the chat (a mail read from a mailbox that
		// restricts where the chat may send data, say), the next round
		// offers what the registry decides for the chat as it is now.
		reoffer = func(ctx context.Context) (loop.Offer, error) {
			offered, _ := a.Registry.Runnable(ctx, a.RunnableRequest(t, p, turn.Selected))
			if err := ctx.Err(); err != nil {
				return loop.Offer{}, err
			}
			system := a.withInstructions(base, offered)
			t.SetLastSystemPrompt(system)
			return loop.Offer{Tools: offered, System: system}, nil
		}
	}
	result, runErr := loop.New(loop.Options{}).Run(ctx, adapter, loop.RunContext{
		Tools:              res.Offered,
		Reoffer:            reoffer,
		Chat:               t,
		ProviderConfidence: p.Confidence,
		ProviderTrusted:    p.Trusted,
		ProviderName:       p.Title,
		DataSourceSources:  passageSources,
		ReturnedAddresses:  chat.ReturnedAddresses,
		FilterError:        a.FilterToolError,
		Mailboxes:          a.mailboxName,
		Logger:             a.Logger,
	}, sink)
	res.Result = result
	// The answer is stored even when the run failed part-way, so that what
	// the user saw is not lost; a failure without any text adds nothing.
	if strings.TrimSpace(result.Text) != "" || len(result.Traces) > 0 {
		// An answer that did not end as the model meant it to is kept as
		// what arrived, and marked so.
		msg := chat.Message{Role: chat.RoleAssistant, Text: result.Text, Time: time.Now().UTC(), Incomplete: runErr != nil}
		for _, tr := range result.Traces {
			msg.Traces = append(msg.Traces, tr.Stored())
		}
		for _, s := range loop.LocalSources(result.Sources) {
			msg.Sources = append(msg.Sources, tool.Source{Title: s.Title, URL: s.URL})
		}
		t.AddMessage(msg)
	}
	return res, runErr
}

// FilterToolError runs the error text of a failed call through the
// prompt-injection filter: it may quote what a server sent. Every
// surface that runs tools passes it as loop.RunContext.FilterError (a
// chat, `steward mcp serve`), so an error text reaches a model the same
// way wherever the call ran.
func (a *App) FilterToolError(ctx context.Context, toolID, text string) string {
	src := guard.Source{Kind: guard.WebContent, Label: "the error of " + toolID}
	return a.Filter().FilterText(ctx, src, text).Text
}

// withInstructions is the system prompt base (the chat's own, with what the
// classic retrieval added) followed by the instructions of the offered
// tools.
func (a *App) withInstructions(base string, offered []tool.Offered) string {
	system := base
	if instr := a.Registry.Instructions(offered); instr != "" {
		system = strings.TrimSpace(system) + "\n\n" + instr
	}
	return system
}

// filterSink passes the loop's events on and, after each trace, an
// EventFilter for what the filter reported during that call.
type filterSink struct {
	a    *App
	next loop.Sink
	// col collects what the filter did during the turn.
	col *guard.Collector
}

func (f filterSink) Emit(e loop.Event) {
	if f.next == nil {
		return
	}
	f.next.Emit(e)
	if e.Type == loop.EventTrace {
		f.drain()
	}
}

// drain emits what the turn's filtering reported since the last drain.
func (f filterSink) drain() {
	if f.next == nil || f.col == nil {
		return
	}
	if r, ok := f.col.Take(); ok {
		if ev, ok := FilterEvent(r); ok {
			f.next.Emit(ev)
		}
	}
}

// drainShared emits what the App's shared list holds: the attachments a
// command read before the turn.
func (f filterSink) drainShared() {
	if f.next == nil {
		return
	}
	for _, r := range f.a.TakeFilterReports() {
		if ev, ok := FilterEvent(r); ok {
			f.next.Emit(ev)
		}
	}
}

// FilterEvent turns a filter report into an EventFilter; ok is false when
// the report holds neither findings nor a warning.
func FilterEvent(r guard.Report) (loop.Event, bool) {
	fr := &loop.FilterReport{Sources: []loop.FilteredSource{}, Warning: r.Warning}
	for _, s := range r.Sources {
		fs := loop.FilteredSource{Kind: s.Source.Kind.String(), Label: s.Source.Label, Fields: append([]string{}, s.Fields...), Findings: []loop.FilterFinding{}}
		for _, fd := range s.Findings {
			fs.Findings = append(fs.Findings, loop.FilterFinding{Rule: fd.Rule, Category: string(fd.Category)})
		}
		if len(fs.Findings) > 0 {
			fr.Sources = append(fr.Sources, fs)
		}
	}
	if len(fr.Sources) == 0 && fr.Warning == "" {
		return loop.Event{}, false
	}
	return loop.Event{Type: loop.EventFilter, Filter: fr}, true
}

func (a *App) mailboxName(id string) (string, bool) {
	if server, ok := strings.CutPrefix(id, policy.MCPServerSourcePrefix); ok {
		return a.mcpServerName(server)
	}
	for _, m := range a.Org.Mailboxes {
		if m.ID == id {
			return m.Name, true
		}
	}
	for _, m := range a.User.Mailboxes {
		if m.ID == id {
			return m.Name, true
		}
	}
	return "", false
}

func (a *App) registryProvider(p *ResolvedProvider) registry.Provider {
	return registry.Provider{Confidence: p.Confidence, CanUseTools: p.Caps.ToolCalling, Trusted: p.Trusted}
}

// RegistryProvider is what the registry needs to know of p.
func (a *App) RegistryProvider(p *ResolvedProvider) registry.Provider { return a.registryProvider(p) }

// CountToolTokens counts what the offered tools and their instructions add
// to a request.
func (a *App) CountToolTokens(model string, offered []tool.Offered) (int, error) {
	return tokens.CountTools(model, loop.ToolSpecs(offered), a.Registry.Instructions(offered))
}

func withDocuments(m chat.Message) string {
	if len(m.Documents) == 0 {
		return m.Text
	}
	var b strings.Builder
	b.WriteString(m.Text)
	for _, d := range m.Documents {
		fmt.Fprintf(&b, "\n\nAttached document: %s\n````\n%s\n````", d.Name, d.Text)
	}
	return b.String()
}

func titleFrom(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// ToStored converts a thread for the store.
func ToStored(t *chat.Thread, p *ResolvedProvider) *store.Chat {
	c := &store.Chat{ID: t.ID, Title: t.Title, SystemPrompt: t.SystemPrompt, Created: t.Created,
		RequiredConfidence: t.RequiredConfidence(), DataSecurity: t.DataSecurity(), Outbound: t.OutboundRequirement()}
	if o := t.DataSources(); o.Set {
		c.DataSources = &store.DataSourceOptions{Disabled: o.Disabled, Automatic: o.Automatic, Selected: o.Selected, Retrieval: o.Retrieval}
	}
	if p != nil {
		c.Provider, c.Model, c.BaseURL = p.ID, p.Model, p.BaseURL
		if c.Provider == "" {
			c.Provider = p.Kind
		}
	}
	for _, m := range t.History() {
		sm := store.Message{Role: string(m.Role), Text: m.Text, Hidden: m.Hidden, Created: m.Time, Incomplete: m.Incomplete}
		for _, d := range m.Documents {
			sm.Documents = append(sm.Documents, store.Document{Name: d.Name, Text: d.Text})
		}
		for _, tr := range m.Traces {
			sm.Traces = append(sm.Traces, store.Trace{Order: tr.Order, ToolID: tr.ToolID, ToolName: tr.ToolName, CallID: tr.CallID, Status: tr.Status, StatusMessage: tr.StatusMessage, Arguments: tr.Arguments})
		}
		for _, s := range m.Sources {
			sm.Sources = append(sm.Sources, store.Source{Title: s.Title, URL: s.URL})
		}
		c.Messages = append(c.Messages, sm)
	}
	return c
}

// FromStored rebuilds a thread with exactly the requirements it had.
func FromStored(c *store.Chat) *chat.Thread {
	t := &chat.Thread{ID: c.ID, Title: c.Title, SystemPrompt: c.SystemPrompt, Created: c.Created, Updated: c.Updated}
	t.RequireConfidence(c.RequiredConfidence)
	t.RequireDataSecurity(c.DataSecurity)
	t.RequireOutbound(c.Outbound)
	if o := c.DataSources; o != nil {
		t.SetDataSources(chat.DataSourceOptions{Set: true, Disabled: o.Disabled, Automatic: o.Automatic, Selected: o.Selected, Retrieval: o.Retrieval})
	}
	for _, m := range c.Messages {
		cm := chat.Message{Role: chat.Role(m.Role), Text: m.Text, Hidden: m.Hidden, Time: m.Created, Incomplete: m.Incomplete}
		for _, d := range m.Documents {
			cm.Documents = append(cm.Documents, chat.Document{Name: d.Name, Text: d.Text})
		}
		for _, tr := range m.Traces {
			cm.Traces = append(cm.Traces, chat.Trace{Order: tr.Order, ToolID: tr.ToolID, ToolName: tr.ToolName, CallID: tr.CallID, Status: tr.Status, StatusMessage: tr.StatusMessage, Arguments: tr.Arguments})
		}
		for _, s := range m.Sources {
			cm.Sources = append(cm.Sources, tool.Source{Title: s.Title, URL: s.URL})
		}
		t.Messages = append(t.Messages, cm)
	}
	return t
}

// RunnableRequest is the registry request a chat turn would make.
func (a *App) RunnableRequest(t *chat.Thread, p *ResolvedProvider, selected []string) registry.Request {
	if selected == nil {
		selected = a.User.SelectedTools
	}
	return registry.Request{Component: registry.ComponentChat, Selected: selected, MayRunTools: true, Provider: a.registryProvider(p), Chat: t}
}
