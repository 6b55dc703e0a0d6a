package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ErrIdle is wrapped by the error of a round whose stream stayed silent
// longer than the idle timeout given to PostIdle.
var ErrIdle = errors.New("the provider's stream stayed silent too long")

// PostIdle posts body through tr (nil means a zero Transport) like
// Transport.PostJSON, and returns the answer with its body guarded by an
// idle timer: every byte read restarts it, and when it runs out the request
// is cancelled and the read fails with an error wrapping ErrIdle. idle must
// be positive; adapters resolve their own default first. stop releases
// everything and must always be called when err is nil.
func PostIdle(ctx context.Context, tr *Transport, url string, h http.Header, body []byte, idle time.Duration) (resp *http.Response, stop func(), err error) {
	if tr == nil {
		tr = &Transport{}
	}
	if idle <= 0 {
		return nil, nil, fmt.Errorf("idle timeout %s: it must be positive", idle)
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

// idleBody restarts the idle timer on every byte read and names the idle
// timeout as the cause of a read that failed because of it.
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
