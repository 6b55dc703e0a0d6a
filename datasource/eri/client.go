package eri

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/stewardhq/steward/credhttp"
	"github.com/stewardhq/steward/internal/textcut"
)

// Default limits of the client.
const (
	// InfoTimeout bounds the sign-in and every info call (methods, data
	// source, embeddings, retrieval processes, security requirements): the
	// reference gives the security check and the description 6 s.
	InfoTimeout = 6 * time.Second
	// RetrievalTimeout bounds one retrieval.
	RetrievalTimeout = 30 * time.Second
	// MaxInfoBytes caps an info answer.
	MaxInfoBytes = 1 << 20
	// MaxRetrievalBytes caps a retrieval answer.
	MaxRetrievalBytes = 16 << 20
	// MaxContexts caps how many contexts one retrieval may return.
	MaxContexts = 10_000
)

// Default header names of the sign-in fields, used when the server's
// /auth/methods names none: the reference client's.
const (
	DefaultUsernameHeader = "user"
	DefaultPasswordHeader = "password"
	DefaultTokenHeader    = "Authorization"
	// TokenHeader carries the token /auth returned on every other call
	// (the spec's ERI_Token scheme).
	TokenHeader = "token"
)

// Credentials are what the client signs in with. Secret is a password or
// a token; it is never printed.
type Credentials struct {
	Method   AuthMethod
	Username string
	Secret   string
}

// String never shows the secret.
func (c Credentials) String() string {
	s := "no secret"
	if c.Secret != "" {
		s = "secret set"
	}
	return fmt.Sprintf("%s (user %q, %s)", c.Method, c.Username, s)
}

// GoString never shows the secret.
func (c Credentials) GoString() string { return "eri.Credentials{" + c.String() + "}" }

// LogValue never shows the secret.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Options configure a client.
type Options struct {
	// BaseURL is the server's address ending in a slash, e.g.
	// https://eri.example.org:443/.
	BaseURL *url.URL
	// Credentials sign in at /auth.
	Credentials Credentials
	// HTTPClient sends the requests; nil uses a fresh one. The client
	// follows a redirect only within the server's origin (credhttp).
	HTTPClient *http.Client
	// Setting names the configuration of the server in errors, e.g.
	// "data source handbook (hostname)".
	Setting string
	// InfoTimeout and RetrievalTimeout replace the defaults when set.
	InfoTimeout, RetrievalTimeout time.Duration
}

// Client talks to one ERI server. It is safe for concurrent use.
type Client struct {
	o      Options
	origin string
}

// New returns a client. It checks the address but contacts nothing.
func New(o Options) (*Client, error) {
	if o.BaseURL == nil || (o.BaseURL.Scheme != "https" && o.BaseURL.Scheme != "http") || o.BaseURL.Host == "" {
		return nil, errors.New("eri: the base URL must be an http or https address")
	}
	u := *o.BaseURL
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	o.BaseURL = &u
	if o.Setting == "" {
		o.Setting = "the ERI server's address"
	}
	// The sign-in and the token travel in headers: redirects stay within
	// the server's origin.
	o.HTTPClient = credhttp.Client(o.HTTPClient, o.Setting)
	if o.InfoTimeout <= 0 {
		o.InfoTimeout = InfoTimeout
	}
	if o.RetrievalTimeout <= 0 {
		o.RetrievalTimeout = RetrievalTimeout
	}
	return &Client{o: o, origin: u.Scheme + "://" + u.Host}, nil
}

// Origin is the server's scheme, host and port, for messages.
func (c *Client) Origin() string { return c.origin }

// Error is a call that failed. Its message names the server, the endpoint
// and what went wrong; it never holds a secret, a token, a query or
// content the server sent, except ServerMessage, which is kept apart.
type Error struct {
	// Origin is the server's scheme, host and port.
	Origin string
	// Endpoint is e.g. "POST /retrieval".
	Endpoint string
	// Status is the HTTP status, 0 when none arrived.
	Status int
	// Reason says what went wrong.
	Reason string
	// SignInRefused is true when the server refused the sign-in or the
	// token.
	SignInRefused bool
	// Timeout is true when the call ran out of time.
	Timeout bool
	// ServerMessage is what the server said about a refused sign-in,
	// cleaned to one line of at most 200 characters. It is written by the
	// server: show it to the user, never to a model.
	ServerMessage string
	Err           error
}

func (e *Error) Error() string {
	return fmt.Sprintf("ERI server %s: %s: %s", e.Origin, e.Endpoint, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// AsError returns the *Error inside err.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// call sends one request and decodes the answer strictly into out.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, header http.Header, body any, out any, limit int64, timeout time.Duration) error {
	endpoint := method + " /" + path
	fail := func(status int, reason string, err error) error {
		return &Error{Origin: c.origin, Endpoint: endpoint, Status: status, Reason: reason, Err: err}
	}
	u := c.o.BaseURL.JoinPath(path)
	if query != nil {
		u.RawQuery = query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fail(0, "the request could not be encoded", err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return fail(0, "the request could not be built", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			e := fail(0, fmt.Sprintf("no answer within %s", timeout), err).(*Error)
			e.Timeout = true
			return e
		}
		if rerr, ok := credhttp.AsRedirectError(err); ok {
			return fail(rerr.Status, rerr.Error(), err)
		}
		if isRedirect(err) {
			return fail(0, fmt.Sprintf("the server redirected the request; Steward does not follow it with the sign-in (check %s)", c.o.Setting), err)
		}
		return fail(0, "the server could not be reached: "+transportReason(err), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			e := fail(resp.StatusCode, fmt.Sprintf("the answer did not arrive within %s", timeout), err).(*Error)
			e.Timeout = true
			return e
		}
		return fail(resp.StatusCode, "the answer broke off", err)
	}
	if int64(len(data)) > limit {
		return fail(resp.StatusCode, fmt.Sprintf("the answer is larger than %d bytes", limit), nil)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e := fail(resp.StatusCode, fmt.Sprintf("the server refused the sign-in (HTTP %d)", resp.StatusCode), nil).(*Error)
		e.SignInRefused = true
		return e
	case resp.StatusCode/100 == 3:
		return fail(resp.StatusCode, fmt.Sprintf("the server answered with a redirect (HTTP %d), which Steward does not follow with the sign-in (check %s)", resp.StatusCode, c.o.Setting), nil)
	case resp.StatusCode/100 != 2:
		return fail(resp.StatusCode, fmt.Sprintf("the server answered HTTP %d", resp.StatusCode), nil)
	}
	if err := decodeStrict(data, out); err != nil {
		return fail(resp.StatusCode, "the answer is not what ERI v1 specifies: "+err.Error(), err)
	}
	return nil
}

// decodeStrict reads exactly one JSON value into out, refusing fields the
// spec does not know; names match case-insensitively, as the reference
// client reads them.
func decodeStrict(data []byte, out any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("the body is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return errors.New(cleanJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// cleanJSONError words a decoding error without quoting the body.
func cleanJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON (at byte %d)", se.Offset)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "the answer"
		}
		return fmt.Sprintf("%s must not be a JSON %s", field, te.Value)
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "json: unknown field ") {
		return "the field " + textcut.Chars(strings.TrimPrefix(msg, "json: unknown field "), 60) + " is not part of ERI v1"
	}
	return textcut.Chars(strings.TrimPrefix(msg, "json: "), 120)
}

func isRedirect(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		return strings.Contains(ue.Err.Error(), "redirect")
	}
	return false
}

// transportReason words a connection failure without the request's URL
// (which net/http puts into its errors).
func transportReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return textcut.Chars(err.Error(), 200)
}

// AuthMethods asks which sign-in methods the server offers. The request
// carries no token (the reference client sends none here, though the spec
// declares one).
func (c *Client) AuthMethods(ctx context.Context) ([]AuthScheme, error) {
	var out []AuthScheme
	if err := c.call(ctx, http.MethodGet, "auth/methods", nil, nil, nil, &out, MaxInfoBytes, c.o.InfoTimeout); err != nil {
		return nil, err
	}
	for i, m := range out {
		if err := checkEnum(fmt.Sprintf("authMethod of entry %d", i+1), m.AuthMethod, authMethods); err != nil {
			return nil, c.malformed("GET /auth/methods", err)
		}
		for _, f := range m.AuthFieldMappings {
			if err := checkEnum(fmt.Sprintf("authField of entry %d", i+1), f.AuthField, authFields); err != nil {
				return nil, c.malformed("GET /auth/methods", err)
			}
		}
	}
	return out, nil
}

func (c *Client) malformed(endpoint string, err error) error {
	return &Error{Origin: c.origin, Endpoint: endpoint, Reason: "the answer is not what ERI v1 specifies: " + err.Error(), Err: err}
}

// Session is a signed-in connection: it carries the token /auth returned.
type Session struct {
	c     *Client
	token string
}

// SignIn signs in at /auth with the configured method. methods, when the
// caller has them from AuthMethods, say under which header names the
// server wants the user name, password or token; without them the
// reference client's names are used. The answer counts as a sign-in unless
// it says "success": false; a missing token is an empty one.
func (c *Client) SignIn(ctx context.Context, methods []AuthScheme) (*Session, error) {
	cr := c.o.Credentials
	h := http.Header{}
	switch cr.Method {
	case AuthNone:
	case AuthUsernamePassword:
		h.Set(fieldName(methods, cr.Method, FieldUsername, DefaultUsernameHeader), cr.Username)
		h.Set(fieldName(methods, cr.Method, FieldPassword, DefaultPasswordHeader), cr.Secret)
	case AuthToken:
		name := fieldName(methods, cr.Method, FieldToken, DefaultTokenHeader)
		v := cr.Secret
		if strings.EqualFold(name, "Authorization") {
			v = "Bearer " + v
		}
		h.Set(name, v)
	case AuthKerberos:
		return nil, &Error{Origin: c.origin, Endpoint: "POST /auth", Reason: "Kerberos sign-in is not supported yet; use NONE, USERNAME_PASSWORD or TOKEN"}
	default:
		return nil, &Error{Origin: c.origin, Endpoint: "POST /auth", Reason: fmt.Sprintf("sign-in method %q is not part of ERI v1", textcut.Chars(string(cr.Method), 40))}
	}
	if len(methods) > 0 && !offers(methods, cr.Method) {
		var names []string
		for _, m := range methods {
			names = append(names, string(m.AuthMethod))
		}
		return nil, &Error{Origin: c.origin, Endpoint: "GET /auth/methods", SignInRefused: true,
			Reason: fmt.Sprintf("the server does not offer the sign-in method %s; it offers %s", cr.Method, strings.Join(names, ", "))}
	}
	var out AuthResponse
	q := url.Values{"authMethod": {string(cr.Method)}}
	if err := c.call(ctx, http.MethodPost, "auth", q, h, nil, &out, MaxInfoBytes, c.o.InfoTimeout); err != nil {
		return nil, err
	}
	if out.Success != nil && !*out.Success {
		return nil, &Error{Origin: c.origin, Endpoint: "POST /auth", Status: http.StatusOK, SignInRefused: true,
			Reason: "the server refused the sign-in", ServerMessage: cleanMessage(out.Message)}
	}
	if strings.ContainsAny(out.Token, "\r\n\x00") {
		return nil, c.malformed("POST /auth", errors.New("the token holds line breaks or NUL"))
	}
	return &Session{c: c, token: out.Token}, nil
}

func offers(methods []AuthScheme, m AuthMethod) bool {
	for _, s := range methods {
		if s.AuthMethod == m {
			return true
		}
	}
	return false
}

// fieldName returns the header name the server maps field to for method,
// or def. A name that is no valid header name is ignored.
func fieldName(methods []AuthScheme, method AuthMethod, field AuthField, def string) string {
	for _, s := range methods {
		if s.AuthMethod != method {
			continue
		}
		for _, f := range s.AuthFieldMappings {
			if f.AuthField == field && validHeaderName(f.FieldName) {
				return f.FieldName
			}
		}
	}
	return def
}

func validHeaderName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (s *Session) header() http.Header { return http.Header{TokenHeader: {s.token}} }

// DataSource asks what the data source is.
func (s *Session) DataSource(ctx context.Context) (DataSourceInfo, error) {
	var out DataSourceInfo
	err := s.c.call(ctx, http.MethodGet, "dataSource", nil, s.header(), nil, &out, MaxInfoBytes, s.c.o.InfoTimeout)
	return out, err
}

// EmbeddingInfo asks which embeddings the server uses.
func (s *Session) EmbeddingInfo(ctx context.Context) ([]EmbeddingInfo, error) {
	var out []EmbeddingInfo
	err := s.c.call(ctx, http.MethodGet, "embedding/info", nil, s.header(), nil, &out, MaxInfoBytes, s.c.o.InfoTimeout)
	return out, err
}

// RetrievalInfo asks which retrieval processes the server implements.
func (s *Session) RetrievalInfo(ctx context.Context) ([]RetrievalInfo, error) {
	var out []RetrievalInfo
	err := s.c.call(ctx, http.MethodGet, "retrieval/info", nil, s.header(), nil, &out, MaxInfoBytes, s.c.o.InfoTimeout)
	return out, err
}

// SecurityRequirements asks which providers may process the server's data.
// A missing allowedProviderType comes back empty; the caller decides what
// that means.
func (s *Session) SecurityRequirements(ctx context.Context) (SecurityRequirements, error) {
	var out SecurityRequirements
	if err := s.c.call(ctx, http.MethodGet, "security/requirements", nil, s.header(), nil, &out, MaxInfoBytes, s.c.o.InfoTimeout); err != nil {
		return out, err
	}
	if err := checkEnum("allowedProviderType", out.AllowedProviderType, providerTypes); err != nil {
		return SecurityRequirements{}, s.c.malformed("GET /security/requirements", err)
	}
	return out, nil
}

// Retrieve asks for passages. The contexts come back in the server's
// order, every type included; a type outside the spec fails the call.
func (s *Session) Retrieve(ctx context.Context, req RetrievalRequest) ([]Context, error) {
	var out []Context
	if err := s.c.call(ctx, http.MethodPost, "retrieval", nil, s.header(), req.wire(), &out, MaxRetrievalBytes, s.c.o.RetrievalTimeout); err != nil {
		return nil, err
	}
	if len(out) > MaxContexts {
		return nil, s.c.malformed("POST /retrieval", fmt.Errorf("%d contexts are more than the %d a retrieval may return", len(out), MaxContexts))
	}
	for i, c := range out {
		if err := checkEnum(fmt.Sprintf("type of context %d", i+1), c.Type, contentTypes); err != nil {
			return nil, s.c.malformed("POST /retrieval", err)
		}
	}
	return out, nil
}

// cleanMessage turns a server's message into one line of at most 200
// characters without control characters.
func cleanMessage(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return textcut.Chars(strings.Join(strings.Fields(s), " "), 200)
}
