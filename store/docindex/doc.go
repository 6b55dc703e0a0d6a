// Package docindex is the local document index of the local data sources:
// SQLite on disk in WAL mode (docs.db beside the mail index) with each
// source's documents (path, size, modification time, SHA-256 of the
// content, kind, title), their text chunks searchable by words (FTS5 with
// Steward's tokenizer, CJK in pairs, bm25) and by meaning (float32 vectors
// compared by exact cosine in memory), fused by reciprocal rank, and the
// files that could not be read.
//
// It shares the mail index's machinery (store/searchindex) and its
// conventions: chunks in `chunks`, their text in `chunks_fts`, vectors in
// `embeddings` keyed by chunk with the model that made them. It never
// reads a source's files and never contacts an embedding provider: the
// package datasource/local does that and hands the results here. Every
// write is one transaction, so an indexer killed at any point leaves each
// document either as it was or wholly replaced.
//
// A chunk carries a hash of its text; a chunk stored without a vector
// takes the vector of a chunk of the same source with the same text, so a
// changed file re-embeds only its changed chunks and a copied file none.
//
// A word search ranks by bm25 as the mail index does: a query whose words
// are all rarer than the common cut is ranked by FTS5 over every match; a
// query with a common word (held by more than 1,000 chunks or one in a
// hundred) is ranked in Go with the same bm25 over a bounded set of
// candidates: the best chunks by its rarer words, else the chunks holding
// all (then any) of its common words.
package docindex
