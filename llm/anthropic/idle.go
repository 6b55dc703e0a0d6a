package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/stewardhq/steward/llm"
)

// DefaultIdleTimeout is how long a stream may stay silent before the round
// fails. Anthropic sends ping events while the model works,
// so a silent stream is a dead one; the limit still leaves room for slow hosts.
const DefaultIdleTimeout = 5 * time.Minute

// ErrIdle is wrapped by the error of a round whose stream stayed silent
// longer than the idle timeout.
var ErrIdle = errors.New("the provider's stream stayed silent too long")

// send posts body and returns the answer with its body guarded by an idle
// timer: every byte read restarts it, and when it runs out the request is
// cancelled. stop releases everything and must always be called.
func send(ctx context.Context, tr *llm.Transport, url string, h http.Header, body []byte, idle time.Duration) (resp *http.Response, stop func(), err error) {
	if tr == nil {
		tr = &llm.Transport{}
	}
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	rctx, cancel := context.WithCancelCause(ctx)
	resp, err = tr.PostJSON(rctx, url, h, body)
	if err != nil {
		cancel(nil)
		return nil, nil, err
	}
	timer := time.AfterFunc(idle, func() { cancel(ErrIdle) })
	ib := &idleBody{rc: resp.Body, timer: timer, idle: idle, ctx: rctx}
	resp.Body = ib
	stop = func() {
		timer.Stop()
		ib.rc.Close()
		cancel(nil)
	}
	return resp, stop, nil
}

type idleBody struct {
	rc    io.ReadCloser
	timer *time.Timer
	idle  time.Duration
	ctx   context.Context
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF && errors.Is(context.Cause(b.ctx), ErrIdle) {
		return n, fmt.Errorf("nothing arrived for %s: %w", b.idle, ErrIdle)
	}
	return n, err
}

func (b *idleBody) Close() error { return b.rc.Close() }
