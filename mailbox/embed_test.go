package mailbox

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp/credhttptest"
	"github.com/stewardhq/steward/internal/embedtest"
)

// fakeEmbeddings serves both embedding APIs on loopback with a toy model:
// one dimension per keyword.
func fakeEmbeddings(t *testing.T, keywords []string) *embedtest.Server {
	return embedtest.Start(t, embedtest.Keywords(keywords...))
}

func TestEmbeddersFactory(t *testing.T) {
	srv := fakeEmbeddings(t, []string{"delivery"})
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
