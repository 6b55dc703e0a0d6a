package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stewardhq/steward/credhttp/credhttptest"
	"github.com/stewardhq/steward/tool"
)

// TestHTTPHeadersNeverLeaveTheOrigin connects to a streamable HTTP server
// that redirects elsewhere, for every redirect status: the configured
// headers are secrets and must not reach the other origin.
func TestHTTPHeadersNeverLeaveTheOrigin(t *testing.T) {
	for _, status := range credhttptest.Statuses() {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			r := credhttptest.NewRedirector(t, status)
			srv := Server{ID: "remote", Type: HTTP, URL: r.URL + "/mcp", StartupTimeout: 5 * time.Second,
				Headers: map[string]string{"Authorization": "Bearer ${TEAM_TOKEN}", "X-Team": "falcon-team-secret"}}
			_, err := Connect(context.Background(), srv, Options{Getenv: func(k string) string {
				if k == "TEAM_TOKEN" {
					return "tok-4711-secret"
				}
				return ""
			}})
			if err == nil {
				t.Fatal("a redirect to another origin must fail the connection")
			}
			if strings.Contains(err.Error(), "tok-4711-secret") || strings.Contains(err.Error(), "falcon-team-secret") {
				t.Errorf("the error holds a secret: %v", err)
			}
			r.AssertNothingLeaked(t)
		})
	}
}

// TestHTTPSameOriginRedirectStillWorks follows a redirect within the
// server's origin, with the headers.
func TestHTTPSameOriginRedirectStillWorks(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "team " + req.Extra.Header.Get("X-Team")}}}, nil
	})
	var mu sync.Mutex
	var auths []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	base := credhttptest.SameOrigin(t, "/old", "/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	c, err := Connect(context.Background(), Server{ID: "remote", Type: HTTP, URL: base + "/old",
		Headers: map[string]string{"Authorization": "Bearer abc-123", "X-Team": "falcon"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools := c.Tools()
	if len(tools) != 1 {
		t.Fatalf("tools: %v", c.Infos())
	}
	res, err := tools[0].Execute(context.Background(), json.RawMessage(`{}`), tool.ExecContext{})
	if err != nil || res.Text != "team falcon" {
		t.Fatalf("%v %q", err, res.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) == 0 || auths[0] != "Bearer abc-123" {
		t.Errorf("the header reaches the server: %v", auths)
	}
}
