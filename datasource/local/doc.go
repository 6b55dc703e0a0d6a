// Package local indexes a local data source, one folder (with its
// subfolders) or one file, into the local document index and searches it.
//
// A run (Index.Sync) walks the source, compares every file with what the
// index holds (size and modification time, then a SHA-256 of the content),
// extracts the text of added and changed files (package
// datasource/extract), cuts it into chunks of the embedding model's tokens
// with overlap, stores the chunks (searchable by words at once) and embeds
// them through the source's embedding provider. A renamed or copied file
// keeps or copies its chunks and vectors instead of being embedded again;
// a removed file leaves the index. Each file is written in one
// transaction and vectors are stored after their chunks, so a run killed
// at any point leaves a consistent index and the next run picks up where
// it stopped. A file that cannot be read is reported by name and reason
// and skipped, never fatal; one that failed for good (no text, broken
// format) is not read again until it changes.
//
// Search (Index.Search) ranks the chunks of one source by words (bm25)
// and, when a query embedder of the source's model is given, by meaning
// (cosine), fused by reciprocal rank.
//
// The package reads only the files of the source and talks to no server
// but the embedding provider it is handed; the SQL lives in
// store/docindex. It never logs a file's content or the text of a query.
package local
