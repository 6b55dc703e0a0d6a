package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/store"
)

//go:embed static openapi.json
var assets embed.FS

// OpenAPI returns the API's OpenAPI 3.1 document, as the server serves it
// at /api/openapi.json.
func OpenAPI() []byte {
	b, _ := assets.ReadFile("openapi.json")
	return b
}

// DefaultMaxBody is the largest request body accepted, in bytes: enough for
// a long prompt, far from what could exhaust memory.
const DefaultMaxBody = 4 << 20

// MinTokenLength is the shortest access token the server accepts.
const MinTokenLength = 32

// CookieName is the cookie that carries the access token for the page.
const CookieName = "steward_token"

// Options configure a Server.
type Options struct {
	// App is Steward, opened; the server does not close it.
	App *app.App
	// Token is the access token every request must carry; at least
	// MinTokenLength characters (see NewToken).
	Token string
	// Addr is the address the listener is bound to, host:port. Requests
	// must name it (or, on loopback, localhost with the same port) in
	// their Host header, which keeps DNS rebinding out.
	Addr string
	// MaxBody caps request bodies; 0 means DefaultMaxBody.
	MaxBody int64
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Server serves the API and the page. Close it to end running turns.
type Server struct {
	app     *app.App
	token   []byte
	hosts   map[string]bool
	origins map[string]bool
	maxBody int64
	log     *slog.Logger
	store   *store.Store
	static  fs.FS
	mux     *http.ServeMux

	// ctx is the life of the server: running turns end with it.
	ctx    context.Context
	cancel context.CancelFunc
	turns  sync.WaitGroup

	mu    sync.Mutex
	chats map[string]*chatState
}

// NewToken returns a random access token: 32 bytes from crypto/rand,
// URL-safe base64 (43 characters).
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// New builds the server and opens the chat store.
func New(ctx context.Context, o Options) (*Server, error) {
	if o.App == nil {
		return nil, errors.New("server: no App")
	}
	if len(o.Token) < MinTokenLength {
		return nil, fmt.Errorf("the access token has %d characters; it needs at least %d", len(o.Token), MinTokenLength)
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("server address %q is not host:port: %w", o.Addr, err)
	}
	s := &Server{app: o.App, token: []byte(o.Token), maxBody: o.MaxBody, log: o.Logger,
		hosts: map[string]bool{}, origins: map[string]bool{}, chats: map[string]*chatState{}}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	names := []string{host}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		names = append(names, "localhost")
	}
	for _, n := range names {
		hp := net.JoinHostPort(n, port)
		s.hosts[strings.ToLower(hp)] = true
		s.origins["http://"+strings.ToLower(hp)] = true
	}
	s.static, _ = fs.Sub(assets, "static")
	st, err := o.App.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	s.store = st
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.routes()
	return s, nil
}

// Handler is the server's HTTP handler, with every check in front.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Close cancels the turns still running, waits until their answers are
// stored, and closes the chat store.
func (s *Server) Close() error {
	s.cancel()
	s.turns.Wait()
	return s.store.Close()
}

// securityHeaders go on every answer. The page loads only its own script
// and style; nothing from a model's answer can load, frame or send
// anything.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if !s.hosts[strings.ToLower(r.Host)] {
		writeError(w, http.StatusMisdirectedRequest, "wrong_host", "this server answers only under the address it printed")
		return
	}
	// The address printed at the start carries the token once; the page
	// keeps it in a cookie only this origin sends, and the address bar
	// loses it.
	if r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token") {
		if !s.tokenOK(r.URL.Query().Get("token")) {
			writeError(w, http.StatusUnauthorized, "unauthorized", "the token in this address is wrong: open the address `steward serve` printed")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: string(s.token), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	viaCookie, ok := s.authenticated(r)
	if !ok {
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "Steward needs its access token: open the address `steward serve` printed, which ends in ?token=…\n")
			return
		}
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong access token: send it as `Authorization: Bearer TOKEN` or open the address `steward serve` printed")
		return
	}
	if !safeMethod(r.Method) {
		origin := r.Header.Get("Origin")
		switch {
		case origin != "" && !s.origins[strings.ToLower(origin)]:
			writeError(w, http.StatusForbidden, "wrong_origin", "requests that change something are accepted only from this server's own page")
			return
		case origin == "" && viaCookie:
			// A browser sends Origin with every such request; a cookie
			// without one is not the page.
			writeError(w, http.StatusForbidden, "wrong_origin", "requests that change something must carry the Origin of this server's page")
			return
		}
	}
	if r.ContentLength > s.maxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request body has %d bytes; at most %d are accepted", r.ContentLength, s.maxBody))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	s.mux.ServeHTTP(w, r)
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

func (s *Server) tokenOK(t string) bool {
	return len(t) == len(s.token) && subtle.ConstantTimeCompare([]byte(t), s.token) == 1
}

// authenticated reports whether r carries the token, and whether it came
// in the cookie (which a browser sends by itself) rather than a header.
func (s *Server) authenticated(r *http.Request) (viaCookie, ok bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, found := strings.Cut(h, " ")
		return false, found && strings.EqualFold(scheme, "Bearer") && s.tokenOK(strings.TrimSpace(tok))
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return true, s.tokenOK(c.Value)
	}
	return false, false
}

// Serve accepts connections on l until ctx ends, then shuts the server
// down: requests get a moment to finish, turns are cancelled and stored.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	// Streams end when their turns end; cancel the turns first.
	s.cancel()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return s.Close()
}
