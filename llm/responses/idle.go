package responses

import (
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

// idle is the idle timeout of a round: IdleTimeout, or DefaultIdleTimeout
// when that is not positive.
func (o Options) idle() time.Duration {
	if o.IdleTimeout <= 0 {
		return DefaultIdleTimeout
	}
	return o.IdleTimeout
}
