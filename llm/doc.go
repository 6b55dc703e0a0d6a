// Package llm is how Steward talks to models: the catalogue of providers and
// hosts with their capabilities, the Adapter contract every wire API
// implements, and what the adapters share (SSE reading, HTTP with retries).
//
// The wire formats live in the subpackages chatcompletions, responses and
// anthropic. This package and its adapters know no policy and no particular
// tool; the loop never learns which wire shape was used.
package llm
