package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// RoundIO is one round of a streaming adapter on the wire, as PostRound
// drives it. What the body holds and how an answer reads stay with the
// adapter.
type RoundIO[R any] struct {
	// API names the wire API in errors, e.g. "Messages" or "Responses".
	API string
	// URL is the endpoint; Header the request headers.
	URL    string
	Header http.Header
	// Idle cuts a stream that sends nothing for this long (see PostIdle);
	// it must be positive.
	Idle time.Duration
	// Build writes the request body. It is called once more after Retry
	// said yes.
	Build func() ([]byte, error)
	// Retry, when not nil, reports whether a post that failed with err,
	// having sent body, is worth one more try; saying yes, it changes what
	// Build writes next. It is asked at most once per round.
	Retry func(err error, body []byte) bool
	// Whole reads an answer sent as one JSON document, from a host that
	// ignored stream:true.
	Whole func(r io.Reader) (R, error)
	// Stream reads an answer sent as an event stream.
	Stream func(r io.Reader) (R, error)
}

// PostRound sends one round through tr (nil means a zero Transport) with
// the idle timeout, retries once where rio.Retry says so, and reads the
// answer with rio.Whole or rio.Stream by its content type. A read that
// fails because ctx ended is reported as an interrupted stream wrapping
// ctx's cause; every other error comes back as it is.
func PostRound[R any](ctx context.Context, tr *Transport, rio RoundIO[R]) (R, error) {
	var zero R
	body, err := rio.Build()
	if err != nil {
		return zero, fmt.Errorf("writing the %s request: %w", rio.API, err)
	}
	resp, stop, err := PostIdle(ctx, tr, rio.URL, rio.Header, body, rio.Idle)
	if err != nil && rio.Retry != nil && rio.Retry(err, body) {
		if body, err = rio.Build(); err != nil {
			return zero, fmt.Errorf("writing the %s request: %w", rio.API, err)
		}
		resp, stop, err = PostIdle(ctx, tr, rio.URL, rio.Header, body, rio.Idle)
	}
	if err != nil {
		return zero, err
	}
	defer stop()
	var res R
	if IsJSONContent(resp.Header.Get("Content-Type")) {
		res, err = rio.Whole(resp.Body)
	} else {
		res, err = rio.Stream(resp.Body)
	}
	if err != nil {
		if ctx.Err() != nil {
			return zero, fmt.Errorf("the %s stream was interrupted: %w", rio.API, context.Cause(ctx))
		}
		return zero, err
	}
	return res, nil
}

// IsJSONContent reports whether a Content-Type names JSON
// (application/json or any +json type).
func IsJSONContent(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// EncodeJSON writes v as compact JSON without escaping <, > and &, so that
// raw blocks and items an adapter sends back keep their bytes.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
