package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret wherever it appears.
const Mask = "[REDACTED]"

// MinLen is the shortest secret that is redacted: shorter strings stand in
// ordinary text too often to be taken out of it without garbling it.
const MinLen = 6

// Set holds the secrets to redact. The zero value is an empty set ready to
// use; a nil *Set redacts nothing. It is safe for concurrent use.
type Set struct {
	mu      sync.RWMutex
	secrets []string // longest first
	maxLen  int
}

// Add learns a secret, in the forms it may be written in: as it is, and as
// it reads inside a JSON string. Blank or short values are ignored.
func (s *Set) Add(secret string) {
	if s == nil {
		return
	}
	secret = strings.TrimSpace(secret)
	if len(secret) < MinLen {
		return
	}
	forms := []string{secret}
	if b, err := json.Marshal(secret); err == nil {
		if q := string(b[1 : len(b)-1]); q != secret {
			forms = append(forms, q)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range forms {
		known := false
		for _, k := range s.secrets {
			known = known || k == f
		}
		if !known {
			s.secrets = append(s.secrets, f)
			s.maxLen = max(s.maxLen, len(f))
		}
	}
	// Longest first, so that a secret holding another is masked whole.
	sort.SliceStable(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
}

// Len is the number of forms held.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.secrets)
}

// String returns in with every secret replaced by Mask.
func (s *Set) String(in string) string {
	if s == nil {
		return in
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, k := range s.secrets {
		if strings.Contains(in, k) {
			in = strings.ReplaceAll(in, k, Mask)
		}
	}
	return in
}

// Error returns err's message redacted, as an error; nil stays nil.
func (s *Set) Error(err error) error {
	if err == nil || s == nil {
		return err
	}
	msg := err.Error()
	if red := s.String(msg); red != msg {
		return redactedError{msg: red, err: err}
	}
	return err
}

// redactedError keeps the chain for errors.Is and errors.As and shows only
// the redacted message.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// heldBack is how many bytes at the end of buf could begin a secret.
func (s *Set) heldBack(buf []byte) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	hold := 0
	for _, k := range s.secrets {
		for n := min(len(k)-1, len(buf)); n > hold; n-- {
			if bytes.HasSuffix(buf, []byte(k[:n])) {
				hold = n
				break
			}
		}
	}
	return hold
}

// Writer redacts what is written through it to w. A secret split across
// two writes is still caught: the bytes at the end of a write that could
// begin a secret wait for the next write, or for Flush. Call Flush when a
// stream pauses (an answer ends) and before the process exits.
type Writer struct {
	set *Set
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

// NewWriter returns a Writer to w; a nil set passes everything through.
func NewWriter(set *Set, w io.Writer) *Writer { return &Writer{set: set, w: w} }

// Write implements io.Writer. It reports len(p) written once what may be
// shown was handed on.
func (rw *Writer) Write(p []byte) (int, error) {
	if rw.set == nil || rw.set.Len() == 0 {
		rw.mu.Lock()
		defer rw.mu.Unlock()
		if len(rw.buf) > 0 {
			if err := rw.flushLocked(); err != nil {
				return 0, err
			}
		}
		return rw.w.Write(p)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.buf = append(rw.buf, p...)
	out := []byte(rw.set.String(string(rw.buf)))
	hold := rw.set.heldBack(out)
	if _, err := rw.w.Write(out[:len(out)-hold]); err != nil {
		return 0, err
	}
	rw.buf = append(rw.buf[:0], out[len(out)-hold:]...)
	return len(p), nil
}

// Flush writes what was held back.
func (rw *Writer) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.flushLocked()
}

func (rw *Writer) flushLocked() error {
	if len(rw.buf) == 0 {
		return nil
	}
	out := rw.set.String(string(rw.buf))
	rw.buf = rw.buf[:0]
	_, err := io.WriteString(rw.w, out)
	return err
}
