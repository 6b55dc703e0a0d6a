package webtest

import (
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/stewardhq/steward/guard"
)

// Discard returns a logger that writes nowhere.
func Discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Reports collects what the injection filter reports. The zero value is
// ready.
type Reports struct {
	mu  sync.Mutex
	all []guard.Report
}

// Report records rep.
func (r *Reports) Report(rep guard.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rep)
}

// Count returns how many reports arrived.
func (r *Reports) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.all)
}

// NewFilter returns an injection filter that reports to r and logs
// nowhere.
func NewFilter(r *Reports) *guard.Filter {
	return guard.New(guard.Options{Reporter: r, Logger: Discard()})
}

// LongText is readable page text of exactly n characters.
func LongText(n int) string {
	s := "The harbour authority published its annual report on shipping volumes, dredging work and the new ferry timetable. "
	return strings.Repeat(s, n/len(s)+1)[:n]
}
