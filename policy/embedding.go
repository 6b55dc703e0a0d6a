package policy

import "fmt"

// EmbeddingRefusedError says why an embedding provider may not receive the
// content of a source (a mailbox, a data source) or the queries written
// about it. The source is then searched by words only.
type EmbeddingRefusedError struct {
	// Required is the level the source demands of every provider that sees
	// its content.
	Required Confidence
	// Embedding is the embedding provider's level under the organization's
	// scheme.
	Embedding Confidence
}

func (e *EmbeddingRefusedError) Error() string {
	if !OpenLevel(e.Required) {
		return fmt.Sprintf("the source requires %s, which lets no provider see its content, so nothing is sent to its embedding provider", e.Required)
	}
	return fmt.Sprintf("the embedding provider has confidence %s under the organization's scheme, below the %s the source requires, so nothing is sent to it", e.Embedding, e.Required)
}

// OpenLevel reports whether a source's required level lets some provider
// see its content: VERY_LOW to HIGH. NONE, UNTRUSTED and UNKNOWN would let
// almost every provider through, so they close the source instead.
func OpenLevel(required Confidence) bool {
	return required.Valid() && required >= VeryLow
}

// CheckEmbedding decides whether an embedding provider at level embedding
// may receive the content of a source that requires level required, and
// the queries asked of it: the embedding provider has to meet the source's
// level exactly as a chat provider has to, and a closed level admits none.
// It returns nil when it may, and an *EmbeddingRefusedError naming both
// levels when not. Mailboxes and data sources decide with it.
func CheckEmbedding(required, embedding Confidence) error {
	if !OpenLevel(required) || !embedding.Valid() || embedding < required {
		return &EmbeddingRefusedError{Required: required, Embedding: embedding}
	}
	return nil
}
