package embed

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp/credhttptest"
	"github.com/stewardhq/steward/internal/embedtest"
)

func TestEmbedders(t *testing.T) {
	srv := embedtest.Start(t, embedtest.Keywords("delivery", "budget"))
	tests := []struct {
		name    string
		c       Config
		key     string
		texts   []string
		wantErr string
	}{
		{"openai", Config{Kind: OpenAI, BaseURL: srv.URL + "/v1", Model: "m", Provider: "OPEN_AI"}, "key-1", []string{"delivery", "budget", "x"}, ""},
		{"ollama", Config{Kind: Ollama, BaseURL: srv.URL + "/", Model: "m", Provider: "SELF_HOSTED"}, "", []string{"budget", "delivery"}, ""},
		{"openai wrong key", Config{Kind: OpenAI, BaseURL: srv.URL + "/v1/", Model: "m", Provider: "OPEN_AI"}, "nope", []string{"a"}, "HTTP 401"},
		{"server error does not echo", Config{Kind: Ollama, BaseURL: srv.URL, Model: "m", Provider: "SELF_HOSTED"}, "", []string{"FAIL secret subject"}, "HTTP 500"},
		{"not found", Config{Kind: Ollama, BaseURL: srv.URL + "/nothing/", Model: "m", Provider: "SELF_HOSTED"}, "", []string{"a"}, "HTTP 404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.c, tc.key, srv.Client())
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
	if _, err := New(Config{Kind: "x"}, "", nil); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestEmbedderRejectsWrongShapes(t *testing.T) {
	tests := []struct{ name, body string }{
		{"too few", `{"embeddings":[[1,2]]}`},
		{"ragged", `{"embeddings":[[1,2],[1]]}`},
		{"empty vector", `{"embeddings":[[],[]]}`},
		{"not json", `<html>`},
		{"not finite", `{"embeddings":[[1,2],[1,1e39]]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(tc.body)) }))
			defer srv.Close()
			e, _ := New(Config{Kind: Ollama, BaseURL: srv.URL, Model: "m", Provider: "SELF_HOSTED"}, "", srv.Client())
			if _, err := e.Embed(context.Background(), []string{"a", "b"}); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	ok := Config{Kind: Ollama, BaseURL: "http://127.0.0.1:11434/", Model: "m", Provider: "SELF_HOSTED"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Kind = "bert" }, "embedding kind"},
		{func(c *Config) { c.BaseURL = "ftp://x" }, "base URL"},
		{func(c *Config) { c.BaseURL = "http://u:p@x/" }, "without user info"},
		{func(c *Config) { c.Model = " " }, "model is empty"},
		{func(c *Config) { c.Provider = "" }, "provider name"},
		{func(c *Config) { c.TokenLimit = -1 }, "token limit"},
		{func(c *Config) { c.BatchSize = -3 }, "batch size"},
	} {
		c := ok
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", c, err, tc.want)
		}
	}
}

func TestLimitsOf(t *testing.T) {
	e, err := New(Config{Kind: Ollama, BaseURL: "http://127.0.0.1:1/", Model: "m", Provider: "SELF_HOSTED", TokenLimit: 512}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := LimitsOf(e); l.TokenLimit != 512 || l.BatchSize != DefaultBatchSize {
		t.Errorf("limits %+v", l)
	}
	if l := LimitsOf(nil); l.TokenLimit != DefaultTokenLimit || l.BatchSize != DefaultBatchSize {
		t.Errorf("defaults %+v", l)
	}
}

// The embedding key travels in a header and the body holds mail or
// document text: a redirect to another origin is not followed, and the
// error names the setting and that origin.
func TestEmbedderDoesNotFollowARedirectElsewhere(t *testing.T) {
	for _, kind := range []Kind{OpenAI, Ollama} {
		for _, status := range credhttptest.Statuses() {
			t.Run(string(kind)+"/"+http.StatusText(status), func(t *testing.T) {
				r := credhttptest.NewRedirector(t, status)
				e, err := New(Config{Kind: kind, BaseURL: r.URL + "/v1/", Model: "m", Provider: "OPEN_AI"}, "embed-secret", nil)
				if err != nil {
					t.Fatal(err)
				}
				_, err = e.Embed(context.Background(), []string{"a document passage"})
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
	e, err := New(Config{Kind: OpenAI, BaseURL: base + "/v1/", Model: "m", Provider: "OPEN_AI"}, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Embed(context.Background(), []string{"x"})
	if err != nil || len(v) != 1 {
		t.Fatalf("vectors %v, err %v", v, err)
	}
}
