package credhttp_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp"
	"github.com/stewardhq/steward/credhttp/credhttptest"
)

func post(t *testing.T, c *http.Client, u string, header http.Header, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	return c.Do(req)
}

func TestRedirectToAnotherOriginIsNotFollowed(t *testing.T) {
	for _, status := range credhttptest.Statuses() {
		t.Run(http.StatusText(status), func(t *testing.T) {
			r := credhttptest.NewRedirector(t, status)
			c := credhttp.Client(nil, "web_search.brave.baseUrl")
			h := http.Header{"X-Subscription-Token": {"brave-secret"}, "X-Api-Key": {"sk-ant-secret"}}
			resp, err := post(t, c, r.URL+"/v1/messages?q=1", h, `{"api_key":"body-secret"}`)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("the redirect was followed (status %d)", resp.StatusCode)
			}
			r.AssertNothingLeaked(t)
			rerr, ok := credhttp.AsRedirectError(err)
			if !ok {
				t.Fatalf("error %v does not wrap *RedirectError", err)
			}
			if rerr.Status != status || rerr.Setting != "web_search.brave.baseUrl" {
				t.Errorf("RedirectError = %+v, want status %d and the setting", rerr, status)
			}
			msg := err.Error()
			for _, want := range []string{"web_search.brave.baseUrl", r.Target, "another origin"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not name %q", msg, want)
				}
			}
			for _, secret := range []string{"brave-secret", "sk-ant-secret", "body-secret"} {
				if strings.Contains(msg, secret) {
					t.Errorf("message repeats the secret %q: %s", secret, msg)
				}
			}
		})
	}
}

func TestRedirectWithinTheOriginIsFollowed(t *testing.T) {
	var got struct {
		method, key, body string
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.key, got.body = r.Method, r.Header.Get("X-Api-Key"), string(b)
		_, _ = io.WriteString(w, "ok")
	})
	base := credhttptest.SameOrigin(t, "/old", "/new", h)
	c := credhttp.Client(nil, "provider anthropic")
	resp, err := post(t, c, base+"/old", http.Header{"X-Api-Key": {"k"}}, "payload")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.method != http.MethodPost || got.key != "k" || got.body != "payload" {
		t.Errorf("after a 307 within the origin the server got %+v, want POST with the key and the body", got)
	}
}

func TestSeeOtherWithinTheOriginBecomesGET(t *testing.T) {
	var method, body string
	mux := http.NewServeMux()
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusSeeOther) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method, body = r.Method, string(b)
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	resp, err := post(t, credhttp.Client(nil, "x"), s.URL+"/a", http.Header{}, "payload")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if method != http.MethodGet || body != "" {
		t.Errorf("after 303 the server got %s with body %q, want GET without a body", method, body)
	}
}

func TestTooManyRedirectsWithinTheOrigin(t *testing.T) {
	n := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		http.Redirect(w, r, "/again", http.StatusFound)
	}))
	defer s.Close()
	resp, err := credhttp.Client(nil, "x").Get(s.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("an endless redirect loop ended without an error")
	}
	if n != credhttp.MaxRedirects {
		t.Errorf("server asked %d times, want %d", n, credhttp.MaxRedirects)
	}
}

func TestBaseClientIsKeptAndNotChanged(t *testing.T) {
	called := 0
	stop := errors.New("base says stop")
	base := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { called++; return stop }}
	c := credhttp.Client(base, "x")
	if base.CheckRedirect == nil || c == base {
		t.Fatal("Client changed its base client")
	}
	base2 := credhttptest.SameOrigin(t, "/a", "/b", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	_, err := c.Get(base2 + "/a")
	if !errors.Is(err, stop) || called != 1 {
		t.Errorf("base CheckRedirect called %d times, err %v; want it asked once for a same-origin redirect", called, err)
	}
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://API.example.com/v1/":   "https://api.example.com",
		"https://api.example.com:443/x": "https://api.example.com",
		"http://example.com:80":         "http://example.com",
		"http://example.com:8080/a":     "http://example.com:8080",
		"http://[::1]:99/":              "http://[::1]:99",
		"HTTP://Example.COM":            "http://example.com",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := credhttp.Origin(u); got != want {
			t.Errorf("Origin(%s) = %s, want %s", in, got, want)
		}
	}
	a, _ := url.Parse("https://example.com/")
	b, _ := url.Parse("http://example.com/")
	if credhttp.Origin(a) == credhttp.Origin(b) {
		t.Error("https and http of one host are one origin; a downgrade would be followed")
	}
}

func TestIsSecretHeader(t *testing.T) {
	for _, h := range []string{"authorization", "X-API-KEY", "x-subscription-token", "Cookie"} {
		if !credhttp.IsSecretHeader(h) {
			t.Errorf("%s is not a secret header", h)
		}
	}
	for _, h := range []string{"Accept", "Content-Type", "User-Agent"} {
		if credhttp.IsSecretHeader(h) {
			t.Errorf("%s counts as a secret header", h)
		}
	}
}
