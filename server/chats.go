package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/store"
)

// chatState is a chat the server has loaded, with what the page chose for
// it. The thread's own methods are safe for concurrent use; the fields
// here are guarded by mu. While a turn runs, only the turn's goroutine
// writes the thread.
type chatState struct {
	thread *chat.Thread

	mu       sync.Mutex
	title    string
	provider string
	model    string
	// tools is the chat's tool selection; nil uses the user's saved one.
	tools   []string
	running *turn
	// filters holds, per assistant message index, what the filter reported
	// during the turn that wrote it. Kept for the server's life only, like
	// the tool results they describe.
	filters map[int][]loop.FilterReport
}

func newChatState(t *chat.Thread) *chatState {
	return &chatState{thread: t, title: t.Title, filters: map[int][]loop.FilterReport{}}
}

// chatOr404 finds a chat by its full ID, loading it from the store once.
func (s *Server) chatOr404(w http.ResponseWriter, r *http.Request, id string) (*chatState, bool) {
	cs, err := s.chat(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no_chat", "there is no chat with the ID "+id)
		return nil, false
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "store", err.Error())
		return nil, false
	}
	return cs, true
}

func (s *Server) chat(ctx context.Context, id string) (*chatState, error) {
	s.mu.Lock()
	cs := s.chats[id]
	s.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	c, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	// A prefix finds a chat in the store; the server names chats by their
	// full ID only, so two addresses never mean one chat.
	if c.ID != id {
		return nil, store.ErrNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs := s.chats[id]; cs != nil {
		return cs, nil
	}
	cs = newChatState(app.FromStored(c))
	cs.provider, cs.model = c.Provider, c.Model
	s.chats[id] = cs
	return cs, nil
}

// save stores the chat with the provider it last used. While a turn runs
// only the turn itself saves (byTurn): it owns the thread until it ends,
// and stores the chat then.
func (s *Server) save(ctx context.Context, cs *chatState, byTurn bool) error {
	cs.mu.Lock()
	if cs.running != nil && !byTurn {
		cs.mu.Unlock()
		return nil
	}
	cs.thread.Title = cs.title
	c := app.ToStored(cs.thread, nil)
	c.Provider, c.Model = cs.provider, cs.model
	cs.mu.Unlock()
	return s.store.Save(context.WithoutCancel(ctx), c)
}

// chatView is a chat as the API shows it.
type chatView struct {
	ID                 string        `json:"id"`
	Title              string        `json:"title"`
	Created            time.Time     `json:"created_at"`
	Updated            time.Time     `json:"updated_at"`
	Provider           string        `json:"provider"`
	Model              string        `json:"model"`
	Tools              []string      `json:"tools"`
	RequiredConfidence string        `json:"required_confidence"`
	DataSecurity       string        `json:"data_security"`
	Outbound           *outboundView `json:"outbound"`
	Running            bool          `json:"running"`
	Messages           []messageView `json:"messages"`
}

type outboundView struct {
	Restriction string `json:"restriction"`
	MailboxID   string `json:"mailbox_id"`
	MailboxName string `json:"mailbox_name"`
}

type messageView struct {
	Role      string              `json:"role"`
	Text      string              `json:"text"`
	Time      time.Time           `json:"time"`
	Documents []string            `json:"documents"`
	Traces    []loop.Trace        `json:"traces"`
	Sources   []sourceView        `json:"sources"`
	Links     []app.Link          `json:"links"`
	Filter    []loop.FilterReport `json:"filter"`
}

type sourceView struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

func (s *Server) view(cs *chatState) chatView {
	t := cs.thread
	cs.mu.Lock()
	v := chatView{ID: t.ID, Title: cs.title, Created: t.Created, Provider: cs.provider, Model: cs.model, Running: cs.running != nil, Messages: []messageView{}}
	if cs.tools != nil {
		v.Tools = append([]string{}, cs.tools...)
	}
	filters := make(map[int][]loop.FilterReport, len(cs.filters))
	for k, f := range cs.filters {
		filters[k] = f
	}
	cs.mu.Unlock()
	if v.Tools == nil {
		v.Tools = append([]string{}, s.app.User.SelectedTools...)
	}
	v.RequiredConfidence, v.DataSecurity = t.RequiredConfidence().String(), t.DataSecurity().String()
	if o := t.OutboundRequirement(); o.Set {
		v.Outbound = &outboundView{Restriction: o.Restriction.Normalize().String(), MailboxID: o.MailboxID, MailboxName: o.MailboxName}
	}
	v.Updated = t.Created
	for i, m := range t.History() {
		if m.Hidden {
			continue
		}
		if m.Time.After(v.Updated) {
			v.Updated = m.Time
		}
		mv := messageView{Role: string(m.Role), Text: m.Text, Time: m.Time, Documents: []string{}, Traces: []loop.Trace{}, Sources: []sourceView{}, Filter: []loop.FilterReport{}}
		for _, d := range m.Documents {
			mv.Documents = append(mv.Documents, d.Name)
		}
		texts := []string{m.Text}
		for _, tr := range m.Traces {
			args := loop.MaskArguments(json.RawMessage(tr.Arguments), nil)
			mv.Traces = append(mv.Traces, loop.Trace{Order: tr.Order, ToolID: tr.ToolID, Name: tr.ToolName, CallID: tr.CallID,
				Status: loop.Status(tr.Status), Executed: tr.Executed, StatusMessage: tr.StatusMessage, Arguments: args})
		}
		for _, src := range m.Sources {
			mv.Sources = append(mv.Sources, sourceView{Title: src.Title, URL: src.URL})
			texts = append(texts, src.URL)
		}
		mv.Links = s.app.Links(t, texts...)
		if f := filters[i]; f != nil {
			mv.Filter = f
		}
		v.Messages = append(v.Messages, mv)
	}
	return v
}
