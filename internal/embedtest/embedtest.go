// Package embedtest serves the embedding APIs of package embed on loopback
// for tests and benchmarks: an OpenAI-compatible POST /v1/embeddings (which
// wants "Authorization: Bearer key-1" and answers in reverse order, so a
// client must sort by index) and Ollama's POST /api/embed.
//
// Its vectors come from a Model function; Keywords gives one dimension per
// keyword, enough for tests that need a known nearest neighbour.
package embedtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Model turns one text into its vector.
type Model func(text string) []float32

// Keywords is a toy model with one dimension per keyword (1 when the text
// holds it, case-insensitively) and a last, small constant dimension so no
// vector is zero.
func Keywords(keywords ...string) Model {
	return func(s string) []float32 {
		v := make([]float32, len(keywords)+1)
		v[len(keywords)] = 0.01
		ls := strings.ToLower(s)
		for i, k := range keywords {
			if strings.Contains(ls, k) {
				v[i] = 1
			}
		}
		return v
	}
}

// Server is a running fake embedding server.
type Server struct {
	*httptest.Server
	calls atomic.Int64
	texts atomic.Int64
	// Fail, when set, makes the server answer HTTP 500 with the input
	// echoed for requests it returns true for.
	fail func(texts []string) bool
}

// Calls counts the requests served.
func (s *Server) Calls() int { return int(s.calls.Load()) }

// Texts counts the texts embedded.
func (s *Server) Texts() int { return int(s.texts.Load()) }

// FailWhen makes the server fail requests for which f returns true.
func (s *Server) FailWhen(f func(texts []string) bool) { s.fail = f }

// Start serves model on loopback until the test ends. A request with an
// input containing "FAIL" is answered HTTP 500 with the input echoed, so
// tests can check a client never quotes the body.
func Start(t testing.TB, model Model) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if strings.Contains(strings.Join(req.Input, " "), "FAIL") || (s.fail != nil && s.fail(req.Input)) {
			http.Error(w, "boom with the input echoed: "+req.Input[0], http.StatusInternalServerError)
			return
		}
		s.texts.Add(int64(len(req.Input)))
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/embeddings":
			if r.Header.Get("Authorization") != "Bearer key-1" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			type d struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			var out struct {
				Data []d `json:"data"`
			}
			for i := len(req.Input) - 1; i >= 0; i-- {
				out.Data = append(out.Data, d{i, model(req.Input[i])})
			}
			_ = json.NewEncoder(w).Encode(out)
		case "/api/embed":
			var out struct {
				Embeddings [][]float32 `json:"embeddings"`
			}
			for _, in := range req.Input {
				out.Embeddings = append(out.Embeddings, model(in))
			}
			_ = json.NewEncoder(w).Encode(out)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}
