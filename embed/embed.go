package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/stewardhq/steward/credhttp"
)

// Embedder turns texts into vectors. The provider receives every text and
// query passed to it.
type Embedder interface {
	// Model names the model, stored with every vector so a model change
	// re-embeds.
	Model() string
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Limits are what an embedding provider accepts at once. An Embedder may
// report them by implementing Limiter; indexers use the defaults otherwise.
type Limits struct {
	// TokenLimit is the most tokens one text may have (the reference's
	// TokenLimit, default DefaultTokenLimit). It caps the chunk size.
	TokenLimit int
	// BatchSize is how many texts one request carries (default
	// DefaultBatchSize).
	BatchSize int
}

// Limiter is implemented by embedders that know their provider's limits.
type Limiter interface {
	Limits() Limits
}

// Defaults of Limits.
const (
	DefaultTokenLimit = 8192
	DefaultBatchSize  = 64
)

// LimitsOf returns the limits e reports, with defaults for what it leaves
// zero (and for an e that reports none).
func LimitsOf(e Embedder) Limits {
	var l Limits
	if lm, ok := e.(Limiter); ok {
		l = lm.Limits()
	}
	if l.TokenLimit <= 0 {
		l.TokenLimit = DefaultTokenLimit
	}
	if l.BatchSize <= 0 {
		l.BatchSize = DefaultBatchSize
	}
	return l
}

// Kind names the wire API of an embedding provider.
type Kind string

// The embedding APIs.
const (
	// OpenAI is an OpenAI-compatible POST <base>/embeddings.
	OpenAI Kind = "openai"
	// Ollama is Ollama's POST <base>/api/embed.
	Ollama Kind = "ollama"
)

// Config configures an embedding provider.
type Config struct {
	Kind Kind `json:"kind" yaml:"kind"`
	// BaseURL is e.g. "https://api.openai.com/v1/" or "http://localhost:11434/".
	BaseURL string `json:"base_url" yaml:"base_url"`
	Model   string `json:"model" yaml:"model"`
	// Provider is the provider's name for the confidence scheme, e.g.
	// policy.ProviderSelfHosted or policy.ProviderOpenAI.
	Provider string `json:"provider" yaml:"provider"`
	// SecretRef names the API key in the secret store; empty for none.
	SecretRef string `json:"secret_ref,omitempty" yaml:"secret_ref,omitempty"`
	// TokenLimit is the most tokens one text may have; 0 means
	// DefaultTokenLimit.
	TokenLimit int `json:"token_limit,omitempty" yaml:"token_limit,omitempty"`
	// BatchSize is how many texts one request carries; 0 means
	// DefaultBatchSize.
	BatchSize int `json:"batch_size,omitempty" yaml:"batch_size,omitempty"`
}

// Validate checks the configuration; each error names the field and what
// it accepts.
func (c Config) Validate() error {
	switch c.Kind {
	case OpenAI, Ollama:
	default:
		return fmt.Errorf("embedding kind %q: use openai or ollama", c.Kind)
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("embedding base URL %q: use an http or https address without user info, e.g. http://localhost:11434/", c.BaseURL)
	}
	if strings.TrimSpace(c.Model) == "" {
		return fmt.Errorf("embedding model is empty: name the embedding model, e.g. nomic-embed-text")
	}
	if strings.TrimSpace(c.Provider) == "" {
		return fmt.Errorf("embedding provider name is empty: name the provider for the confidence scheme, e.g. SELF_HOSTED")
	}
	if c.TokenLimit < 0 {
		return fmt.Errorf("embedding token limit %d: use a positive number of tokens, or 0 for %d", c.TokenLimit, DefaultTokenLimit)
	}
	if c.BatchSize < 0 {
		return fmt.Errorf("embedding batch size %d: use a positive number of texts per request, or 0 for %d", c.BatchSize, DefaultBatchSize)
	}
	return nil
}

// maxResponse caps what an embedding server may send back.
const maxResponse = 64 << 20

// New builds the client for an embedding configuration. apiKey may be empty
// (Ollama, local servers); client nil means a default client.
func New(c Config, apiKey string, client *http.Client) (Embedder, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	base := c.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	h := httpEmbedder{model: c.Model, apiKey: apiKey, client: secretClient(client),
		limits: Limits{TokenLimit: c.TokenLimit, BatchSize: c.BatchSize}}
	switch c.Kind {
	case OpenAI:
		h.url = base + "embeddings"
		return &openAIEmbedder{h}, nil
	case Ollama:
		h.url = base + "api/embed"
		return &ollamaEmbedder{h}, nil
	}
	return nil, fmt.Errorf("embedding kind %q: use openai or ollama", c.Kind)
}

// secretClient is the one place the client that carries the API key is
// made: the key travels in a header and the body holds mail or document
// text, so redirects stay within the configured origin.
func secretClient(base *http.Client) *http.Client {
	return credhttp.Client(base, "the base URL of the embedding provider")
}

type httpEmbedder struct {
	url, model, apiKey string
	client             *http.Client
	limits             Limits
}

func (h httpEmbedder) Model() string { return h.model }

// Limits reports the configured limits (zero fields: defaults).
func (h httpEmbedder) Limits() Limits { return h.limits }

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
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("embedding response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		// The body may echo the input (mail or document text), so it is
		// not quoted.
		return fmt.Errorf("embedding provider answered HTTP %d", resp.StatusCode)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("embedding response is not the expected JSON: %w", err)
	}
	return nil
}

// Check verifies an embedding answer: n vectors, none empty, all of the
// first one's size, every value finite.
func Check(vs [][]float32, n int) ([][]float32, error) {
	if len(vs) != n {
		return nil, fmt.Errorf("embedding provider returned %d vectors for %d texts", len(vs), n)
	}
	for i, v := range vs {
		if len(v) == 0 || len(v) != len(vs[0]) {
			return nil, fmt.Errorf("embedding provider returned vector %d with %d dimensions (first has %d)", i, len(v), len(vs[0]))
		}
		for _, f := range v {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("embedding provider returned vector %d with a value that is not a finite number", i)
			}
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
	return Check(out, len(texts))
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
	return Check(resp.Embeddings, len(texts))
}
