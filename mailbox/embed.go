package mailbox

import (
	"context"
	"fmt"
	"net/http"

	"github.com/stewardhq/steward/embed"
)

// Embedder turns texts into vectors. The mailbox's embedding provider
// receives queries and mail text through it.
type Embedder = embed.Embedder

// NewEmbedder builds the client for an embedding configuration (see
// embed.New).
func NewEmbedder(e Embedding, apiKey string, client *http.Client) (Embedder, error) {
	return embed.New(e, apiKey, client)
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
