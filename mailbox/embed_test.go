package mailbox

import (
	"context"
	"fmt"
	"testing"

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
