package web

import (
	"errors"
	"fmt"
	"net"
)

// Reason names why a target was refused by the network policy.
type Reason string

// The reasons a hop can be refused, one per check of the retrieval service.
const (
	ReasonInvalidAddress         Reason = "INVALID_ADDRESS"
	ReasonUnsupportedScheme      Reason = "UNSUPPORTED_SCHEME"
	ReasonTargetNotAllowed       Reason = "TARGET_NOT_ALLOWED"
	ReasonLocalHostName          Reason = "LOCAL_HOST_NAME"
	ReasonMetadataHost           Reason = "METADATA_HOST"
	ReasonNonStandardIP          Reason = "NON_STANDARD_IP_NOTATION"
	ReasonNeverAllowedAddress    Reason = "NEVER_ALLOWED_ADDRESS"
	ReasonPrivateHostNotAllowed  Reason = "PRIVATE_HOST_NOT_ALLOWED"
	ReasonInsufficientConfidence Reason = "INSUFFICIENT_PROVIDER_CONFIDENCE"
	ReasonRedirectToLocalNetwork Reason = "REDIRECT_TO_LOCAL_NETWORK"
)

// BlockedError is a refusal by the network policy: the target is not read,
// and asking again will not change that. Its message never contains the
// refused address. Compare with errors.Is against the Err… values below, or
// use IsBlocked for any refusal.
type BlockedError struct {
	Reason Reason
	msg    string
}

// Error returns a message that names the reason, never the address.
func (e *BlockedError) Error() string { return e.msg }

// Is matches another BlockedError with the same reason, so that
// errors.Is(err, ErrLocalHostName) works through wrapping.
func (e *BlockedError) Is(target error) bool {
	t, ok := target.(*BlockedError)
	return ok && t.Reason == e.Reason
}

// Policy refusals. None of their messages repeat the address.
var (
	ErrInvalidAddress         = &BlockedError{ReasonInvalidAddress, "the web address is not a valid absolute http or https address with a host"}
	ErrUnsupportedScheme      = &BlockedError{ReasonUnsupportedScheme, "only http and https addresses can be read"}
	ErrTargetNotAllowed       = &BlockedError{ReasonTargetNotAllowed, "the address lies outside the targets this request may reach"}
	ErrLocalHostName          = &BlockedError{ReasonLocalHostName, "the host name refers to this computer, which cannot be read"}
	ErrMetadataHost           = &BlockedError{ReasonMetadataHost, "the host is the configuration service of a cloud instance, which cannot be read"}
	ErrNonStandardIP          = &BlockedError{ReasonNonStandardIP, "the host is an IP address in a non-standard notation (decimal, octal, hexadecimal or shortened); write it as four decimal parts"}
	ErrNeverAllowedAddress    = &BlockedError{ReasonNeverAllowedAddress, "the host resolves to a loopback, link-local, multicast, unspecified or reserved network address, which is never read"}
	ErrPrivateHostNotAllowed  = &BlockedError{ReasonPrivateHostNotAllowed, "the host resolves to a private network address and is not allowed for this request"}
	ErrInsufficientConfidence = &BlockedError{ReasonInsufficientConfidence,
		"the host is on a private network; it is allowed, but only a provider with HIGH confidence may read it"}
	ErrRedirectToLocalNetwork = &BlockedError{ReasonRedirectToLocalNetwork,
		"the page redirected to a private or loopback network address, which is only read when you name such an address yourself"}
)

// IsBlocked reports whether err is a refusal by the network policy (as
// opposed to a failure such as a timeout or an HTTP error).
func IsBlocked(err error) bool {
	var b *BlockedError
	return errors.As(err, &b)
}

// Failures: the target was allowed, but reading it did not work.
var (
	ErrNoAddresses             = errors.New("the host name has no addresses")
	ErrTooManyRedirects        = errors.New("the page redirected too many times")
	ErrRedirectLoop            = errors.New("the page redirects in a loop")
	ErrRedirectWithoutLocation = errors.New("the server answered with a redirect but gave no Location to follow")
	ErrBadRedirect             = errors.New("the server redirected to an address that cannot be parsed")
	ErrTooLarge                = errors.New("the response is larger than the size limit")
	ErrUnsupportedContentType  = errors.New("the response is not an HTML page or a text document")
	ErrNotText                 = errors.New("the response is declared as text but does not contain readable text")
	ErrTimeout                 = errors.New("loading the web page timed out")
	// ErrConnectTimeout and ErrHeaderTimeout name the phase that ran out
	// of time; a retrieval error that wraps one also wraps ErrTimeout.
	ErrConnectTimeout = errors.New("connecting to the server timed out")
	ErrHeaderTimeout  = errors.New("the server did not start its answer in time")
	ErrDecode         = errors.New("the response body could not be decoded")
)

// StatusError is a non-2xx answer from the server. Its message carries the
// code and reason, not the address.
type StatusError struct {
	Code   int
	Status string // the reason phrase, e.g. "Not Found"
	// RetryAfter is the server's Retry-After header as sent (seconds or an
	// HTTP date), for 429 and 503 answers; empty when it sent none.
	RetryAfter string
}

// Error returns e.g. "the server returned HTTP 404 (Not Found)".
func (e *StatusError) Error() string {
	if e.Status == "" {
		return fmt.Sprintf("the server returned HTTP %d", e.Code)
	}
	return fmt.Sprintf("the server returned HTTP %d (%s)", e.Code, e.Status)
}

// ResolveError is a failed name lookup. Its message omits the host name.
type ResolveError struct{ Err error }

// Error returns a message without the host name.
func (e *ResolveError) Error() string {
	var dnsErr *net.DNSError
	if errors.As(e.Err, &dnsErr) {
		switch {
		case dnsErr.IsNotFound:
			return "the host name could not be resolved: no such host"
		case dnsErr.IsTimeout:
			return "the host name could not be resolved: the lookup timed out"
		}
		return "the host name could not be resolved: " + quoteOutside(dnsErr.Err, maxQuotedCause)
	}
	return "the host name could not be resolved"
}

// Unwrap returns the resolver's error.
func (e *ResolveError) Unwrap() error { return e.Err }

// FetchError is a failed connection or request. Its message names the
// network error without repeating the URL (net/http's url.Error would).
type FetchError struct{ Err error }

// Error returns "the page could not be loaded: <cause>", the cause cut to
// 300 characters: it may quote what the server sent, such as a malformed
// header line of any length.
func (e *FetchError) Error() string {
	return "the page could not be loaded: " + quoteOutside(e.Err.Error(), maxQuotedCause)
}

// Unwrap returns the cause.
func (e *FetchError) Unwrap() error { return e.Err }
