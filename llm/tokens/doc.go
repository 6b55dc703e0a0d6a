// Package tokens counts, offline, what the offered tools and their
// instructions add to a request, with a tiktoken-compatible tokenizer
// (o200k_base or cl100k_base, compiled into the binary).
//
// The count is exact tokenization for models that use these OpenAI
// encodings; for every other model it is an estimate, typically within 10 to
// 15 percent, and the provider's reported usage is the authority. The
// package never contacts the network and never downloads vocabularies.
package tokens
