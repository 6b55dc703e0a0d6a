package web

import "github.com/stewardhq/steward/internal/textcut"

// The longest text from a server an error message of this package quotes,
// in characters. A server chooses its header lines and content types as
// freely as its pages; an error only needs enough of them to be told apart.
const (
	maxQuotedType  = 100 // a content type, charset or encoding name
	maxQuotedCause = 300 // a transport error, which may quote a header line
)

// quoteOutside returns text that came from a server for an error message:
// valid UTF-8, control characters as spaces, at most max characters (the
// last one "…" when it was cut). The prompt-injection filter still runs
// over the text of every failed call (loop.RunContext.FilterError); this
// only keeps what it has to read short. A refusal (BlockedError) never
// quotes a server.
func quoteOutside(s string, max int) string { return textcut.Readable(s, max, false) }
