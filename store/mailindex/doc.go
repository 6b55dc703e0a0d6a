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
// storing them never rewrites a chunk. A word search chooses between
// ranking the best chunks of the whole table and ranking only the chunks
// a selective filter leaves; both give the same answer.
package mailindex
