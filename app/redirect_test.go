package app

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp/credhttptest"
	"github.com/stewardhq/steward/llm"
)

// wireAPIs are the provider kinds of every wire API, with the header each
// puts the key in.
var wireAPIs = []struct {
	name string
	p    llm.Provider
}{
	{"chat completions", llm.Provider{ID: "openai", Kind: "openai", APIKey: "sk-openai-secret", Model: "gpt-4.1", Caps: llm.Capabilities{API: llm.ChatCompletions, ToolCalling: true}}},
	{"responses", llm.Provider{ID: "openai", Kind: "openai", APIKey: "sk-openai-secret", Model: "gpt-5", Caps: llm.Capabilities{API: llm.Responses, ToolCalling: true}}},
	{"anthropic messages", llm.Provider{ID: "anthropic", Kind: "anthropic", APIKey: "sk-ant-secret", Model: "claude-sonnet-4-5", Caps: llm.Capabilities{API: llm.Messages, ToolCalling: true}}},
}

func round(t *testing.T, p llm.Provider) error {
	t.Helper()
	a, err := NewAdapter(p, llm.Request{Model: p.Model, MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Text: "a private question"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Round(context.Background(), llm.RoundOptions{}, func(string) {})
	return err
}

// A provider's base URL that redirects to another origin must not receive
// the request there: Anthropic's key travels in x-api-key, which Go's client
// forwards on a redirect to another host.
func TestProvidersDoNotFollowARedirectElsewhere(t *testing.T) {
	for _, w := range wireAPIs {
		for _, status := range credhttptest.Statuses() {
			t.Run(w.name+"/"+http.StatusText(status), func(t *testing.T) {
				r := credhttptest.NewRedirector(t, status)
				p := w.p
				p.BaseURL = r.URL + "/v1/"
				err := round(t, p)
				r.AssertNothingLeaked(t)
				if err == nil {
					t.Fatal("the round succeeded through a redirect to another origin")
				}
				if r.Requests() != 1 {
					t.Errorf("the configured server was asked %d times; a refused redirect is not retried", r.Requests())
				}
				msg := err.Error()
				for _, want := range []string{"base URL of provider " + p.ID, r.Target} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not name %q", msg, want)
					}
				}
				if strings.Contains(msg, p.APIKey) {
					t.Errorf("error repeats the key: %s", msg)
				}
			})
		}
	}
}

func TestProvidersFollowARedirectWithinTheirOrigin(t *testing.T) {
	for _, w := range wireAPIs {
		t.Run(w.name, func(t *testing.T) {
			var got string
			h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got = string(b)
				// Any answer will do: the request arrived with its body.
				http.Error(rw, `{"error":{"message":"stop here"}}`, http.StatusBadRequest)
			})
			var path string
			switch w.p.Caps.API {
			case llm.Responses:
				path = "responses"
			case llm.Messages:
				path = "messages"
			default:
				path = "chat/completions"
			}
			base := credhttptest.SameOrigin(t, "/v1/"+path, "/v2/"+path, h)
			p := w.p
			p.BaseURL = base + "/v1/"
			err := round(t, p)
			if err == nil || !strings.Contains(err.Error(), "stop here") {
				t.Fatalf("err = %v, want the answer from behind the redirect", err)
			}
			if !strings.Contains(got, "a private question") {
				t.Errorf("the redirected request arrived without its body: %q", got)
			}
		})
	}
}
