package server

import (
	"net/http"
	"strings"
	"testing"
)

// raw sends a request exactly as given, without the helpers' token and
// Origin, and checks the answer against the document.
func (e *env) raw(method, path, body string, header map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	var req *http.Request
	if rd != nil {
		req, _ = http.NewRequest(method, e.url(path), rd)
	} else {
		req, _ = http.NewRequest(method, e.url(path), nil)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	st, b := e.checked(method, path, res)
	_ = st
	return res, b
}

func TestEveryRouteNeedsTheToken(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	e := newEnv(t, envOptions{})
	doc := loadDoc(t)
	for _, op := range doc.operations() {
		method, tmpl, _ := strings.Cut(op, " ")
		path := strings.NewReplacer("{id}", "x", "{key}", "web_search.maxResults").Replace(tmpl)
		for name, h := range map[string]map[string]string{
			"no token":     {"Origin": e.http.URL, "Content-Type": "application/json"},
			"wrong token":  {"Origin": e.http.URL, "Content-Type": "application/json", "Authorization": "Bearer " + strings.Repeat("x", 43)},
			"wrong scheme": {"Origin": e.http.URL, "Content-Type": "application/json", "Authorization": "Basic " + e.token},
			"wrong cookie": {"Origin": e.http.URL, "Content-Type": "application/json", "Cookie": CookieName + "=nope"},
		} {
			res, b := e.raw(method, path, "{}", h)
			if res.StatusCode != 401 || !strings.Contains(string(b), "unauthorized") {
				t.Errorf("%s %s with %s: %d %s", method, path, name, res.StatusCode, b)
			}
			if res.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("%s %s with %s: no Content-Security-Policy", method, path, name)
			}
		}
	}
	// The page itself asks for the token too, and says where it is.
	res, b := e.raw("GET", "/", "", nil)
	if res.StatusCode != 401 || !strings.Contains(string(b), "?token=") {
		t.Fatalf("the page without a token: %d %s", res.StatusCode, b)
	}
}

func TestTokenInTheAddressBecomesACookie(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	e := newEnv(t, envOptions{})
	res, _ := e.raw("GET", "/?token=wrong", "", nil)
	if res.StatusCode != 401 {
		t.Fatalf("a wrong token in the address: %d", res.StatusCode)
	}
	res, _ = e.raw("GET", "/?token="+e.token, "", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("the token address: %d %v", res.StatusCode, res.Header)
	}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value != e.token {
		t.Fatalf("the cookie: %+v", cookie)
	}
	res, b := e.raw("GET", "/", "", map[string]string{"Cookie": CookieName + "=" + e.token})
	if res.StatusCode != 200 || !strings.Contains(string(b), `<script src="/app.js"`) {
		t.Fatalf("the page with the cookie: %d", res.StatusCode)
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "img-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP allows unsafe sources: %q", csp)
	}
	for _, f := range []string{"/app.js", "/app.css", "/markdown.js"} {
		res, b := e.raw("GET", f, "", map[string]string{"Cookie": CookieName + "=" + e.token})
		if res.StatusCode != 200 || len(b) < 100 || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d, %d bytes", f, res.StatusCode, len(b))
		}
	}
	// The cookie works for reading, and for writing only with the page's
	// Origin.
	if res, _ := e.raw("GET", "/api/chats", "", map[string]string{"Cookie": CookieName + "=" + e.token}); res.StatusCode != 200 {
		t.Fatalf("reading with the cookie: %d", res.StatusCode)
	}
	if res, _ := e.raw("POST", "/api/chats", "{}", map[string]string{"Cookie": CookieName + "=" + e.token, "Content-Type": "application/json"}); res.StatusCode != 403 {
		t.Fatalf("writing with the cookie and no Origin: %d", res.StatusCode)
	}
	if res, _ := e.raw("POST", "/api/chats", "{}", map[string]string{"Cookie": CookieName + "=" + e.token, "Content-Type": "application/json", "Origin": e.http.URL}); res.StatusCode != 201 {
		t.Fatalf("writing with the cookie and the page's Origin: %d", res.StatusCode)
	}
}

func TestWrongOriginHostAndNoCORS(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	e := newEnv(t, envOptions{})
	auth := "Bearer " + e.token
	for _, origin := range []string{"http://evil.example", "null", strings.Replace(e.http.URL, "127.0.0.1", "127.0.0.2", 1), "https" + strings.TrimPrefix(e.http.URL, "http")} {
		res, b := e.raw("POST", "/api/chats", "{}", map[string]string{"Authorization": auth, "Origin": origin, "Content-Type": "application/json"})
		if res.StatusCode != 403 || !strings.Contains(string(b), "wrong_origin") {
			t.Errorf("Origin %s: %d %s", origin, res.StatusCode, b)
		}
		if res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Origin %s got a CORS header", origin)
		}
	}
	// A reading request from another origin gets no CORS header either, so
	// its page cannot read the answer.
	res, _ := e.raw("GET", "/api/chats", "", map[string]string{"Authorization": auth, "Origin": "http://evil.example"})
	if res.Header.Get("Access-Control-Allow-Origin") != "" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("CORS headers on a read: %v", res.Header)
	}
	// A preflight is not answered.
	res, _ = e.raw("OPTIONS", "/api/chats", "", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
	if res.StatusCode == 200 || res.StatusCode == 204 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
	// A client without Origin that sends the header token (curl, scripts)
	// may write.
	if res, _ := e.raw("POST", "/api/chats", "{}", map[string]string{"Authorization": auth, "Content-Type": "application/json"}); res.StatusCode != 201 {
		t.Errorf("a header client without Origin: %d", res.StatusCode)
	}
	// DNS rebinding: another name for this address is refused.
	res, b := e.raw("GET", "/api/chats", "", map[string]string{"Authorization": auth, "Host": "attacker.example:80"})
	if res.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(string(b), "wrong_host") {
		t.Errorf("a foreign Host: %d %s", res.StatusCode, b)
	}
	if res, _ := e.raw("POST", "/api/chats", "{}", map[string]string{"Authorization": auth, "Content-Type": "text/plain"}); res.StatusCode != 415 {
		t.Errorf("a text/plain body: %d", res.StatusCode)
	}
}

func TestOversizedBodiesAreRefused(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	e := newEnv(t, envOptions{maxBody: 4096})
	auth := map[string]string{"Authorization": "Bearer " + e.token, "Content-Type": "application/json", "Origin": ""}
	delete(auth, "Origin")
	res, b := e.raw("POST", "/api/chats", `{"title":"`+strings.Repeat("a", 5000)+`"}`, auth)
	if res.StatusCode != 413 || !strings.Contains(string(b), "4096") {
		t.Fatalf("a body over the cap: %d %s", res.StatusCode, b)
	}
	// Without a Content-Length the cap holds while reading.
	req, _ := http.NewRequest("POST", e.url("/api/read"), &endless{})
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	res2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	st, b := e.checked("POST", "/api/read", res2)
	if st != 413 {
		t.Fatalf("a chunked body over the cap: %d %s", st, b)
	}
}

// endless is a JSON string that never ends.
type endless struct{ started bool }

func (r *endless) Read(p []byte) (int, error) {
	if !r.started {
		r.started = true
		return copy(p, `{"url":"`), nil
	}
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}
