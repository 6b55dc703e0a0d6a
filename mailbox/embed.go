package mailbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/stewardhq/steward/credhttp"
)

// Embedder turns texts into vectors. The mailbox's embedding provider
// receives queries and mail text through it.
type Embedder interface {
	// Model names the model, stored with every vector so a model change
	// re-embeds.
	Model() string
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// maxEmbeddingResponse caps what an embedding server may send back.
const maxEmbeddingResponse = 64 << 20

// NewEmbedder builds the client for an embedding configuration. apiKey may
// be empty (Ollama, local servers); client nil means a default client.
func NewEmbedder(e Embedding, apiKey string, client *http.Client) (Embedder, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	// The key travels in a header; redirects stay within the configured origin.
	client = credhttp.Client(client, "the base URL of the embedding provider")
	base := e.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	h := httpEmbedder{model: e.Model, apiKey: apiKey, client: client}
	switch e.Kind {
	case EmbeddingOpenAI:
		h.url = base + "embeddings"
		return &openAIEmbedder{h}, nil
	case EmbeddingOllama:
		h.url = base + "api/embed"
		return &ollamaEmbedder{h}, nil
	}
	return nil, fmt.Errorf("embedding kind %q: use openai or ollama", e.Kind)
}

type httpEmbedder struct {
	url, model, apiKey string
	client             *http.Client
}

func (h httpEmbedder) Model() string { return h.model }

func (h httpEmbedder) post(ctx context.Context, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("embedding request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.apiKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("embedding request: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddingResponse))
	if err != nil {
		return fmt.Errorf("embedding response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		// The body may echo the input (mail text), so it is not quoted.
		return fmt.Errorf("embedding provider answered HTTP %d", resp.StatusCode)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("embedding response is not the expected JSON: %w", err)
	}
	return nil
}

func checkVectors(vs [][]float32, n int) ([][]float32, error) {
	if len(vs) != n {
		return nil, fmt.Errorf("embedding provider returned %d vectors for %d texts", len(vs), n)
	}
	for i, v := range vs {
		if len(v) == 0 || len(v) != len(vs[0]) {
			return nil, fmt.Errorf("embedding provider returned vector %d with %d dimensions (first has %d)", i, len(v), len(vs[0]))
		}
	}
	return vs, nil
}

type openAIEmbedder struct{ httpEmbedder }

func (o *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := o.post(ctx, map[string]any{"model": o.model, "input": texts, "encoding_format": "float"}, &resp); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding provider returned index %d for %d texts", d.Index, len(texts))
		}
		out[d.Index] = d.Embedding
	}
	return checkVectors(out, len(texts))
}

type ollamaEmbedder struct{ httpEmbedder }

func (o *ollamaEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	var resp struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := o.post(ctx, map[string]any{"model": o.model, "input": texts}, &resp); err != nil {
		return nil, err
	}
	return checkVectors(resp.Embeddings, len(texts))
}

// Embedders returns the usual EmbedderFactory: a mailbox without an
// embedding provider gets none, one with a provider gets its HTTP client,
// its API key read from secrets when it names one.
func Embedders(secrets Secrets, client *http.Client) EmbedderFactory {
	return func(ctx context.Context, cfg Config) (Embedder, error) {
		if cfg.Embedding == nil {
			return nil, nil
		}
		key := ""
		if cfg.Embedding.SecretRef != "" {
			if secrets == nil {
				return nil, fmt.Errorf("mailbox %s: the embedding provider names a secret but no secret store is configured", cfg.ID)
			}
			k, err := secrets.Secret(ctx, cfg.Embedding.SecretRef)
			if err != nil {
				return nil, fmt.Errorf("mailbox %s: read the embedding API key: %w", cfg.ID, err)
			}
			key = k
		}
		return NewEmbedder(*cfg.Embedding, key, client)
	}
}
