// Package mailindex is the local index of a user's mailboxes: SQLite on disk
// in WAL mode, with folders and their IMAP sync state, mails, their locations
// (folder and UID), their parts (header block, body text, attachments) and
// text chunks searchable by words (FTS5, bm25) and by meaning (float32
// embeddings compared by exact cosine in Go), fused by reciprocal rank.
//
// It is the only place that speaks SQL for mail. It never contacts a mail
// server or an embedding provider; the mailbox package does that and hands
// the results here. Writes are idempotent and batched in transactions, so a
// sync killed at any point resumes without duplicates or gaps.
//
// The schema carries a version (PRAGMA user_version); Open migrates an
// index made by an older version in one transaction and refuses one made
// by a newer version. Vectors live in their own table keyed by chunk, so
// storing them never rewrites a chunk. Chunks are tokenized by the index's
// own FTS5 tokenizer (see tokenize.go): like unicode61 with diacritics
// removed, except that Chinese, Japanese and Korean text, written without
// spaces, is indexed as overlapping pairs of characters, so a word inside
// a sentence can be found (schema 3 re-indexes older indexes once on
// open). Sender and recipient texts are
// indexed by trigrams, so a filter of three or more characters is a
// lookup.
//
// A word search ranks by bm25. A query whose words are all rarer than the
// common cut (held by at most 1,000 chunks or one in a hundred) is ranked
// by FTS5 over every match, choosing between ranking the best chunks of
// the whole table and ranking only the chunks a selective filter leaves;
// the answers are the same. FTS5 reads a word's whole list to rank it,
// which for a word most chunks hold costs 150-300 ms at 100,000 chunks,
// so a query with a common word is ranked in Go with the same bm25 over
// a bounded set of candidates: all the chunks of a filter that leaves at
// most 400 (exact), else the best chunks by the query's rarer words
// re-ranked by all of them, else the 400 last-indexed chunks holding all
// the common words (200 with a filter). The counts of common words are
// kept in term_stats and counted anew when the chunks grew by a tenth.
package mailindex
