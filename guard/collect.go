package guard

import (
	"context"
	"sync"
)

// Collector gathers what the filter did under one context (see
// WithCollector), apart from the Filter's Reporter: a surface that runs
// several chats at once, such as `steward serve`, tells each chat only what
// was filtered for it. It is safe for concurrent use.
type Collector struct {
	mu      sync.Mutex
	pending pendingReport
}

type collectorKey struct{}

// WithCollector returns a context under which every text the filter checks
// is reported to c rather than to the Filter's Reporter, until c.Take is
// called: a surface takes the report after each tool call, so each report
// covers one action.
func WithCollector(ctx context.Context, c *Collector) context.Context {
	return context.WithValue(ctx, collectorKey{}, c)
}

// CollectorFrom returns the collector of ctx, nil when it has none.
func CollectorFrom(ctx context.Context) *Collector { return collectorFrom(ctx) }

func collectorFrom(ctx context.Context) *Collector {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Value(collectorKey{}).(*Collector)
	return c
}

// Take returns what was collected since the last call; ok is false when
// nothing was removed and nothing went unchecked.
func (c *Collector) Take() (r Report, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending.empty() {
		return Report{}, false
	}
	r = c.pending.report()
	c.pending = pendingReport{}
	return r, true
}

func (c *Collector) add(texts []Text, out []Outcome) (removed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, t := range texts {
		c.pending.add(t, out[i])
		removed = removed || len(out[i].Findings) > 0
	}
	return removed
}
