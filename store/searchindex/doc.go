// Package searchindex is the machinery the local search indexes share (the
// mail index, store/mailindex, and the document index, store/docindex):
// SQLite opened in WAL mode with FTS5 and Steward's own tokenizer, schema
// migrations by PRAGMA user_version, bm25 with the counts of common words
// kept apart, vectors stored beside the chunks (VectorSchema, StoreVectors),
// held in memory in blocks and compared by exact cosine, a top-k heap, reciprocal rank fusion, batched FTS5 writes and
// the readers of ID lists.
//
// It knows no mail and no document. An index that uses the word machinery
// follows one convention: its chunks live in a table `chunks` with an
// INTEGER PRIMARY KEY `id`, their text in the FTS5 table `chunks_fts`
// (rowid = chunk id) created by WordsSchema, which also creates the
// vocabulary `chunks_vocab` and the common-word counts `term_stats` and
// `term_stats_meta`. Like every store room, it is the only kind of code
// that speaks SQL; it opens no connection but to its SQLite file.
package searchindex
