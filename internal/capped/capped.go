// Package capped reads at most a number of bytes of a stream and then
// fails with an error of the caller's choosing. io.LimitReader answers
// io.EOF at its limit, which a caller cannot tell from the stream's own
// end; a capped Reader says the stream was too large.
//
// It imports nothing of Steward's and opens nothing.
package capped

import "io"

// Reader reads from R until N bytes were read, then fails with Err (which
// must not be nil). It reads no byte beyond N.
type Reader struct {
	R   io.Reader
	N   int64
	Err error
}

// Read implements io.Reader.
func (c *Reader) Read(p []byte) (int, error) {
	if c.N <= 0 {
		return 0, c.Err
	}
	if int64(len(p)) > c.N {
		p = p[:c.N]
	}
	n, err := c.R.Read(p)
	c.N -= int64(n)
	return n, err
}
