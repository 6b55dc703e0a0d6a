package client

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stewardhq/steward/redact"
)

// A server's secrets are taken out of every message: its environment and
// header values, a bearer token quoted alone, its URL's query and each of
// its parameters; the error chain stays for errors.Is.
func TestRedactorTakesOutAServersSecrets(t *testing.T) {
	r := newRedactor(map[string]string{"API_TOKEN": "env-secret-4711"}, map[string]string{"Authorization": "Bearer hdr-token-0815"},
		"https://mcp.example.org/mcp?key=query-secret-42&team=alpha-team")
	in := "env-secret-4711 / hdr-token-0815 / Bearer hdr-token-0815 / key=query-secret-42&team=alpha-team / query-secret-42 / alpha-team"
	out := r.String(in)
	for _, s := range []string{"env-secret-4711", "hdr-token-0815", "query-secret-42", "alpha-team"} {
		if strings.Contains(out, s) {
			t.Errorf("%q still holds %q", out, s)
		}
	}
	if !strings.Contains(out, redact.Mask) {
		t.Errorf("%q", out)
	}
	err := r.Error(errors.Join(io.EOF, errors.New("failed with env-secret-4711")))
	if strings.Contains(err.Error(), "env-secret-4711") || !errors.Is(err, io.EOF) {
		t.Errorf("%v", err)
	}
}
