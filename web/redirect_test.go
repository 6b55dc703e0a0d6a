package web_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/web"
)

// TestUserChosenRedirects: the user chose the first address of a
// retrieval, not where its server redirects (issue 18, point 4). Metadata
// and link-local targets are refused on every redirect; a redirect from a
// public page into private or loopback space is refused, and allowed only
// when the user named such an address themselves. A refused target is
// never dialed: the made-up network fails the test on any dial it does not
// know, and counts the ones it routes.
func TestUserChosenRedirects(t *testing.T) {
	tests := []struct {
		name  string
		start string // the host the user typed
		to    string // the redirect target
		want  error  // nil: the target is read
	}{
		{"public to the metadata address", "news.example.com", "http://169.254.169.254/latest/meta-data/iam/security-credentials/", web.ErrNeverAllowedAddress},
		{"public to a metadata name", "news.example.com", "http://metadata.google.internal/computeMetadata/v1/", web.ErrMetadataHost},
		{"public to a name of the metadata address", "news.example.com", "http://imds.example.com/latest/", web.ErrNeverAllowedAddress},
		{"public to IPv6 link-local", "news.example.com", "http://[fe80::1]/", web.ErrNeverAllowedAddress},
		{"public to AWS IMDS over IPv6", "news.example.com", "http://[fd00:ec2::254]/latest/", web.ErrNeverAllowedAddress},
		{"public to loopback", "news.example.com", "http://127.0.0.1:8080/admin", web.ErrRedirectToLocalNetwork},
		{"public to IPv4-mapped loopback", "news.example.com", "http://[::ffff:127.0.0.1]/", web.ErrRedirectToLocalNetwork},
		{"public to localhost", "news.example.com", "http://localhost:631/admin", web.ErrRedirectToLocalNetwork},
		{"public to a private address", "news.example.com", "http://10.20.30.40/", web.ErrRedirectToLocalNetwork},
		{"public to a private name", "news.example.com", "http://intranet.example.com/payroll", web.ErrRedirectToLocalNetwork},
		{"public to public", "news.example.com", "http://mirror.example.org/article", nil},
		{"private the user named to another private host", "intranet.example.com", "http://wiki.example.com/home", nil},
		{"private the user named to the metadata address", "intranet.example.com", "http://169.254.169.254/latest/meta-data/", web.ErrNeverAllowedAddress},
		{"private the user named to link-local", "intranet.example.com", "http://printer.example.com/", web.ErrNeverAllowedAddress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var reached []string
			n := webtest.NewNet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached = append(reached, r.Host+r.URL.Path)
				if r.URL.Path == "/start" {
					w.Header().Set("Location", tc.to)
					w.WriteHeader(http.StatusFound)
					return
				}
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Write([]byte("the target's content"))
			}))
			n.Host("news.example.com", "93.184.215.14")
			n.Host("mirror.example.org", "93.184.215.15")
			n.Host("intranet.example.com", "10.1.2.3")
			n.Host("wiki.example.com", "10.1.2.4")
			n.Host("imds.example.com", "169.254.169.254")
			n.Host("printer.example.com", "169.254.10.20")
			n.Host("metadata.google.internal", "10.9.9.9")
			// A redirect to a literal address keeps the port of the
			// target; the made-up network serves every host on its port.
			to := tc.to
			if !strings.Contains(to, "://localhost") && !strings.Contains(to, ":8080") {
				to = withPort(to, n.Port())
			}
			tc.to = to
			page, err := n.Service().Retrieve(context.Background(), n.URL(tc.start, "/start"), web.Options{Policy: web.UserChosen})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if page.Markdown != "the target's content" || page.Redirects != 1 {
					t.Fatalf("page %q after %d redirects", page.Markdown, page.Redirects)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !web.IsBlocked(err) {
				t.Errorf("a policy refusal must be a *BlockedError: %v", err)
			}
			if strings.Contains(err.Error(), "169.254") || strings.Contains(err.Error(), "10.20") || strings.Contains(err.Error(), "intranet") {
				t.Errorf("the refusal repeats the address: %v", err)
			}
			// Only the page the user typed was ever connected to.
			if n.Dials() != 1 || len(reached) != 1 {
				t.Errorf("%d dials and requests %v; only the first page may be reached", n.Dials(), reached)
			}
		})
	}
}

// withPort puts port into an http URL that has none.
func withPort(raw, port string) string {
	rest := strings.TrimPrefix(raw, "http://")
	host, path, _ := strings.Cut(rest, "/")
	if strings.HasSuffix(host, "]") || !strings.Contains(host, ":") {
		host += ":" + port
	}
	return "http://" + host + "/" + path
}
