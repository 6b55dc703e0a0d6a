package mailbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp/credhttptest"
)

// fakeEmbeddings serves both embedding APIs on loopback with a toy model:
// one dimension per keyword.
func fakeEmbeddings(t *testing.T, keywords []string) (*httptest.Server, *int) {
	calls := new(int)
	vec := func(s string) []float32 {
		v := make([]float32, len(keywords)+1)
		v[len(keywords)] = 0.01
		for i, k := range keywords {
			if strings.Contains(strings.ToLower(s), k) {
				v[i] = 1
			}
		}
		return v
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*calls++
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, "bad request", 400)
			return
		}
		if strings.Contains(strings.Join(req.Input, " "), "FAIL") {
			http.Error(w, "boom with the input echoed: "+req.Input[0], 500)
			return
		}
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
			// Reverse order: the client must sort by index.
			for i := len(req.Input) - 1; i >= 0; i-- {
				out.Data = append(out.Data, d{i, vec(req.Input[i])})
			}
			_ = json.NewEncoder(w).Encode(out)
		case "/api/embed":
			var out struct {
				Embeddings [][]float32 `json:"embeddings"`
			}
			for _, in := range req.Input {
				out.Embeddings = append(out.Embeddings, vec(in))
			}
			_ = json.NewEncoder(w).Encode(out)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}

func TestEmbedders(t *testing.T) {
	srv, _ := fakeEmbeddings(t, []string{"delivery", "budget"})
	tests := []struct {
		name    string
		e       Embedding
		key     string
		texts   []string
		wantErr string
	}{
		{"openai", Embedding{Kind: EmbeddingOpenAI, BaseURL: srv.URL + "/v1", Model: "m", Provider: "OPEN_AI"}, "key-1", []string{"delivery", "budget", "x"}, ""},
		{"ollama", Embedding{Kind: EmbeddingOllama, BaseURL: srv.URL + "/", Model: "m", Provider: "SELF_HOSTED"}, "", []string{"budget", "delivery"}, ""},
		{"openai wrong key", Embedding{Kind: EmbeddingOpenAI, BaseURL: srv.URL + "/v1/", Model: "m", Provider: "OPEN_AI"}, "nope", []string{"a"}, "HTTP 401"},
		{"server error does not echo", Embedding{Kind: EmbeddingOllama, BaseURL: srv.URL, Model: "m", Provider: "SELF_HOSTED"}, "", []string{"FAIL secret subject"}, "HTTP 500"},
		{"not found", Embedding{Kind: EmbeddingOllama, BaseURL: srv.URL + "/nothing/", Model: "m", Provider: "SELF_HOSTED"}, "", []string{"a"}, "HTTP 404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEmbedder(tc.e, tc.key, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			vs, err := e.Embed(context.Background(), tc.texts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret subject") {
					t.Fatalf("err = %v, want %q without the input", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != len(tc.texts) || e.Model() != "m" {
				t.Fatalf("%d vectors", len(vs))
			}
			for i, txt := range tc.texts {
				if (txt == "delivery") != (vs[i][0] == 1) || (txt == "budget") != (vs[i][1] == 1) {
					t.Errorf("vector %d for %q: %v", i, txt, vs[i])
				}
			}
		})
	}
	if _, err := NewEmbedder(Embedding{Kind: "x"}, "", nil); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestEmbedderRejectsWrongShapes(t *testing.T) {
	tests := []struct{ name, body string }{
		{"too few", `{"embeddings":[[1,2]]}`},
		{"ragged", `{"embeddings":[[1,2],[1]]}`},
		{"empty vector", `{"embeddings":[[],[]]}`},
		{"not json", `<html>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(tc.body)) }))
			defer srv.Close()
			e, _ := NewEmbedder(Embedding{Kind: EmbeddingOllama, BaseURL: srv.URL, Model: "m", Provider: "SELF_HOSTED"}, "", srv.Client())
			if _, err := e.Embed(context.Background(), []string{"a", "b"}); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestEmbeddersFactory(t *testing.T) {
	srv, _ := fakeEmbeddings(t, []string{"delivery"})
	secrets := SecretFunc(func(_ context.Context, ref string) (string, error) {
		if ref == "openai-key" {
			return "key-1", nil
		}
		return "", fmt.Errorf("no secret %q", ref)
	})
	f := Embedders(secrets, srv.Client())
	cfg := validConfig()
	if e, err := f(context.Background(), cfg); e != nil || err != nil {
		t.Errorf("no provider: %v %v", e, err)
	}
	cfg.Embedding = &Embedding{Kind: EmbeddingOpenAI, BaseURL: srv.URL + "/v1/", Model: "m", Provider: "OPEN_AI", SecretRef: "openai-key"}
	e, err := f(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := e.Embed(context.Background(), []string{"delivery"}); err != nil || vs[0][0] != 1 {
		t.Errorf("embed with the stored key: %v %v", vs, err)
	}
	cfg.Embedding.SecretRef = "missing"
	if _, err := f(context.Background(), cfg); err == nil {
		t.Error("a missing key was not reported")
	}
}

// The embedding key travels in a header and the body holds mail text: a
// redirect to another origin is not followed, and the error names the
// setting and that origin.
func TestEmbedderDoesNotFollowARedirectElsewhere(t *testing.T) {
	for _, kind := range []EmbeddingKind{EmbeddingOpenAI, EmbeddingOllama} {
		for _, status := range credhttptest.Statuses() {
			t.Run(string(kind)+"/"+http.StatusText(status), func(t *testing.T) {
				r := credhttptest.NewRedirector(t, status)
				e, err := NewEmbedder(Embedding{Kind: kind, BaseURL: r.URL + "/v1/", Model: "m", Provider: "OPEN_AI"}, "embed-secret", nil)
				if err != nil {
					t.Fatal(err)
				}
				_, err = e.Embed(context.Background(), []string{"a mail body"})
				r.AssertNothingLeaked(t)
				if err == nil {
					t.Fatal("embedding succeeded through a redirect to another origin")
				}
				if !strings.Contains(err.Error(), "embedding provider") || !strings.Contains(err.Error(), r.Target) {
					t.Errorf("error %q does not name the setting and %s", err, r.Target)
				}
				if strings.Contains(err.Error(), "embed-secret") {
					t.Errorf("error repeats the key: %v", err)
				}
			})
		}
	}
}

func TestEmbedderFollowsARedirectWithinItsOrigin(t *testing.T) {
	base := credhttptest.SameOrigin(t, "/v1/embeddings", "/v2/embeddings", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("Authorization after the redirect = %q", r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"index":0,"embedding":[0.5,0.5]}]}`)
	}))
	e, err := NewEmbedder(Embedding{Kind: EmbeddingOpenAI, BaseURL: base + "/v1/", Model: "m", Provider: "OPEN_AI"}, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Embed(context.Background(), []string{"x"})
	if err != nil || len(v) != 1 {
		t.Fatalf("vectors %v, err %v", v, err)
	}
}
