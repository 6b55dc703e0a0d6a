package eritest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/stewardhq/steward/datasource/eri"
)

// Document is one entry of the server's corpus.
type Document struct {
	Name     string
	Category string
	Path     string
	// Text is split into paragraphs at blank lines; a retrieval returns
	// the paragraph that matches best, with its neighbours around it.
	Text  string
	Links []string
}

// Options say how the server behaves. The zero value offers sign-in
// method NONE, says "ANY" provider may process its data, and has an empty
// corpus.
type Options struct {
	// Method is the one sign-in method the server offers and accepts.
	Method eri.AuthMethod
	// Username and Secret are what USERNAME_PASSWORD and TOKEN must send.
	Username, Secret string
	// Mappings are the field mappings /auth/methods announces; the server
	// then expects the fields under these names.
	Mappings []eri.AuthFieldMapping
	// Token is the token /auth hands out; default "t-42".
	Token string
	// Info, Embeddings, Retrievals and Security are what the info
	// endpoints answer. Security.AllowedProviderType defaults to ANY.
	Info       eri.DataSourceInfo
	Embeddings []eri.EmbeddingInfo
	Retrievals []eri.RetrievalInfo
	Security   eri.SecurityRequirements
	// Documents are searched by /retrieval.
	Documents []Document
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// Server is a running ERI server on loopback.
type Server struct {
	t   testing.TB
	srv *httptest.Server
	o   Options

	mu        sync.Mutex
	requests  []Request
	overrides map[string]http.HandlerFunc
	retrieved []eri.RetrievalRequest
}

// New starts a server; the test's cleanup stops it.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Method == "" {
		o.Method = eri.AuthNone
	}
	if o.Token == "" {
		o.Token = "t-42"
	}
	if o.Security.AllowedProviderType == "" {
		o.Security.AllowedProviderType = eri.ProviderAny
	}
	if o.Embeddings == nil {
		o.Embeddings = []eri.EmbeddingInfo{}
	}
	if o.Retrievals == nil {
		o.Retrievals = []eri.RetrievalInfo{{ID: "words", Name: "Word search", Description: "Paragraphs ranked by the words of the query.",
			ParametersDescription: map[string]string{}, Embeddings: []eri.EmbeddingInfo{}}}
	}
	s := &Server{t: t, o: o, overrides: map[string]http.HandlerFunc{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("eritest: %v", err)
	}
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.serve)}}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server's base address, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return s.srv.URL }

// Port is the server's port.
func (s *Server) Port() int { return s.srv.Listener.Addr().(*net.TCPAddr).Port }

// Close stops the server, so later calls cannot connect.
func (s *Server) Close() { s.srv.Close() }

// Override replaces the handler of an endpoint such as "POST /retrieval"
// or "GET /dataSource"; its answers are not validated. A nil handler
// restores the server's own.
func (s *Server) Override(endpoint string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.overrides, endpoint)
		return
	}
	s.overrides[endpoint] = h
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests an endpoint such as "POST /retrieval"
// received.
func (s *Server) Count(endpoint string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method+" "+r.Path == endpoint {
			n++
		}
	}
	return n
}

// Retrievals returns the retrieval requests received, decoded.
func (s *Server) Retrievals() []eri.RetrievalRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]eri.RetrievalRequest(nil), s.retrieved...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	endpoint := r.Method + " " + r.URL.Path
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	h := s.overrides[endpoint]
	s.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	switch endpoint {
	case "GET /auth/methods":
		s.answer(w, "get", "/auth/methods", []eri.AuthScheme{{AuthMethod: s.o.Method, AuthFieldMappings: s.mappings()}})
	case "POST /auth":
		s.auth(w, r)
	case "GET /dataSource":
		if s.signedIn(w, r) {
			s.answer(w, "get", "/dataSource", s.o.Info)
		}
	case "GET /embedding/info":
		if s.signedIn(w, r) {
			s.answer(w, "get", "/embedding/info", s.o.Embeddings)
		}
	case "GET /retrieval/info":
		if s.signedIn(w, r) {
			s.answer(w, "get", "/retrieval/info", s.o.Retrievals)
		}
	case "GET /security/requirements":
		if s.signedIn(w, r) {
			s.answer(w, "get", "/security/requirements", s.o.Security)
		}
	case "POST /retrieval":
		if s.signedIn(w, r) {
			s.retrieve(w, body)
		}
	default:
		s.t.Errorf("eritest: the client called %s, which ERI v1 does not define", endpoint)
		http.NotFound(w, r)
	}
}

func (s *Server) mappings() []eri.AuthFieldMapping {
	if s.o.Mappings != nil {
		return s.o.Mappings
	}
	switch s.o.Method {
	case eri.AuthUsernamePassword:
		return []eri.AuthFieldMapping{{AuthField: eri.FieldUsername, FieldName: "user"}, {AuthField: eri.FieldPassword, FieldName: "password"}}
	case eri.AuthToken:
		return []eri.AuthFieldMapping{{AuthField: eri.FieldToken, FieldName: "Authorization"}}
	}
	return []eri.AuthFieldMapping{}
}

func (s *Server) header(field eri.AuthField, def string) string {
	for _, m := range s.mappings() {
		if m.AuthField == field && m.FieldName != "" {
			return m.FieldName
		}
	}
	return def
}

// answer validates v as the endpoint's answer, then writes it.
func (s *Server) answer(w http.ResponseWriter, method, path string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Errorf("eritest: %v", err)
		http.Error(w, "encoding", http.StatusInternalServerError)
		return
	}
	if err := ValidateAnswer(s.t, method, path, b); err != nil {
		s.t.Errorf("eritest: the server's own answer to %s %s does not validate against v1.json: %v\n%s", method, path, err, b)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (s *Server) auth(w http.ResponseWriter, r *http.Request) {
	m := r.URL.Query().Get("authMethod")
	if err := schemaAuthMethodIn.Validate(s.t, []byte(fmt.Sprintf("%q", m))); err != nil {
		s.t.Errorf("eritest: POST /auth with authMethod %q, which v1.json does not define: %v", m, err)
	}
	ok := eri.AuthMethod(m) == s.o.Method
	switch s.o.Method {
	case eri.AuthUsernamePassword:
		ok = ok && r.Header.Get(s.header(eri.FieldUsername, "user")) == s.o.Username && r.Header.Get(s.header(eri.FieldPassword, "password")) == s.o.Secret
	case eri.AuthToken:
		name := s.header(eri.FieldToken, "Authorization")
		want := s.o.Secret
		if strings.EqualFold(name, "Authorization") {
			want = "Bearer " + want
		}
		ok = ok && r.Header.Get(name) == want
	}
	if !ok {
		s.answer(w, "post", "/auth", map[string]any{"success": false, "token": nil, "message": "wrong credentials"})
		return
	}
	s.answer(w, "post", "/auth", map[string]any{"success": true, "token": s.o.Token, "message": ""})
}

// signedIn answers 401 unless the request carries the token.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("token") != s.o.Token {
		http.Error(w, `{"error":"missing or wrong token"}`, http.StatusUnauthorized)
		return false
	}
	return true
}

func (s *Server) retrieve(w http.ResponseWriter, body []byte) {
	if err := ValidateRetrievalRequest(s.t, body); err != nil {
		s.t.Errorf("eritest: the retrieval request does not validate against v1.json: %v\n%s", err, body)
	}
	var req eri.RetrievalRequest
	var wire struct {
		eri.RetrievalRequest
		RetrievalProcessID *string           `json:"retrievalProcessId"`
		Parameters         map[string]string `json:"parameters"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	req = wire.RetrievalRequest
	if wire.RetrievalProcessID != nil {
		req.RetrievalProcessID = *wire.RetrievalProcessID
	}
	req.Parameters = wire.Parameters
	s.mu.Lock()
	s.retrieved = append(s.retrieved, req)
	s.mu.Unlock()
	s.answer(w, "post", "/retrieval", s.search(req.LatestUserPrompt, req.MaxMatches))
}

// search ranks paragraphs by how many distinct words of the query they
// hold; ties keep the corpus order.
func (s *Server) search(query string, max int) []eri.Context {
	words := Words(query)
	type hit struct {
		ctx   eri.Context
		score int
		order int
	}
	var hits []hit
	for di, d := range s.o.Documents {
		paras := paragraphs(d.Text)
		best, bestScore := -1, 0
		for pi, p := range paras {
			have := map[string]bool{}
			for _, w := range Words(p) {
				have[w] = true
			}
			score := 0
			for _, w := range words {
				if have[w] {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = pi, score
			}
		}
		if best < 0 {
			continue
		}
		around := []string{}
		if best > 0 {
			around = append(around, paras[best-1])
		}
		if best+1 < len(paras) {
			around = append(around, paras[best+1])
		}
		links := d.Links
		if links == nil {
			links = []string{}
		}
		hits = append(hits, hit{ctx: eri.Context{Name: d.Name, Category: d.Category, Path: d.Path, Type: eri.ContentText,
			MatchedContent: paras[best], SurroundingContent: around, Links: links}, score: bestScore, order: di})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := []eri.Context{}
	for _, h := range hits {
		if max > 0 && len(out) >= max {
			break
		}
		out = append(out, h.ctx)
	}
	return out
}

// Words lowers s and splits it into words of letters and digits, without
// duplicates and without words shorter than three characters.
func Words(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) < 3 || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
