package llm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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
	// OnRetry, when not nil, hears of every retry just before its wait, so
	// that the user learns why the answer takes longer.
	OnRetry func(RetryNotice)
	// Setting names where the provider's address was configured, for the
	// error when a redirect would take the key to another origin (which is
	// never followed); empty means "the provider's base URL".
	Setting string
}

// RetryNotice describes one retry that is about to happen.
type RetryNotice struct {
	// Attempt is the number of the try about to be made (2 for the first
	// retry); Of is the number of tries allowed.
	Attempt, Of int
	// Wait is how long Steward waits before it.
	Wait time.Duration
	// Reason is what went wrong with the try before.
	Reason error
}

// String reads "retrying (2/4) after 1s: <reason>".
func (n RetryNotice) String() string {
	return fmt.Sprintf("retrying (%d/%d) after %s: %v", n.Attempt, n.Of, n.Wait.Round(time.Millisecond), n.Reason)
}

// ErrIncomplete is wrapped by the error of a round whose stream ended
// before the wire API's end marker (Chat Completions: a finish_reason or
// [DONE]; Responses: response.completed; Messages: message_stop), or broke
// off while it was read. What arrived is not the whole answer.
var ErrIncomplete = errors.New("the provider's stream ended before the answer was complete")

func (t *Transport) attempts() int {
	if t.MaxAttempts <= 0 {
		return 4
	}
	return t.MaxAttempts
}

// backoff is the wait before try attempt (2 for the first retry).
func (t *Transport) backoff(attempt int) time.Duration {
	d := t.BaseDelay
	if d <= 0 {
		d = time.Second
	}
	for i := 2; i < attempt; i++ {
		d *= 2
	}
	return min(d, t.maxDelay())
}

func (t *Transport) maxDelay() time.Duration {
	if t.MaxDelay <= 0 {
		return 30 * time.Second
	}
	return t.MaxDelay
}

// wait announces a retry and waits for it.
func (t *Transport) wait(ctx context.Context, n RetryNotice) error {
	if t.OnRetry != nil {
		t.OnRetry(n)
	}
	sleep := t.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	return sleep(ctx, n.Wait)
}

// RetryEarlyEnd runs round, and runs it again (with the Transport's tries
// and backoff) when it failed with an error wrapping ErrIncomplete before
// any text had been handed to onText: the user saw nothing, so nothing is
// repeated. A stream that ended early after some text is not retried; its
// error comes back as it is. round must be safe to run again.
func RetryEarlyEnd[R any](ctx context.Context, tr *Transport, onText func(string), round func(onText func(string)) (R, error)) (R, error) {
	if tr == nil {
		tr = &Transport{}
	}
	for attempt := 1; ; attempt++ {
		streamed := false
		res, err := round(func(s string) {
			if s != "" {
				streamed = true
			}
			if onText != nil {
				onText(s)
			}
		})
		if err == nil || streamed || !errors.Is(err, ErrIncomplete) || ctx.Err() != nil || attempt >= tr.attempts() {
			return res, err
		}
		if werr := tr.wait(ctx, RetryNotice{Attempt: attempt + 1, Of: tr.attempts(), Wait: tr.backoff(attempt + 1), Reason: err}); werr != nil {
			return res, werr
		}
	}
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

// Retryable reports whether a status is worth another try: a timeout, a
// conflict, rate limiting and server errors may pass; 400, 401, 403, 404
// and the like cannot get better by asking again, nor can 501 and 505.
func Retryable(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return status >= 500
}

// Permanent reports whether an error of sending a request cannot get
// better by sending it again: a malformed address or unsupported scheme, a
// host name that does not exist, a certificate that does not verify, a TLS
// handshake with something that speaks no TLS, a refused redirect, or an
// error that says so itself (a Permanent() bool method returning true,
// such as a dialer's refusal of an address).
func Permanent(err error) bool {
	var says interface{ Permanent() bool }
	if errors.As(err, &says) && says.Permanent() {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		msg := ue.Err.Error()
		if strings.Contains(msg, "unsupported protocol scheme") || strings.Contains(msg, "no Host in request URL") || strings.Contains(msg, "invalid URL") {
			return true
		}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return true
	}
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) || errors.As(err, &header) {
		return true
	}
	// An error a CheckRedirect hook returned (a redirect to another origin
	// refused) reads "Post …: <hook error>" and is the same every time.
	if errors.As(err, &ue) && ue.Err != nil && !isNetErr(ue.Err) && !errors.Is(ue.Err, io.EOF) && !errors.Is(ue.Err, io.ErrUnexpectedEOF) && strings.Contains(ue.Err.Error(), "redirect") {
		return true
	}
	return false
}

func isNetErr(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe)
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
	attempts := t.attempts()
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
			if Permanent(err) {
				return nil, fmt.Errorf("could not reach the provider: %w", err)
			}
			if attempt >= attempts {
				if attempts == 1 {
					return nil, fmt.Errorf("could not reach the provider: %w", err)
				}
				return nil, fmt.Errorf("could not reach the provider after %d attempts: %w", attempt, err)
			}
			if err := t.wait(ctx, RetryNotice{Attempt: attempt + 1, Of: attempts, Wait: t.backoff(attempt + 1), Reason: err}); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		herr := readHTTPError(resp)
		if !Retryable(resp.StatusCode) || attempt >= attempts {
			return nil, herr
		}
		wait := t.backoff(attempt + 1)
		if ra, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
			wait = min(ra, t.maxDelay())
		}
		if err := t.wait(ctx, RetryNotice{Attempt: attempt + 1, Of: attempts, Wait: wait, Reason: herr}); err != nil {
			return nil, err
		}
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
