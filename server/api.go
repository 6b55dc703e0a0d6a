package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/store"
)

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /api/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(OpenAPI())
	})
	m.HandleFunc("GET /api/providers", s.getProviders)
	m.HandleFunc("GET /api/tools", s.getTools)
	m.HandleFunc("GET /api/chats", s.listChats)
	m.HandleFunc("POST /api/chats", s.createChat)
	m.HandleFunc("GET /api/chats/{id}", s.getChat)
	m.HandleFunc("PATCH /api/chats/{id}", s.patchChat)
	m.HandleFunc("DELETE /api/chats/{id}", s.deleteChat)
	m.HandleFunc("POST /api/chats/{id}/turns", s.postTurn)
	m.HandleFunc("GET /api/chats/{id}/turn", s.followTurn)
	m.HandleFunc("POST /api/chats/{id}/turn/cancel", s.cancelTurn)
	m.HandleFunc("GET /api/settings", s.getSettings)
	m.HandleFunc("PUT /api/settings/{key}", s.putSetting)
	m.HandleFunc("DELETE /api/settings/{key}", s.deleteSetting)
	m.HandleFunc("GET /api/mailboxes", s.getMailboxes)
	m.HandleFunc("GET /api/datasources", s.getDataSources)
	m.HandleFunc("POST /api/read", s.postRead)
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such API route: see /api/openapi.json")
	})
	m.HandleFunc("GET /{$}", s.page("index.html"))
	m.HandleFunc("GET /app.js", s.page("app.js"))
	m.HandleFunc("GET /app.css", s.page("app.css"))
	m.HandleFunc("GET /markdown.js", s.page("markdown.js"))
	s.mux = m
}

var contentTypes = map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

func (s *Server) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile("static/" + name)
		if err != nil {
			writeError(w, http.StatusNotFound, "not_found", "no such file")
			return
		}
		w.Header().Set("Content-Type", contentTypes[name[strings.LastIndex(name, "."):]])
		w.Write(b)
	}
}

// apiError is the body of every answer that is not a success.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Error: apiErrorBody{Code: code, Message: msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// readJSON decodes a request body strictly: unknown fields and trailing
// data are errors that name what was wrong.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "bad_content_type", "send the body as application/json")
		return false
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit))
			return false
		}
		writeError(w, http.StatusBadRequest, "bad_request", "the body is not the JSON this route takes: "+err.Error())
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "bad_request", "the body holds more than one JSON value")
		return false
	}
	return true
}

type providerEntry struct {
	app.ProviderChoice
	// AllowedForChat is false when the chat's requirements forbid the
	// provider; NotAllowedBecause then says why.
	AllowedForChat    bool   `json:"allowed_for_chat"`
	NotAllowedBecause string `json:"not_allowed_because,omitempty"`
}

func (s *Server) getProviders(w http.ResponseWriter, r *http.Request) {
	var cs *chatState
	if id := r.URL.Query().Get("chat"); id != "" {
		var ok bool
		if cs, ok = s.chatOr404(w, r, id); !ok {
			return
		}
	}
	choices, problems := s.app.ProviderChoices(r.Context())
	out := struct {
		Scheme    string          `json:"scheme"`
		Default   string          `json:"default"`
		Providers []providerEntry `json:"providers"`
		Problems  []string        `json:"problems"`
	}{Scheme: string(s.app.Org.Scheme().Scheme), Providers: []providerEntry{}, Problems: []string{}}
	if rp, err := s.app.ResolveProvider(r.Context(), app.ProviderFlags{}); err == nil {
		out.Default = providerID(rp)
	}
	for _, p := range problems {
		out.Problems = append(out.Problems, p.Error())
	}
	for _, c := range choices {
		e := providerEntry{ProviderChoice: c, AllowedForChat: true}
		if why := s.forbidden(r, cs, c.ID); why != "" {
			e.AllowedForChat, e.NotAllowedBecause = false, why
		}
		out.Providers = append(out.Providers, e)
	}
	writeJSON(w, http.StatusOK, out)
}

// forbidden says why the chat may not use the provider, "" when it may.
func (s *Server) forbidden(r *http.Request, cs *chatState, id string) string {
	rp, err := s.app.ResolveProvider(r.Context(), app.ProviderFlags{Provider: id})
	if err != nil {
		return err.Error()
	}
	if cs == nil {
		return ""
	}
	if err := app.CheckProviderAllowed(cs.thread, rp); err != nil {
		return err.Error()
	}
	return ""
}

func providerID(rp *app.ResolvedProvider) string {
	if rp.ID != "" {
		return rp.ID
	}
	return rp.Kind
}

func (s *Server) getTools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var cs *chatState
	if id := q.Get("chat"); id != "" {
		var ok bool
		if cs, ok = s.chatOr404(w, r, id); !ok {
			return
		}
	}
	type providerInfo struct {
		ID         string `json:"id"`
		Title      string `json:"title"`
		Confidence string `json:"confidence"`
	}
	out := struct {
		app.Catalog
		Provider *providerInfo `json:"provider"`
		// Selected is the chat's selection, or the user's saved one.
		Selected []string `json:"selected"`
		// SemanticSearch says, for a provider, whether semantic_search
		// (which offers itself from the chat's data sources) would be
		// offered, and why not.
		SemanticSearch *semanticView `json:"semantic_search"`
		Problems       []string      `json:"problems"`
	}{Problems: []string{}}
	var rp *app.ResolvedProvider
	if q.Get("provider") != "" || q.Get("model") != "" {
		var err error
		if rp, err = s.app.ResolveProvider(r.Context(), app.ProviderFlags{Provider: q.Get("provider"), Model: q.Get("model")}); err != nil {
			writeError(w, http.StatusBadRequest, "bad_provider", err.Error())
			return
		}
		out.Provider = &providerInfo{ID: providerID(rp), Title: rp.Title, Confidence: rp.Confidence.String()}
	}
	var sel []string
	if cs != nil {
		cs.mu.Lock()
		sel = cs.tools
		cs.mu.Unlock()
		out.Catalog = s.app.ToolCatalog(r.Context(), rp, cs.thread)
	} else {
		out.Catalog = s.app.ToolCatalog(r.Context(), rp, nil)
	}
	if sel == nil {
		sel = s.app.User.SelectedTools
	}
	out.Selected = append([]string{}, sel...)
	if rp != nil {
		var t *chat.Thread
		if cs != nil {
			t = cs.thread
		}
		x := s.app.ExplainSemanticSearch(r.Context(), t, rp)
		sv := &semanticView{Offered: x.Offered, Reason: x.Reason, Detail: x.Detail, RetrievalMode: x.Mode.String(), DataSources: []string{}, NotUsable: []string{}}
		for _, u := range x.Usable {
			sv.DataSources = append(sv.DataSources, u.Source.ID)
		}
		for _, f := range x.Refused {
			sv.NotUsable = append(sv.NotUsable, f.Source.ID+": "+f.Reason)
		}
		out.SemanticSearch = sv
	}
	for _, p := range s.app.RegistryProblems {
		out.Problems = append(out.Problems, p.Error())
	}
	writeJSON(w, http.StatusOK, out)
}

type semanticView struct {
	Offered       bool     `json:"offered"`
	Reason        string   `json:"reason"`
	Detail        string   `json:"detail"`
	RetrievalMode string   `json:"retrieval_mode"`
	DataSources   []string `json:"data_sources"`
	NotUsable     []string `json:"not_usable"`
}

type chatSummary struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Updated  time.Time `json:"updated_at"`
	Messages int       `json:"messages"`
	Running  bool      `json:"running"`
}

func (s *Server) listChats(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.List(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "store", err.Error())
		return
	}
	out := struct {
		Chats []chatSummary `json:"chats"`
	}{Chats: []chatSummary{}}
	for _, c := range list {
		cs := chatSummary{ID: c.ID, Title: c.Title, Updated: c.Updated, Messages: c.Messages}
		s.mu.Lock()
		if st := s.chats[c.ID]; st != nil {
			st.mu.Lock()
			cs.Title = st.title
			cs.Running = st.running != nil
			st.mu.Unlock()
		}
		s.mu.Unlock()
		out.Chats = append(out.Chats, cs)
	}
	writeJSON(w, http.StatusOK, out)
}

// chatPatch is what POST /api/chats and PATCH /api/chats/{id} take; an
// absent field stays as it is.
type chatPatch struct {
	Title    *string   `json:"title"`
	Provider *string   `json:"provider"`
	Model    *string   `json:"model"`
	Tools    *[]string `json:"tools"`
}

func (p chatPatch) check() error {
	if p.Title != nil && len([]rune(*p.Title)) > 200 {
		return fmt.Errorf("title has %d characters; at most 200 are kept", len([]rune(*p.Title)))
	}
	if p.Title != nil && strings.ContainsFunc(*p.Title, func(r rune) bool { return r < 0x20 }) {
		return errors.New("title contains control characters such as line breaks; give one line")
	}
	return nil
}

func (s *Server) createChat(w http.ResponseWriter, r *http.Request) {
	var p chatPatch
	if r.ContentLength != 0 {
		if !readJSON(w, r, &p) {
			return
		}
	}
	if err := p.check(); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	cs := newChatState(app.NewThread())
	if msg := s.applyPatch(r, cs, p); msg != "" {
		writeError(w, http.StatusBadRequest, "bad_provider", msg)
		return
	}
	if err := s.save(r.Context(), cs, false); err != nil {
		writeError(w, http.StatusInternalServerError, "store", err.Error())
		return
	}
	s.mu.Lock()
	s.chats[cs.thread.ID] = cs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.view(cs))
}

// applyPatch applies p to cs; it returns why a provider cannot be chosen.
func (s *Server) applyPatch(r *http.Request, cs *chatState, p chatPatch) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if p.Provider != nil || p.Model != nil {
		prov, model := cs.provider, cs.model
		if p.Provider != nil {
			prov = strings.TrimSpace(*p.Provider)
		}
		if p.Model != nil {
			model = strings.TrimSpace(*p.Model)
		}
		if prov != "" {
			if _, err := s.app.ResolveProvider(r.Context(), app.ProviderFlags{Provider: prov, Model: model}); err != nil {
				return err.Error()
			}
		}
		cs.provider, cs.model = prov, model
	}
	if p.Title != nil {
		cs.title = strings.TrimSpace(*p.Title)
	}
	if p.Tools != nil {
		cs.tools = append([]string{}, (*p.Tools)...)
	}
	return ""
}

func (s *Server) getChat(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.chatOr404(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.view(cs))
}

func (s *Server) patchChat(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.chatOr404(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	var p chatPatch
	if !readJSON(w, r, &p) {
		return
	}
	if err := p.check(); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if msg := s.applyPatch(r, cs, p); msg != "" {
		writeError(w, http.StatusBadRequest, "bad_provider", msg)
		return
	}
	// A running turn stores the chat when it ends, with the new title.
	if err := s.save(r.Context(), cs, false); err != nil {
		writeError(w, http.StatusInternalServerError, "store", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s.view(cs))
}

func (s *Server) deleteChat(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.chatOr404(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	cs.mu.Lock()
	running := cs.running != nil
	cs.mu.Unlock()
	if running {
		writeError(w, http.StatusConflict, "turn_running", "an answer is still being written in this chat: cancel it first")
		return
	}
	if _, err := s.store.Delete(r.Context(), cs.thread.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusInternalServerError, "store", err.Error())
		return
	}
	s.mu.Lock()
	delete(s.chats, cs.thread.ID)
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	list, err := s.app.ToolSettings(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "settings", err.Error())
		return
	}
	if list == nil {
		list = []app.SettingView{}
	}
	writeJSON(w, http.StatusOK, struct {
		Settings []app.SettingView `json:"settings"`
	}{list})
}

func (s *Server) putSetting(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Value *string `json:"value"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if body.Value == nil {
		writeError(w, http.StatusBadRequest, "bad_request", `the body needs "value", a string ("" removes your value)`)
		return
	}
	s.setSetting(w, r, *body.Value)
}

func (s *Server) deleteSetting(w http.ResponseWriter, r *http.Request) { s.setSetting(w, r, "") }

func (s *Server) setSetting(w http.ResponseWriter, r *http.Request, value string) {
	key := r.PathValue("key")
	if _, err := s.app.SetToolSetting(r.Context(), key, value); err != nil {
		if se, ok := app.AsSettingError(err); ok {
			if se.Locked {
				writeError(w, http.StatusConflict, "locked", se.Msg)
				return
			}
			status := http.StatusBadRequest
			if se.Unknown {
				status = http.StatusNotFound
			}
			writeError(w, status, "bad_setting", se.Msg)
			return
		}
		writeError(w, http.StatusInternalServerError, "settings", err.Error())
		return
	}
	v, err := s.app.ToolSetting(r.Context(), key)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "settings", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) getMailboxes(w http.ResponseWriter, r *http.Request) {
	list, err := s.app.MailboxStatuses(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "mail_index", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Enabled   bool              `json:"tools_enabled"`
		Mailboxes []app.MailboxView `json:"mailboxes"`
	}{s.app.MailEnabled(), list})
}

func (s *Server) getDataSources(w http.ResponseWriter, r *http.Request) {
	var rp *app.ResolvedProvider
	if q := r.URL.Query().Get("provider"); q != "" {
		var err error
		if rp, err = s.app.ResolveProvider(r.Context(), app.ProviderFlags{Provider: q}); err != nil {
			writeError(w, http.StatusBadRequest, "bad_provider", err.Error())
			return
		}
	}
	views, problems := s.app.SourceViews(r.Context(), rp)
	out := struct {
		PreviewEnabled bool             `json:"preview_enabled"`
		DataSources    []app.SourceView `json:"data_sources"`
		MCPServers     []app.MCPView    `json:"mcp_servers"`
		Problems       []string         `json:"problems"`
	}{s.app.SourcesEnabled(), views, s.app.MCPStatuses(), []string{}}
	for _, p := range problems {
		out.Problems = append(out.Problems, p.Error())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) postRead(w http.ResponseWriter, r *http.Request) {
	var body struct {
		URL      string `json:"url"`
		MaxChars *int   `json:"max_chars"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.URL) == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `the body needs "url", the address to read`)
		return
	}
	maxChars := app.UserPageChars
	if body.MaxChars != nil {
		if *body.MaxChars < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(`"max_chars" is %d; give 0 to keep the page whole or a positive budget`, *body.MaxChars))
			return
		}
		maxChars = *body.MaxChars
	}
	start := time.Now()
	prep, page, err := s.app.ReadUserPage(r.Context(), strings.TrimSpace(body.URL), maxChars)
	if err != nil {
		writeError(w, http.StatusBadGateway, "read_failed", err.Error())
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	writeJSON(w, http.StatusOK, map[string]any{
		"page":       prep,
		"timings_ms": map[string]float64{"dns": ms(page.Timings.DNS), "connect": ms(page.Timings.Connect), "retrieval": ms(page.Timings.Total), "total": ms(time.Since(start))},
		"redirects":  page.Redirects,
		"status":     page.StatusCode,
		"links":      s.app.Links(nil, prep.Markdown),
	})
}

// ensure the loop's event type stays what the stream carries.
var _ = loop.EventDone
