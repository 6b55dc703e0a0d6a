package responses

import (
	"context"
	"net/http"
	"time"

	"github.com/stewardhq/steward/llm"
)

// DefaultIdleTimeout is how long a stream may stay silent before the round
// fails. Reasoning models can think for minutes without sending an event,
// so it is generous.
const DefaultIdleTimeout = 5 * time.Minute

// ErrIdle is wrapped by the error of a round whose stream stayed silent
// longer than the idle timeout. It is llm.ErrIdle.
var ErrIdle = llm.ErrIdle

// send posts body and returns the answer with its body guarded by an idle
// timer (llm.PostIdle); idle 0 means DefaultIdleTimeout. stop releases
// everything and must always be called.
func send(ctx context.Context, tr *llm.Transport, url string, h http.Header, body []byte, idle time.Duration) (resp *http.Response, stop func(), err error) {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	return llm.PostIdle(ctx, tr, url, h, body, idle)
}
