package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/stewardhq/steward/llm"
)

// exchange is one recorded request and its answer.
type exchange struct {
	// request is the recorded request body; nil when the recording has
	// none.
	request     json.RawMessage
	url         string
	status      int
	contentType string
	body        []byte
}

// loadCassette reads a go-vcr cassette (version 1 or 2) or a VCR.py one.
func loadCassette(t testing.TB, path string) []exchange {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Interactions []struct {
			Request  map[string]any `yaml:"request"`
			Response map[string]any `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []exchange
	for _, in := range c.Interactions {
		var ex exchange
		switch body := in.Request["body"].(type) {
		case string:
			if body != "" {
				ex.request = json.RawMessage(body)
			}
		}
		if pb, ok := in.Request["parsed_body"]; ok && ex.request == nil {
			ex.request, _ = json.Marshal(pb)
		}
		ex.url, _ = in.Request["url"].(string)
		if ex.url == "" {
			ex.url, _ = in.Request["uri"].(string)
		}
		ex.status = 200
		switch code := in.Response["code"].(type) {
		case int:
			ex.status = code
		}
		if st, ok := in.Response["status"].(map[string]any); ok {
			if code, ok := st["code"].(int); ok {
				ex.status = code
			}
		}
		if hs, ok := in.Response["headers"].(map[string]any); ok {
			for k, v := range hs {
				if strings.EqualFold(k, "content-type") {
					if l, ok := v.([]any); ok && len(l) > 0 {
						ex.contentType, _ = l[0].(string)
					}
				}
			}
		}
		switch body := in.Response["body"].(type) {
		case string:
			ex.body = []byte(body)
		case map[string]any:
			s, _ := body["string"].(string)
			ex.body = []byte(s)
		}
		if pb, ok := in.Response["parsed_body"]; ok && len(ex.body) == 0 {
			ex.body, _ = json.Marshal(pb)
		}
		out = append(out, ex)
	}
	return out
}

// loadChunks reads a vercel-ai chunks file: one JSON event per line, SSE
// framing stripped. Every event of type first starts a new answer; each is
// framed again as "event: <type>\ndata: <line>\n\n".
func loadChunks(t testing.TB, path, first string) []exchange {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Fatalf("%s: unreadable line: %v", path, err)
		}
		if head.Type == first || len(out) == 0 {
			out = append(out, exchange{status: 200, contentType: "text/event-stream"})
		}
		ex := &out[len(out)-1]
		ex.body = append(ex.body, fmt.Sprintf("event: %s\ndata: %s\n\n", head.Type, line)...)
	}
	return out
}

// replayServer answers the recorded exchanges in order and keeps what
// Steward sent.
type replayServer struct {
	*httptest.Server
	mu        sync.Mutex
	exchanges []exchange
	bodies    [][]byte
	headers   []http.Header
	paths     []string
}

func newReplayServer(t *testing.T, exchanges []exchange) *replayServer {
	t.Helper()
	rs := &replayServer{exchanges: exchanges}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		n := len(rs.bodies)
		rs.bodies = append(rs.bodies, body)
		rs.headers = append(rs.headers, r.Header.Clone())
		rs.paths = append(rs.paths, r.URL.Path)
		rs.mu.Unlock()
		if n >= len(rs.exchanges) {
			http.Error(w, `{"error":{"message":"no more recorded answers"}}`, http.StatusTeapot)
			return
		}
		ex := rs.exchanges[n]
		ct := ex.contentType
		if ct == "" {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(ex.status)
		w.Write(ex.body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *replayServer) body(i int) []byte {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i >= len(rs.bodies) {
		return nil
	}
	return rs.bodies[i]
}

// loopbackTransport only ever dials loopback; anything else fails the
// test.
func loopbackTransport(t *testing.T) *llm.Transport {
	t.Helper()
	d := &net.Dialer{}
	return &llm.Transport{
		Client: &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, _, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				ip := net.ParseIP(host)
				if ip == nil || !ip.IsLoopback() {
					t.Errorf("a connection to %s was attempted; tests only reach loopback", addr)
					return nil, fmt.Errorf("refused non-loopback address %s", addr)
				}
				return d.DialContext(ctx, network, addr)
			},
		}},
		MaxAttempts: 1,
		Sleep:       func(context.Context, time.Duration) error { return nil },
	}
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

type fsDirEntry = fs.DirEntry

func jsonValid(b []byte) bool { return json.Valid(b) }
