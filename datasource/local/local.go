package local

import (
	"time"

	"github.com/stewardhq/steward/embed"
)

// Spec is one local data source as an indexing run needs it.
type Spec struct {
	// ID is the data source's ID; the index keeps each source apart by it.
	ID string
	// Path is the folder, or the file of a file source; it must be
	// absolute.
	Path string
	// File is true for a file source.
	File bool
	// Embedder is the source's embedding provider; nil indexes words only.
	Embedder embed.Embedder
	// MaxChunkTokens is the most tokens of the embedding model a chunk
	// holds; 0 means the provider's token limit (embed.LimitsOf), as in
	// the reference. OverlapTokens is how many tokens a chunk repeats of
	// the one before; 0 means DefaultOverlapTokens, a negative value no
	// overlap. Both are clamped as the reference does (overlap below
	// max).
	MaxChunkTokens, OverlapTokens int
	// MaxFileBytes skips larger files (reported); 0 means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
}

// Defaults of Spec.
const (
	DefaultOverlapTokens       = 300
	DefaultMaxFileBytes  int64 = 64 << 20
)

// Progress is what a run reports while it works.
type Progress struct {
	// Files is how many files of a supported kind the source holds, and
	// FilesDone how many of them this run has dealt with so far
	// (unchanged ones included).
	Files, FilesDone int
	// Chunks is how many chunks this run has stored, Embedded how many it
	// has embedded.
	Chunks, Embedded int
	// Bytes is how many bytes of files this run has read.
	Bytes int64
	// Elapsed is the time since the run started.
	Elapsed time.Duration
}

// Skipped is a file the run could not index.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Stats is what a run did.
type Stats struct {
	Added, Changed, Removed, Renamed, Unchanged int
	// Chunks is how many chunks the run stored; Embedded how many it
	// embedded (also for chunks stored by an earlier, interrupted run).
	Chunks, Embedded int
	// Skipped lists the files that could not be indexed, this run or (not
	// changed since) an earlier one, ordered by path.
	Skipped []Skipped
	// EmbeddingError tells why some chunks could not be embedded; they are
	// found by words meanwhile and embedded by the next run.
	EmbeddingError string
	// WordsOnly is true when the source has no embedding provider: it is
	// searched by words alone.
	WordsOnly bool
	// Rebuilt is true when the chunking changed (another tokenizer, chunk
	// size or overlap) and every document was cut anew.
	Rebuilt bool
}

// Query is a search of one source.
type Query struct {
	// Text is the query; a blank one finds nothing.
	Text string
	// Limit is how many hits to return (the page size), Offset how many
	// of the best to skip first (for page p: (p-1)*Limit).
	Limit, Offset int
	// Embedder embeds the query; nil searches by words only. It must be
	// the source's embedding provider: vectors of another model are not
	// compared.
	Embedder embed.Embedder
}

// Hit is one passage found.
type Hit struct {
	// Path is the file's absolute path, RelPath its path inside the
	// source's folder (the file name for a file source).
	Path, RelPath string
	// Title is the document's own title where it names one (HTML title,
	// document properties, first Markdown heading), else the file name.
	Title string
	// Text is the chunk's text.
	Text string
	// Chunk is the chunk's index in its document, from 0.
	Chunk int
	// Page is the page (PDF) or slide (presentation) the chunk starts on,
	// from 1; 0 when the format has none.
	Page int
	// Kind is the document's kind (see the Kind constants).
	Kind string
	// Score is the fused score: higher is better.
	Score float64
	// Modified is the file's modification time.
	Modified time.Time
}

// Status describes what the index holds of a source.
type Status struct {
	// Indexed is false when no run has stored anything for the source.
	Indexed bool
	// Documents and Chunks count what is searchable; Embedded counts the
	// chunks with a vector of Model.
	Documents, Chunks, Embedded int
	// Model is the embedding model of the last run ("" for words only).
	Model string
	// Bytes is the total size of the indexed files.
	Bytes int64
	// LastRun is when the last run ended; Complete tells whether it went
	// through (false after a run that was cancelled or killed).
	LastRun  time.Time
	Complete bool
	// Skipped lists the files that could not be indexed.
	Skipped []Skipped
}
