package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/credhttp"
)

// Transport sends requests to a provider, retrying what is worth retrying.
// The zero value is usable.
type Transport struct {
	// Client sends the requests; nil means a client with no overall timeout
	// (streams may run long; idle streams are cut by the adapters).
	Client *http.Client
	// MaxAttempts is the number of tries for 429 and 5xx answers; 0 means 4.
	MaxAttempts int
	// BaseDelay is the first backoff; 0 means 1s. It doubles per try.
	BaseDelay time.Duration
	// MaxDelay caps one wait, Retry-After included; 0 means 30s.
	MaxDelay time.Duration
	// Sleep waits; tests replace it. nil waits on a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Setting names where the provider's address was configured, for the
	// error when a redirect would take the key to another origin (which is
	// never followed); empty means "the provider's base URL".
	Setting string
}

// HTTPError is a provider's non-2xx answer.
type HTTPError struct {
	StatusCode int
	// Message is the provider's error message when it sent one, else an
	// excerpt of the body.
	Message string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("provider answered HTTP %d: %s", e.StatusCode, e.Message)
}

// Retryable reports whether a status is worth another try.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// PostJSON posts body and returns the response once it has a 2xx status.
// 429 and 5xx are retried with backoff, honouring Retry-After, before any
// byte of the answer was handed on, so nothing the user saw is repeated.
func (t *Transport) PostJSON(ctx context.Context, url string, header http.Header, body []byte) (*http.Response, error) {
	setting := t.Setting
	if setting == "" {
		setting = "the provider's base URL"
	}
	// The key travels in headers Go does not strip on a redirect to another
	// host (x-api-key), so redirects stay within the configured origin.
	client := credhttp.Client(t.Client, setting)
	attempts := t.MaxAttempts
	if attempts <= 0 {
		attempts = 4
	}
	delay := t.BaseDelay
	if delay <= 0 {
		delay = time.Second
	}
	maxDelay := t.MaxDelay
	if maxDelay <= 0 {
		maxDelay = 30 * time.Second
	}
	sleep := t.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	var lastErr error
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		if req.Header.Get("Accept") == "" {
			req.Header.Set("Accept", "text/event-stream, application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if rerr, ok := credhttp.AsRedirectError(err); ok {
				return nil, rerr
			}
			lastErr = err
			if attempt >= attempts {
				return nil, fmt.Errorf("could not reach the provider after %d attempts: %w", attempt, lastErr)
			}
			if err := sleep(ctx, min(delay, maxDelay)); err != nil {
				return nil, err
			}
			delay *= 2
			continue
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		herr := readHTTPError(resp)
		if !Retryable(resp.StatusCode) || attempt >= attempts {
			return nil, herr
		}
		wait := min(delay, maxDelay)
		if ra, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
			wait = min(ra, maxDelay)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		delay *= 2
	}
}

func readHTTPError(resp *http.Response) *HTTPError {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &HTTPError{StatusCode: resp.StatusCode, Message: ErrorMessage(b)}
}

// ErrorMessage extracts a provider's error message from a body ({"error":
// {"message": …}}, {"error": "…"}, {"message": …}), or returns a short,
// single-line excerpt of it.
func ErrorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		if len(v.Error) > 0 {
			var inner struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			}
			if json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
				return inner.Message
			}
			var s string
			if json.Unmarshal(v.Error, &s) == nil && s != "" {
				return s
			}
		}
		if v.Message != "" {
			return v.Message
		}
	}
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

func retryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := time.Until(t)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
