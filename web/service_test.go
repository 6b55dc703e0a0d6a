package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/stewardhq/steward/policy"
)

// TestUserChosenLoopback reads loopback servers through the production
// dialer (no dial hook): the user typed the address, so loopback is fine.
func TestUserChosenLoopback(t *testing.T) {
	var gotUA, gotAE, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA, gotAE, gotAuth = r.UserAgent(), r.Header.Get("Accept-Encoding"), r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "\ufeff\r\n  \r\n  indented first line\r\nsecond\rthird\n\n\n")
	}))
	defer srv.Close()
	res := newResolver(map[string][]string{"localhost": {"127.0.0.1"}, "dev.localhost": {"::1", "127.0.0.1"}})
	s := NewService(ServiceOptions{Resolver: res})
	for _, raw := range []string{
		srv.URL + "/doc.txt",
		hostURL(t, srv.URL, "localhost", "/doc.txt"),
		hostURL(t, srv.URL, "dev.localhost", "/doc.txt"),
		strings.Replace(srv.URL, "http://", "http://alice:secret@", 1) + "/doc.txt?x=1#frag",
	} {
		page, err := s.Retrieve(context.Background(), raw, Options{Policy: UserChosen})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if page.ContentKind != TextDocument || page.MediaType != "text/plain" {
			t.Errorf("kind %v %q, want a text document", page.ContentKind, page.MediaType)
		}
		if want := "  indented first line\nsecond\nthird"; page.Markdown != want {
			t.Errorf("markdown %q, want %q", page.Markdown, want)
		}
		if !page.PrivateTarget || page.RequiredConfidence != policy.None {
			t.Errorf("user-chosen loopback: private=%v required=%v, want true/NONE", page.PrivateTarget, page.RequiredConfidence)
		}
		if strings.Contains(page.FinalURL, "secret") || strings.Contains(page.FinalURL, "#frag") {
			t.Errorf("final URL %q keeps userinfo or fragment", page.FinalURL)
		}
	}
	if !strings.Contains(gotUA, "Steward/") || gotAE != "gzip, deflate, br" || gotAuth != "" {
		t.Errorf("request headers UA=%q Accept-Encoding=%q Authorization=%q", gotUA, gotAE, gotAuth)
	}
}

// TestUserChosenHTTPS reads an HTTPS loopback server (TLS against the host).
func TestUserChosenHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok": true}`)
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	s := NewService(ServiceOptions{TLSConfig: &tls.Config{RootCAs: pool}})
	page, err := s.Retrieve(context.Background(), srv.URL+"/api", Options{Policy: UserChosen})
	if err != nil {
		t.Fatal(err)
	}
	if page.Markdown != `{"ok": true}` || page.ContentKind != TextDocument || page.MediaType != "application/json" {
		t.Fatalf("page %+v", page)
	}
}

// TestPublicOnlyRead follows redirects on made-up public names routed to a
// loopback server: relative Location, cookies across hops, the final URL,
// compressed bodies, the page metadata and timings.
func TestPublicOnlyRead(t *testing.T) {
	var mu sync.Mutex
	var cookieSeen string
	var html bytes.Buffer
	html.WriteString(`<!doctype html><html lang="de"><head><title>Rezept – Küche</title>
<meta property="article:published_time" content="2026-03-04T05:06:07Z">
<meta name="author" content="Jana Berg"><meta name="description" content="Ein Rezept."></head>
<body><article><h1>Apfelkuchen</h1><p>`)
	html.WriteString(strings.Repeat("Äpfel schälen und in dünne Scheiben schneiden. ", 20))
	html.WriteString(`<a href="../zutaten">Zutaten</a></p><p hidden>geheim</p></article></body></html>`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", Path: "/"})
			w.Header().Set("Location", "/rezepte/kuchen?x=1")
			w.WriteHeader(http.StatusMovedPermanently)
		case "/rezepte/kuchen":
			mu.Lock()
			if c, err := r.Cookie("session"); err == nil {
				cookieSeen = c.Value
			}
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			switch r.URL.Query().Get("enc") {
			case "gzip":
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				zw.Write(html.Bytes())
				zw.Close()
			case "br":
				w.Header().Set("Content-Encoding", "br")
				bw := brotli.NewWriter(w)
				bw.Write(html.Bytes())
				bw.Close()
			default:
				w.Write(html.Bytes())
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	res := newResolver(map[string][]string{"rezepte.example": {publicIP, "2606:2800:220:1:248:1893:25c8:1946"}})
	rt := newRouter(t)
	rt.route(publicIP, srv.URL)
	s := NewService(ServiceOptions{Resolver: res, Dial: rt.dial})
	for _, enc := range []string{"", "gzip", "br"} {
		start := hostURL(t, srv.URL, "rezepte.example", "/start")
		page, err := s.Retrieve(context.Background(), start, Options{Policy: PublicOnly})
		if enc != "" {
			page, err = s.Retrieve(context.Background(), hostURL(t, srv.URL, "rezepte.example", "/rezepte/kuchen?enc="+enc), Options{Policy: PublicOnly})
		}
		if err != nil {
			t.Fatalf("enc %q: %v", enc, err)
		}
		if enc == "" {
			if want := hostURL(t, srv.URL, "rezepte.example", "/rezepte/kuchen?x=1"); page.FinalURL != want || page.Redirects != 1 {
				t.Errorf("final URL %q after %d redirects, want %q after 1", page.FinalURL, page.Redirects, want)
			}
		}
		// The h1 comes before <title> in the reference's title chain.
		if page.Title != "Apfelkuchen" || page.Language != "de" || page.Description != "Ein Rezept." ||
			len(page.Authors) != 1 || page.Authors[0] != "Jana Berg" {
			t.Errorf("metadata: %q %q %q %v", page.Title, page.Language, page.Description, page.Authors)
		}
		if !page.Published.Equal(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)) {
			t.Errorf("published %v", page.Published)
		}
		if !strings.Contains(page.Markdown, "](http://rezepte.example:"+portOf(t, srv.URL)+"/zutaten)") {
			t.Errorf("relative link not made absolute:\n%s", page.Markdown)
		}
		if strings.Contains(page.Markdown, "geheim") {
			t.Errorf("hidden text reached the Markdown")
		}
		if page.RequiredConfidence != policy.None || page.PrivateTarget || page.ContentKind != HTMLPage {
			t.Errorf("public page: %v %v %v", page.RequiredConfidence, page.PrivateTarget, page.ContentKind)
		}
		if page.Timings.Total <= 0 || page.Timings.Connect <= 0 {
			t.Errorf("timings not measured: %+v", page.Timings)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if cookieSeen != "abc" {
		t.Errorf("cookie from the redirect hop not sent on the next hop (saw %q)", cookieSeen)
	}
}

// TestPinnedDialing shows that the dialer connects only to the addresses
// the check validated, in answer order, and never resolves again.
func TestPinnedDialing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	res := newResolver(nil)
	// A rebinding resolver: the second answer would be loopback.
	res.sequence("pin.example", []string{"2606:2800:220:1:248:1893:25c8:1946", publicIP}, []string{"127.0.0.1"})
	var mu sync.Mutex
	var order []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		order = append(order, addr)
		mu.Unlock()
		if strings.HasPrefix(addr, "["+"2606:") {
			return nil, errors.New("unreachable in this test")
		}
		if !strings.HasPrefix(addr, publicIP+":") {
			t.Errorf("dialed unchecked address %s", addr)
			return nil, errors.New("refused")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	s := NewService(ServiceOptions{Resolver: res, Dial: dial})
	if _, err := s.Retrieve(context.Background(), hostURL(t, srv.URL, "pin.example", "/"), Options{}); err != nil {
		t.Fatal(err)
	}
	if n := res.count("pin.example"); n != 1 {
		t.Errorf("resolved %d times, want once", n)
	}
	if len(order) != 2 || !strings.HasPrefix(order[0], "[2606:") || !strings.HasPrefix(order[1], publicIP) {
		t.Errorf("dial order %v, want the IPv6 answer then the IPv4 answer", order)
	}
}

// TestControlFunction checks the socket-level re-check of the production
// dialer, which runs after Go chose the address it really connects to.
func TestControlFunction(t *testing.T) {
	public := pin{class: classPublic}
	private := pin{class: classPrivate}
	user := pin{class: classNever, user: true}
	tests := []struct {
		p    pin
		addr string
		ok   bool
	}{
		{public, publicIP + ":443", true},
		{public, publicIP + ":8080", true},
		{public, "[2606:2800:220:1:248:1893:25c8:1946]:443", true},
		{public, "127.0.0.1:80", false},
		{public, "10.0.0.1:80", false},
		{public, "[::1]:80", false},
		{public, "[::ffff:127.0.0.1]:80", false},
		{public, "[64:ff9b::7f00:1]:80", false},
		{public, "169.254.169.254:80", false},
		{private, "10.0.0.1:80", true},
		{private, "127.0.0.1:80", false},
		{private, "169.254.169.254:80", false},
		{private, "[fe80::1]:80", false},
		{user, "127.0.0.1:80", true},
		{public, "not-an-address", false},
	}
	for _, tc := range tests {
		// Go calls Control with tcp4 or tcp6, never plain tcp.
		network := "tcp4"
		if strings.HasPrefix(tc.addr, "[") {
			network = "tcp6"
		}
		err := controlFor(tc.p)(network, tc.addr, nil)
		if (err == nil) != tc.ok {
			t.Errorf("control(%+v, %s) = %v, want ok=%v", tc.p, tc.addr, err, tc.ok)
		}
	}
	// The pinned dialer refuses before dialing when a pin disagrees with
	// an address (defence in depth against a wrong check).
	c := &call{s: NewService(ServiceOptions{Dial: func(context.Context, string, string) (net.Conn, error) {
		t.Error("dial reached for a refused address")
		return nil, errors.New("no")
	}}), pins: map[string]pin{
		"wrong.example:80": {ips: []netip.Addr{netip.MustParseAddr("127.0.0.1")}, class: classPublic},
	}}
	if _, err := c.dialContext(context.Background(), "tcp", "wrong.example:80"); !errors.Is(err, ErrNeverAllowedAddress) {
		t.Errorf("dialContext with a bad pin: %v", err)
	}
	if _, err := c.dialContext(context.Background(), "tcp", "unpinned.example:80"); err == nil {
		t.Error("dialContext dialed a host without checked addresses")
	}
}

// TestContentKinds maps media types to kinds and refuses the rest.
func TestContentKinds(t *testing.T) {
	tests := []struct {
		mt   string
		kind ContentKind
		ok   bool
	}{
		{"", HTMLPage, true}, {"text/html", HTMLPage, true}, {"application/xhtml+xml", HTMLPage, true},
		{"text/plain", TextDocument, true}, {"text/csv", TextDocument, true}, {"text/markdown", TextDocument, true},
		{"application/json", TextDocument, true}, {"application/xml", TextDocument, true},
		{"application/x-ndjson", TextDocument, true}, {"application/javascript", TextDocument, true},
		{"application/x-javascript", TextDocument, true}, {"application/yaml", TextDocument, true},
		{"application/x-yaml", TextDocument, true}, {"application/toml", TextDocument, true},
		{"application/sql", TextDocument, true}, {"application/ld+json", TextDocument, true},
		{"application/atom+xml", TextDocument, true}, {"application/problem+json", TextDocument, true},
		{"application/pdf", 0, false}, {"image/png", 0, false}, {"application/octet-stream", 0, false},
		{"audio/mpeg", 0, false}, {"application/zip", 0, false}, {"application/vnd.ms-excel", 0, false},
		{"font/woff2", 0, false}, {"multipart/mixed", 0, false},
	}
	for _, tc := range tests {
		kind, ok := kindOf(tc.mt)
		if ok != tc.ok || (ok && kind != tc.kind) {
			t.Errorf("kindOf(%q) = %v, %v; want %v, %v", tc.mt, kind, ok, tc.kind, tc.ok)
		}
	}
}

// TestTextDocuments covers charsets, BOMs, line endings and blank lines.
func TestTextDocuments(t *testing.T) {
	tests := []struct {
		name, ct string
		body     []byte
		want     string
	}{
		{"crlf", "text/plain", []byte("a\r\nb\r\n"), "a\nb"},
		{"cr", "text/csv", []byte("h1,h2\r1,2\r"), "h1,h2\n1,2"},
		{"leading-blank-lines", "text/plain", []byte("\n \n\t\n    code\n"), "    code"},
		{"utf8-bom", "application/json", []byte("\xef\xbb\xbf{\"a\":1}"), `{"a":1}`},
		{"latin1", "text/plain; charset=iso-8859-1", []byte("Gr\xfc\xdfe"), "Grüße"},
		{"utf16-bom", "text/plain", []byte{0xFF, 0xFE, 'h', 0, 'i', 0}, "hi"},
		{"utf16-labelled", "text/plain; charset=utf-16", []byte{0xFE, 0xFF, 0, 'o', 0, 'k'}, "ok"},
		{"invalid-utf8", "text/plain", []byte("a\xffb"), "a\uFFFDb"},
		{"empty", "text/plain", []byte("\r\n \n"), ""},
		{"yaml", "application/x-yaml", []byte("key: value\n  nested: 1\n"), "key: value\n  nested: 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				w.Write(tc.body)
			}))
			defer srv.Close()
			page, err := NewService(ServiceOptions{}).Retrieve(context.Background(), srv.URL, Options{Policy: UserChosen})
			if err != nil {
				t.Fatal(err)
			}
			if page.Markdown != tc.want || page.ContentKind != TextDocument {
				t.Errorf("got %q (%v), want %q", page.Markdown, page.ContentKind, tc.want)
			}
			if page.OriginalChars != len([]rune(tc.want)) {
				t.Errorf("OriginalChars %d", page.OriginalChars)
			}
		})
	}
}

// TestTimeoutMessage names the configured seconds.
func TestTimeoutMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	s := NewService(ServiceOptions{})
	_, err := s.Retrieve(context.Background(), srv.URL, Options{Policy: UserChosen, Timeout: time.Second})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "after 1 second") {
		t.Fatalf("error %v, want a timeout after 1 second", err)
	}
	// Cancelling the caller's context is not reported as a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err = s.Retrieve(ctx, srv.URL, Options{Policy: UserChosen})
	if err == nil || errors.Is(err, ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled retrieval: %v, want context.Canceled", err)
	}
}

// TestTargetAllowedEveryHop shows IsTargetAllowed runs on each hop with the
// normalized URL, and that a refusal does not repeat the address.
func TestTargetAllowedEveryHop(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wiki/a" {
			http.Redirect(w, r, "/wiki/b", http.StatusFound)
			return
		}
		if r.URL.Path == "/wiki/b" {
			http.Redirect(w, r, "/login?token=SECRET", http.StatusFound)
			return
		}
		fmt.Fprint(w, "x")
	}))
	defer srv.Close()
	var seen []string
	allowed := func(u *url.URL) bool {
		seen = append(seen, u.Path)
		return strings.HasPrefix(u.Path, "/wiki/")
	}
	_, err := NewService(ServiceOptions{}).Retrieve(context.Background(), srv.URL+"/wiki/a",
		Options{Policy: UserChosen, IsTargetAllowed: allowed})
	if !errors.Is(err, ErrTargetNotAllowed) || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "login") {
		t.Fatalf("error %v", err)
	}
	if strings.Join(seen, ",") != "/wiki/a,/wiki/b,/login" {
		t.Errorf("IsTargetAllowed saw %v", seen)
	}
}

// TestStatusError reports the code without the address.
func TestStatusError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusGone)
	}))
	defer srv.Close()
	_, err := NewService(ServiceOptions{}).Retrieve(context.Background(), srv.URL+"/x?key=SECRET", Options{Policy: UserChosen})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 410 || err.Error() != "the server returned HTTP 410 (Gone)" {
		t.Fatalf("error %v", err)
	}
}

// TestPageJSON is the shape `steward read --json` prints.
func TestPageJSON(t *testing.T) {
	p := &Page{RequestedURL: "http://a.example/", FinalURL: "http://a.example/b", ContentKind: TextDocument,
		Markdown: "x", RequiredConfidence: policy.High, Published: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Timings: Timings{DNS: 1500 * time.Microsecond, Connect: 2 * time.Millisecond, Total: time.Second}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"content_kind":"TEXT_DOCUMENT"`, `"required_confidence":"HIGH"`,
		`"published":"2026-01-02T03:04:05Z"`, `"timings":{"dns_ms":1.5,"connect_ms":2,"total_ms":1000}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), `"modified"`) || strings.Contains(string(b), `"title"`) {
		t.Errorf("JSON %s has fields that should be omitted when empty", b)
	}
}

// TestHTMLCharset decodes a page declared in a meta tag as windows-1252.
func TestHTMLCharset(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><head><meta charset=\"windows-1252\"><title>Caf\xe9</title></head><body><article><p>" +
			strings.Repeat("Cr\xe8me br\xfbl\xe9e \x96 a dessert. ", 20) + "</p></article></body></html>"))
	}))
	defer srv.Close()
	page, err := NewService(ServiceOptions{}).Retrieve(context.Background(), srv.URL, Options{Policy: UserChosen})
	if err != nil {
		t.Fatal(err)
	}
	if page.Title != "Café" || !strings.Contains(page.Markdown, "Crème brûlée – a dessert.") {
		t.Errorf("title %q, markdown %q", page.Title, page.Markdown[:60])
	}
}

// TestConcurrentRetrieve shares one Service between goroutines.
func TestConcurrentRetrieve(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><article><p>%s</p></article></body></html>",
			r.URL.Path, strings.Repeat("Some words for the body of this page. ", 30))
	}))
	defer srv.Close()
	s := NewService(ServiceOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			path := fmt.Sprintf("/p%d", i)
			page, err := s.Retrieve(context.Background(), srv.URL+path, Options{Policy: UserChosen})
			if err != nil {
				errs <- err
				return
			}
			if page.Title != path {
				errs <- fmt.Errorf("title %q, want %q", page.Title, path)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCallerDeadline tells the caller's budget from the page timeout.
func TestCallerDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := NewService(ServiceOptions{}).Retrieve(ctx, srv.URL, Options{Policy: UserChosen, Timeout: time.Minute})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want ErrTimeout wrapping the caller's deadline", err)
	}
}
