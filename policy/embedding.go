package policy

import "fmt"

// LevelRule says how a source reads the level it requires of every
// provider that sees its content.
type LevelRule int

const (
	// MinimumLevel reads the level as a minimum, as a tool's or a data
	// source's: a provider at or above it passes, and NONE lets every
	// provider through (see Allows).
	MinimumLevel LevelRule = iota
	// OpenLevelsOnly opens the source only on VERY_LOW to HIGH; NONE,
	// UNTRUSTED and UNKNOWN would let almost every provider through, so
	// they close it to all (a mailbox; see OpenLevel).
	OpenLevelsOnly
)

// EmbeddingRefusedError says why an embedding provider may not receive the
// content of a source (a mailbox, a data source) or the queries written
// about it. The source is then indexed and searched by words only.
type EmbeddingRefusedError struct {
	// Required is the level the source demands of every provider that sees
	// its content.
	Required Confidence
	// Embedding is the embedding provider's level under the organization's
	// scheme.
	Embedding Confidence
	// Closed is true when the required level closes the source to every
	// provider (OpenLevelsOnly below VERY_LOW).
	Closed bool
}

func (e *EmbeddingRefusedError) Error() string {
	if e.Closed {
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
// may receive the content of a source that requires level required, read
// by rule, and the queries asked of it: the embedding provider has to meet
// the source's level exactly as a chat provider has to, and a level that
// closes the source admits none. It returns nil when it may, and an
// *EmbeddingRefusedError naming both levels when not. Mailboxes
// (OpenLevelsOnly) and data sources (MinimumLevel) decide with it.
func CheckEmbedding(rule LevelRule, required, embedding Confidence) error {
	if !required.Valid() || (rule == OpenLevelsOnly && !OpenLevel(required)) {
		return &EmbeddingRefusedError{Required: required, Embedding: embedding, Closed: true}
	}
	if !embedding.Valid() || !Allows(embedding, required) {
		return &EmbeddingRefusedError{Required: required, Embedding: embedding}
	}
	return nil
}
