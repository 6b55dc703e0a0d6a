package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/web"
)

// providerRequest is what the scripted provider was asked: the Chat
// Completions request, reduced to what a script decides by.
type providerRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// lastUser is the text of the last user message.
func (r providerRequest) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			var s string
			_ = json.Unmarshal(r.Messages[i].Content, &s)
			return s
		}
	}
	return ""
}

// toolResults counts the tool results since the last user message.
func (r providerRequest) toolResults() int {
	n := 0
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role != "user"; i-- {
		if r.Messages[i].Role == "tool" {
			n++
		}
	}
	return n
}

// reply is one scripted answer: SSE data frames written one by one with
// gap between them.
type reply struct {
	frames []string
	gap    time.Duration
	// stamped > 0 streams that many text deltas instead of frames, each
	// "<number>@<unix nanoseconds>;" stamped when it is written.
	stamped int
}

// scripted is a Chat Completions server on loopback that answers each
// request as script says; the wire format is that of the OpenAI API.
type scripted struct {
	srv    *httptest.Server
	script func(providerRequest) reply
	mu     sync.Mutex
	reqs   []providerRequest
}

func newScripted(t testing.TB, script func(providerRequest) reply) *scripted {
	s := &scripted{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req providerRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"not JSON"}}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		rep := s.script(req)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		frames := rep.frames
		if rep.stamped > 0 {
			frames = make([]string, rep.stamped+1)
			frames[rep.stamped] = textFrames()[0]
		}
		for i, f := range frames {
			if rep.gap > 0 {
				select {
				case <-time.After(rep.gap):
				case <-r.Context().Done():
					return
				}
			}
			if rep.stamped > 0 && i < rep.stamped {
				f = textFrames(fmt.Sprintf("%d@%d;", i, time.Now().UnixNano()))[0]
			}
			fmt.Fprintf(w, "data: %s\n\n", f)
			fl.Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// textFrames streams text in parts and ends the answer.
func textFrames(parts ...string) []string {
	var out []string
	for _, p := range parts {
		c, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": p}}}})
		out = append(out, string(c))
	}
	return append(out, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":5}}`)
}

// toolFrames asks for one tool call.
func toolFrames(id, name, args string) []string {
	c, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
		map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}}}})
	return []string{string(c), `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`}
}

// env is one Steward serving on loopback for a test.
type env struct {
	t        testing.TB
	home     string
	app      *app.App
	srv      *Server
	http     *httptest.Server
	token    string
	provider *scripted
	web      *webtest.Net
}

type envOptions struct {
	script  func(providerRequest) reply
	pages   map[string]string
	plugin  string
	user    func(*config.UserSettings)
	home    string
	maxBody int64
	// wrap wraps the server's handler, for measurements.
	wrap func(http.Handler) http.Handler
}

// loopbackClient reaches only loopback; any other address fails the test.
func loopbackClient(t testing.TB) *http.Client {
	d := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("a connection to %s was attempted; tests only reach loopback", addr)
			return nil, fmt.Errorf("refused non-loopback address %s", addr)
		}
		return d.DialContext(ctx, network, addr)
	}}}
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, home: o.home}
	if e.home == "" {
		e.home = t.TempDir()
	}
	if o.script == nil {
		o.script = func(providerRequest) reply { return reply{frames: textFrames("Hello", " there.")} }
	}
	e.provider = newScripted(t, o.script)
	e.web = webtest.NewNet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := o.pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}))
	e.web.Host("news.example.com", "93.184.215.14")
	cfgDir := filepath.Join(e.home, "config")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if o.plugin != "" {
		dir := filepath.Join(cfgDir, "plugins", "org", "acme")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		src := "ID = \"4c2b8f0e-acme\"\nNAME = \"Acme\"\nVERSION = \"1.0.0\"\nTYPE = \"CONFIGURATION\"\nCONFIG = {}\nCONFIG[\"SETTINGS\"] = {}\n" + o.plugin + "\n"
		if err := os.WriteFile(filepath.Join(dir, "plugin.lua"), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := config.UserSettingsPath(cfgDir)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		us := &config.UserSettings{Version: config.UserSettingsVersion, DefaultProvider: "local",
			Providers: []config.UserProvider{
				{ID: "local", Kind: "vllm", Model: "scripted-model", BaseURL: e.provider.srv.URL + "/v1/"},
				{ID: "cloud", Kind: "openai", Model: "gpt-test", BaseURL: e.provider.srv.URL + "/v1/"},
			},
			SelectedTools: []string{"read_web_page"},
		}
		if o.user != nil {
			o.user(us)
		}
		if err := us.Save(path); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"STEWARD_NO_OLLAMA_PROBE": "1", "OPENAI_API_KEY": "sk-test-key", "HOME": e.home}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("STEWARD_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := app.Open(context.Background(), app.Options{ConfigDir: cfgDir, DataDir: filepath.Join(e.home, "data"),
		Getenv: func(k string) string { return vars[k] }, Logger: logger, HTTPClient: loopbackClient(t),
		Web: webServiceOptions(e.web)})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	e.token = NewToken()
	e.http = httptest.NewUnstartedServer(nil)
	e.srv, err = New(context.Background(), Options{App: a, Token: e.token, Addr: e.http.Listener.Addr().String(), MaxBody: o.maxBody, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	e.http.Config.Handler = e.srv.Handler()
	if o.wrap != nil {
		e.http.Config.Handler = o.wrap(e.http.Config.Handler)
	}
	e.http.Start()
	t.Cleanup(e.close)
	return e
}

// close stops the server the way Ctrl-C does: turns are cancelled and
// stored.
func (e *env) close() {
	if e.http == nil {
		return
	}
	e.srv.cancel()
	e.http.Close()
	e.srv.Close()
	e.app.Close()
	e.http = nil
}

func (e *env) url(path string) string { return e.http.URL + path }

// do sends an API request with the token, and the page's Origin for
// requests that change something.
func (e *env) do(method, path string, body any) *http.Response {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, e.url(path), rd)
	req.Header.Set("Authorization", "Bearer "+e.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet {
		req.Header.Set("Origin", e.http.URL)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	id, name string
	data     []byte
}

// readSSE reads every event of a stream until it ends.
func readSSE(t testing.TB, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" || cur.data != nil {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = append(cur.data, line[6:]...)
		default:
			t.Errorf("a stream line that is no SSE field: %q", line)
		}
	}
	return out
}

func webServiceOptions(n *webtest.Net) web.ServiceOptions {
	return web.ServiceOptions{Resolver: n, Dial: n.Dial}
}
