package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/loop"
)

// turn is one answer being written. Its events are kept as SSE frames, so
// every tab that follows the turn, from its start or from the last event
// it saw, gets all of them in order.
type turn struct {
	cancel context.CancelFunc

	mu     sync.Mutex
	frames [][]byte
	done   bool
	// wake is closed and replaced whenever a frame is added.
	wake chan struct{}
}

func newTurn() *turn { return &turn{wake: make(chan struct{})} }

// push adds one event; typ is its SSE event name, v its JSON data.
func (t *turn) push(typ string, v any) {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	t.mu.Lock()
	defer t.mu.Unlock()
	id := len(t.frames) + 1
	frame := fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", id, typ, bytes.TrimRight(data.Bytes(), "\n"))
	t.frames = append(t.frames, frame)
	close(t.wake)
	t.wake = make(chan struct{})
}

func (t *turn) finish() {
	t.mu.Lock()
	t.done = true
	close(t.wake)
	t.wake = make(chan struct{})
	t.mu.Unlock()
}

// pingEvery keeps idle streams open through proxies and lets a closed tab
// be noticed.
const pingEvery = 15 * time.Second

// stream writes the turn's events after the first `from` ones to w until
// the turn is done or the client leaves. Leaving does not end the turn.
func (t *turn) stream(ctx context.Context, w http.ResponseWriter, from int) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.Flush()
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	next := from
	for {
		t.mu.Lock()
		frames := t.frames[min(next, len(t.frames)):]
		done, wake := t.done, t.wake
		t.mu.Unlock()
		for _, f := range frames {
			if _, err := w.Write(f); err != nil {
				return
			}
		}
		next += len(frames)
		if err := rc.Flush(); err != nil {
			return
		}
		if done {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-ping.C:
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
		}
	}
}

// turnRequest is the body of POST /api/chats/{id}/turns.
type turnRequest struct {
	Text     string    `json:"text"`
	Provider *string   `json:"provider"`
	Model    *string   `json:"model"`
	Tools    *[]string `json:"tools"`
}

func (s *Server) postTurn(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.chatOr404(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	var body turnRequest
	if !readJSON(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Text) == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `"text" is empty: write the message to answer`)
		return
	}
	if msg := s.applyPatch(r, cs, chatPatch{Provider: body.Provider, Model: body.Model, Tools: body.Tools}); msg != "" {
		writeError(w, http.StatusBadRequest, "bad_provider", msg)
		return
	}
	cs.mu.Lock()
	flags := app.ProviderFlags{Provider: cs.provider, Model: cs.model}
	selected := cs.tools
	cs.mu.Unlock()
	rp, err := s.app.ResolveProvider(r.Context(), flags)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_provider", err.Error())
		return
	}
	if err := app.CheckProviderAllowed(cs.thread, rp); err != nil {
		writeError(w, http.StatusConflict, "provider_forbidden", err.Error())
		return
	}
	cs.mu.Lock()
	if cs.running != nil {
		cs.mu.Unlock()
		writeError(w, http.StatusConflict, "turn_running", "an answer is still being written in this chat: wait for it or cancel it")
		return
	}
	if cs.provider == "" {
		cs.provider = providerID(rp)
	}
	tr := newTurn()
	ctx, cancel := context.WithCancel(s.ctx)
	tr.cancel = cancel
	cs.running = tr
	cs.mu.Unlock()
	var sel []string
	if selected != nil {
		sel = append([]string{}, selected...)
	}
	s.turns.Add(1)
	go s.run(ctx, cs, tr, rp, app.Turn{Text: body.Text, Selected: sel})
	tr.stream(r.Context(), w, 0)
}

// run answers one turn and stores the chat, whatever became of the
// answer. It runs on the server's context, not the request's: a closed tab
// does not stop it.
func (s *Server) run(ctx context.Context, cs *chatState, tr *turn, rp *app.ResolvedProvider, t app.Turn) {
	defer s.turns.Done()
	defer tr.cancel()
	// The turn's filtering is collected for this chat alone; app reports
	// it as filter events after each tool call.
	ctx = guard.WithCollector(ctx, &guard.Collector{})
	var reports []loop.FilterReport
	tr.push(string(loop.EventChat), loop.Event{Type: loop.EventChat, Chat: &loop.ChatInfo{ID: cs.thread.ID, Stored: true, Continued: len(cs.thread.History()) > 0}})
	var done *loop.Event
	sink := loop.SinkFunc(func(ev loop.Event) {
		if ev.Type == loop.EventDone {
			// Held back until the chat is stored, so that a tab which
			// reloads the chat on done finds the answer there.
			done = &ev
			return
		}
		if ev.Type == loop.EventFilter && ev.Filter != nil {
			reports = append(reports, *ev.Filter)
		}
		tr.push(string(ev.Type), ev)
	})
	_, err := s.app.Answer(ctx, cs.thread, rp, t, sink)
	if done == nil {
		// The run failed before the loop started.
		stop := loop.StopError
		if errors.Is(err, context.Canceled) {
			stop = loop.StopCancelled
		}
		msg := "the answer could not be started"
		if err != nil {
			msg = err.Error()
		}
		tr.push(string(loop.EventError), loop.Event{Type: loop.EventError, Error: msg})
		done = &loop.Event{Type: loop.EventDone, Stop: stop}
	}
	hist := cs.thread.History()
	cs.mu.Lock()
	if cs.title == "" {
		cs.title = cs.thread.Title
	}
	if n := len(hist); n > 0 && hist[n-1].Role == chat.RoleAssistant && len(reports) > 0 {
		cs.filters[n-1] = reports
	}
	cs.mu.Unlock()
	if err := s.save(ctx, cs, true); err != nil {
		s.log.Error("a chat could not be stored", "chat", cs.thread.ID, "err", err)
		tr.push(string(loop.EventError), loop.Event{Type: loop.EventError, Error: "the chat could not be stored: " + err.Error()})
	}
	// What the filter reported outside any chat (an MCP server's tool
	// descriptions) is logged by the filter; the shared list is emptied
	// so that a long-running server does not keep it.
	s.app.TakeFilterReports()
	cs.mu.Lock()
	cs.running = nil
	cs.mu.Unlock()
	tr.push(string(done.Type), *done)
	tr.finish()
}

// followTurn streams the running turn of a chat, from its start or after
// the event named by Last-Event-ID; 204 when no turn runs.
func (s *Server) followTurn(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.chatOr404(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	cs.mu.Lock()
	tr := cs.running
	cs.mu.Unlock()
	if tr == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	from := 0
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("after")
	}
	if last != "" {
		n, err := strconv.Atoi(last)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("Last-Event-ID %q is not an event number", last))
			return
		}
		from = n
	}
	tr.stream(r.Context(), w, from)
}

func (s *Server) cancelTurn(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.chatOr404(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	cs.mu.Lock()
	tr := cs.running
	cs.mu.Unlock()
	if tr == nil {
		writeError(w, http.StatusConflict, "no_turn", "no answer is being written in this chat")
		return
	}
	tr.cancel()
	writeJSON(w, http.StatusAccepted, struct {
		Cancelled bool `json:"cancelled"`
	}{true})
}
