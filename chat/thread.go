package chat

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Role says who wrote a message.
type Role string

// The roles of messages. Tool calls and results are not messages: they live
// in the adapter's history for one request and in the traces.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Document is a file or page attached to a user message, with the text
// that was sent to the model.
type Document struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Trace records what one tool call did, never what it returned: results
// are not kept, so paging tools stay stateless.
type Trace struct {
	Order    int    `json:"order"`
	ToolID   string `json:"tool_id,omitempty"`
	ToolName string `json:"tool_name"`
	CallID   string `json:"call_id"`
	// Status is SUCCESS, ERROR or BLOCKED.
	Status        string `json:"status"`
	Executed      bool   `json:"executed,omitempty"`
	StatusMessage string `json:"status_message,omitempty"`
	// Arguments are the call's arguments with sensitive ones masked.
	Arguments string `json:"arguments,omitempty"`
}

// Message is one message of a thread.
type Message struct {
	Role Role   `json:"role"`
	Text string `json:"text"`
	// Documents are attached to a user message.
	Documents []Document `json:"documents,omitempty"`
	// Hidden messages reach the model but are not shown to the user.
	Hidden bool      `json:"hidden,omitempty"`
	Time   time.Time `json:"time"`
	// Traces are the tool calls behind an assistant message.
	Traces []Trace `json:"traces,omitempty"`
	// Sources are the "Sources used by tools" of an assistant message.
	Sources []tool.Source `json:"sources,omitempty"`
	// Incomplete marks an assistant message that was cut off: the stream
	// ended early, the request failed part-way or the user stopped it.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Thread is one chat: its messages and what it demands of every later
// request. The three requirements (provider confidence, data security and
// the outbound data restriction) only ever tighten. The thread also knows
// which web addresses were given to the model, for read_web_page's free
// address choice.
//
// The zero value is an empty thread ready to use; it must not be copied.
// Its methods are safe for concurrent use. The exported fields belong to
// whoever holds the thread; while a request runs, add messages through
// AddMessage only.
//
// A thread is stored through its JSON form. A store keeping the
// requirements in columns of its own restores them by calling the Require
// methods on a fresh thread: from the zero value each one sets its
// requirement exactly.
type Thread struct {
	ID           string
	Title        string
	SystemPrompt string
	Created      time.Time
	Updated      time.Time
	Messages     []Message

	mu                 sync.Mutex
	requiredConfidence policy.Confidence
	dataSecurity       policy.DataSecurity
	outbound           policy.OutboundRequirement
	dataSources        DataSourceOptions
	// lastSystemPrompt and toolAddresses live for the session only: after
	// a restart a chat knows fewer addresses, never more.
	lastSystemPrompt string
	toolAddresses    map[string]bool
}

var _ tool.ChatView = (*Thread)(nil)

// RequireConfidence raises the provider confidence the chat demands to c;
// a lower level changes nothing. A value between the defined levels counts
// as the next higher level.
func (t *Thread) RequireConfidence(c policy.Confidence) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requiredConfidence = policy.Max(t.requiredConfidence, levelAtLeast(c))
}

// levelAtLeast returns the lowest defined confidence level at or above c,
// so that an undefined value never weakens a requirement and the chat
// always stores a level it can write by name.
func levelAtLeast(c policy.Confidence) policy.Confidence {
	for _, l := range policy.Levels() {
		if l >= c {
			return l
		}
	}
	return policy.High
}

// RequiredConfidence is the provider confidence the chat demands: the
// highest any result reached.
func (t *Thread) RequiredConfidence() policy.Confidence {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.requiredConfidence
}

// RequireDataSecurity tightens the chat's data security: SELF_HOSTED
// sticks, ALLOW_ANY is taken over NOT_SPECIFIED, NOT_SPECIFIED changes
// nothing.
func (t *Thread) RequireDataSecurity(d policy.DataSecurity) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dataSecurity = policy.TightenDataSecurity(t.dataSecurity, d)
}

// DataSecurity is the data security the chat demands.
func (t *Thread) DataSecurity() policy.DataSecurity {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dataSecurity
}

// RequireOutbound tightens the chat's outbound data restriction: an unset
// requirement changes nothing, a stricter level replaces the current one
// together with its mailbox, and on a tie the first mailbox stays.
func (t *Thread) RequireOutbound(r policy.OutboundRequirement) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.outbound = t.outbound.Tighten(r)
}

// OutboundRequirement is the chat's outbound data restriction with the
// mailbox which demanded it.
func (t *Thread) OutboundRequirement() policy.OutboundRequirement {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.outbound
}

// SetLastSystemPrompt records the system prompt the last request was sent
// with, in full (template, retrieved data and tool instructions included).
// Addresses in it count as given to the model until the next request
// replaces it.
func (t *Thread) SetLastSystemPrompt(prompt string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastSystemPrompt = prompt
}

// AddToolAddresses adds the request keys of web addresses a tool result
// gave the model (see ReturnedAddresses) to the session's ledger. An
// address which is not a key yet is turned into one; anything that is not
// an http or https address is ignored. The ledger is never persisted.
func (t *Thread) AddToolAddresses(keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		key, ok := RequestKey(k)
		if !ok {
			continue
		}
		if t.toolAddresses == nil {
			t.toolAddresses = map[string]bool{}
		}
		t.toolAddresses[key] = true
	}
}

// AddMessage appends m and moves Updated forward to its time.
func (t *Thread) AddMessage(m Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Messages = append(t.Messages, m)
	if m.Time.After(t.Updated) {
		t.Updated = m.Time
	}
}

// History returns a copy of the messages.
func (t *Thread) History() []Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Message(nil), t.Messages...)
}

// IsWebAddressGiven reports whether rawURL was given to the model: whether
// an address asking the server for the same thing (see RequestKey) stands
// in the system prompt of the last request, in a user message, hidden ones
// included, or a document attached to one, or in a tool result of this
// session. What the model wrote itself never counts, its earlier answers
// included.
func (t *Thread) IsWebAddressGiven(rawURL string) bool {
	key, ok := RequestKey(rawURL)
	if !ok {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.toolAddresses[key] {
		return true
	}
	if textGives(t.lastSystemPrompt, key) {
		return true
	}
	for _, m := range t.Messages {
		if m.Role != RoleUser {
			continue
		}
		if textGives(m.Text, key) {
			return true
		}
		for _, d := range m.Documents {
			if textGives(d.Text, key) {
				return true
			}
		}
	}
	return false
}

// textGives reports whether an address in text has the request key key.
func textGives(text, key string) bool {
	for _, a := range FindWebAddresses(text) {
		if k, ok := RequestKey(a); ok && k == key {
			return true
		}
	}
	return false
}

// threadJSON is the stored form of a thread. The session's address ledger
// and the last system prompt are not part of it.
type threadJSON struct {
	ID                 string        `json:"id"`
	Title              string        `json:"title"`
	SystemPrompt       string        `json:"system_prompt,omitempty"`
	Created            time.Time     `json:"created_at"`
	Updated            time.Time     `json:"updated_at"`
	RequiredConfidence string        `json:"required_confidence"`
	DataSecurity       string        `json:"data_security"`
	Outbound           *outboundJSON `json:"outbound,omitempty"`
	// DataSources are the chat's data-source options, absent while it
	// follows the defaults.
	DataSources *DataSourceOptions `json:"data_sources,omitempty"`
	Messages    []Message          `json:"messages"`
}

type outboundJSON struct {
	Restriction string `json:"restriction"`
	MailboxID   string `json:"mailbox_id,omitempty"`
	MailboxName string `json:"mailbox_name,omitempty"`
}

// MarshalJSON writes the thread with its requirements by name. The
// session's address ledger is left out on purpose.
func (t *Thread) MarshalJSON() ([]byte, error) {
	t.mu.Lock()
	j := threadJSON{
		ID:                 t.ID,
		Title:              t.Title,
		SystemPrompt:       t.SystemPrompt,
		Created:            t.Created,
		Updated:            t.Updated,
		RequiredConfidence: t.requiredConfidence.String(),
		DataSecurity:       t.dataSecurity.String(),
		Messages:           append([]Message(nil), t.Messages...),
	}
	if t.dataSources.Set {
		o := t.dataSources
		j.DataSources = &o
	}
	if t.outbound.Set {
		j.Outbound = &outboundJSON{
			Restriction: t.outbound.Restriction.Normalize().String(),
			MailboxID:   t.outbound.MailboxID,
			MailboxName: t.outbound.MailboxName,
		}
	}
	t.mu.Unlock()
	if j.Messages == nil {
		j.Messages = []Message{}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a stored thread. Its fields replace the thread's;
// its requirements tighten those the thread already has, so reading into a
// thread never loosens it. A requirement that cannot be read counts as the
// strictest level (HIGH, SELF_HOSTED, ONLY_CONFIGURED_SERVICES) rather than
// failing the load: losing a chat would cost the user their work, and
// guessing a looser level would let its data go where it must not. A
// missing requirement, as in old chats, demands nothing.
func (t *Thread) UnmarshalJSON(data []byte) error {
	var j threadJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("reading a chat thread: %w", err)
	}
	conf := policy.None
	if j.RequiredConfidence != "" {
		c, err := policy.ParseConfidence(j.RequiredConfidence)
		if err != nil {
			c = policy.High
		}
		conf = c
	}
	ds, err := policy.ParseDataSecurity(j.DataSecurity)
	if err != nil {
		ds = policy.SelfHosted
	}
	var out policy.OutboundRequirement
	if j.Outbound != nil {
		// ParseRestriction returns the strictest level for an unreadable
		// value.
		r, _ := policy.ParseRestriction(j.Outbound.Restriction)
		out = policy.OutboundRequirement{Set: true, Restriction: r, MailboxID: j.Outbound.MailboxID, MailboxName: j.Outbound.MailboxName}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ID, t.Title, t.SystemPrompt = j.ID, j.Title, j.SystemPrompt
	t.Created, t.Updated = j.Created, j.Updated
	t.Messages = j.Messages
	t.requiredConfidence = policy.Max(t.requiredConfidence, conf)
	t.dataSecurity = policy.TightenDataSecurity(t.dataSecurity, ds)
	t.outbound = t.outbound.Tighten(out)
	if j.DataSources != nil {
		t.dataSources = *j.DataSources
		t.dataSources.Set = true
	}
	return nil
}
