package app

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/web"
)

// TestSelfHostedByAddressStaysOnThoseAddresses: a vLLM on a host name
// whose every address is private counts as self-hosted; when the name
// later resolves to a public address (DNS rebinding), neither the chat
// request nor an embedding request of an Ollama on that name reaches it:
// the connection is refused before it is dialed, with an error naming the
// address. The provider's ordinary client is never used for such a
// provider, and no connection to anything but loopback is ever made.
func TestSelfHostedByAddressStaysOnThoseAddresses(t *testing.T) {
	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, r.URL.Path+" "+string(body))
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Hello from the GPU box."}}]}`+"\n\n"+
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		case "/api/embed":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"model":"m","embeddings":[[0.1,0.2,0.3]]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	const private = "10.20.30.40"
	dns := &fakeDNS{hosts: map[string]string{"gpu.corp.example": private}}
	var dialed []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		if addr != net.JoinHostPort(private, port) {
			t.Errorf("a connection to %s was attempted; only the private address may be dialed", addr)
			return nil, errors.New("refused by the test")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	dir := t.TempDir()
	env := map[string]string{"STEWARD_NO_OLLAMA_PROBE": "1"}
	a, err := Open(context.Background(), Options{ConfigDir: filepath.Join(dir, "config"), DataDir: filepath.Join(dir, "data"), Getenv: func(k string) string { return env[k] },
		Web: web.ServiceOptions{Resolver: dns, Dial: dial},
		// The ordinary provider client: a pinned provider must not use it.
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: testenv.FailDial(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	base := "http://gpu.corp.example:" + port
	rp, err := a.ResolveProvider(context.Background(), ProviderFlags{Provider: "vllm", BaseURL: base + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if rp.SchemeName != policy.ProviderSelfHosted || rp.Confidence != policy.High || !rp.LocalOnly {
		t.Fatalf("a vLLM in the private network: scheme %s, confidence %s, local only %v", rp.SchemeName, rp.Confidence, rp.LocalOnly)
	}
	res, err := a.Answer(context.Background(), NewThread(), rp, Turn{Text: "hi", NoTools: true}, nil)
	if err != nil || res.Text != "Hello from the GPU box." {
		t.Fatalf("the private address: %v %+v", err, res)
	}
	emb, err := a.embedders(context.Background(), mailbox.Config{ID: "board", Embedding: a.userEmbedding("ollama:m@" + base + "/")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emb.Embed(context.Background(), []string{"a private mail"}); err != nil {
		t.Fatalf("embedding on the private address: %v", err)
	}

	// The name now answers a public address.
	dns.mu.Lock()
	dns.hosts["gpu.corp.example"] = "93.184.215.14"
	dns.mu.Unlock()
	a.HTTPClient.CloseIdleConnections()
	if c, _ := a.providerClient(policy.ProviderSelfHosted, base+"/v1/"); c != nil {
		c.CloseIdleConnections()
	}
	mu.Lock()
	before := len(requests)
	mu.Unlock()
	_, err = a.Answer(context.Background(), NewThread(), rp, Turn{Text: "the secret plan", NoTools: true}, nil)
	var notLocal *web.NotLocalError
	if !errors.As(err, &notLocal) || !strings.Contains(err.Error(), "gpu.corp.example now resolves to 93.184.215.14, which is neither loopback nor private") {
		t.Fatalf("after the name moved: %v", err)
	}
	if _, err := emb.Embed(context.Background(), []string{"the secret plan"}); !errors.As(err, &notLocal) {
		t.Fatalf("embedding after the name moved: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != before {
		t.Errorf("the server got %v after the name moved", requests[before:])
	}
	for _, d := range dialed {
		if d != net.JoinHostPort(private, port) {
			t.Errorf("dialed %s", d)
		}
	}
}
