package eri_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/credhttp/credhttptest"
	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/internal/eritest"
)

const secret = "s3cret-Hunter2"

func client(t *testing.T, srv *eritest.Server, cr eri.Credentials) *eri.Client {
	t.Helper()
	u, _ := url.Parse(srv.URL() + "/")
	c, err := eri.New(eri.Options{BaseURL: u, Credentials: cr, Setting: "data source test (hostname)",
		InfoTimeout: 2 * time.Second, RetrievalTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func handbook() []eritest.Document {
	return []eritest.Document{
		{Name: "handbook.pdf", Category: "policy document", Path: "https://hr.example.org/handbook#s4",
			Text: "Section 4: Leave\n\nParental leave lasts up to 14 months and may be split between both parents.\n\nSection 5: Travel"},
		{Name: "travel.md", Category: "guide", Path: "/srv/hr/travel.md", Text: "Travel expenses are refunded within 30 days."},
	}
}

// noSecret fails when an error message carries the secret or the token.
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if e, ok := eri.AsError(err); ok {
		msg += " " + e.ServerMessage
	}
	if strings.Contains(msg, secret) || strings.Contains(msg, "t-42") {
		t.Fatalf("an error carries a secret or the token: %q", msg)
	}
}

func TestFullExchangeWithTokenFollowsTheSpec(t *testing.T) {
	srv := eritest.New(t, eritest.Options{Method: eri.AuthToken, Secret: secret,
		Info:       eri.DataSourceInfo{Name: "Handbook", Description: "Internal HR handbook, 2026 edition."},
		Embeddings: []eri.EmbeddingInfo{{EmbeddingType: "Transformer Embedding", EmbeddingName: "e5", Description: "multilingual", UsedWhen: "always"}},
		Documents:  handbook()})
	c := client(t, srv, eri.Credentials{Method: eri.AuthToken, Secret: secret})
	ctx := context.Background()
	methods, err := c.AuthMethods(ctx)
	if err != nil || len(methods) != 1 || methods[0].AuthMethod != eri.AuthToken {
		t.Fatalf("methods %v %v", methods, err)
	}
	s, err := c.SignIn(ctx, methods)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.DataSource(ctx)
	if err != nil || info.Name != "Handbook" || !strings.Contains(info.Description, "HR handbook") {
		t.Fatalf("data source %+v %v", info, err)
	}
	emb, err := s.EmbeddingInfo(ctx)
	if err != nil || len(emb) != 1 || emb[0].EmbeddingName != "e5" {
		t.Fatalf("embeddings %+v %v", emb, err)
	}
	procs, err := s.RetrievalInfo(ctx)
	if err != nil || len(procs) != 1 || procs[0].ID != "words" {
		t.Fatalf("retrieval info %+v %v", procs, err)
	}
	sec, err := s.SecurityRequirements(ctx)
	if err != nil || sec.AllowedProviderType != eri.ProviderAny {
		t.Fatalf("security %+v %v", sec, err)
	}
	got, err := s.Retrieve(ctx, eri.RetrievalRequest{LatestUserPrompt: "parental leave", MaxMatches: 11,
		Thread: eri.ChatThread{ContentBlocks: []eri.ContentBlock{{Content: "parental leave", Role: eri.RoleUser, Type: eri.ContentText}}}})
	if err != nil || len(got) != 1 || got[0].Name != "handbook.pdf" || !strings.Contains(got[0].MatchedContent, "14 months") {
		t.Fatalf("retrieve %+v %v", got, err)
	}
	if len(got[0].SurroundingContent) != 2 {
		t.Fatalf("surrounding content: %v", got[0].SurroundingContent)
	}

	// What went over the wire: the secret only to /auth, the token to
	// every other call but /auth/methods, and the retrieval as the spec
	// and the reference client write it.
	for _, r := range srv.Requests() {
		ep := r.Method + " " + r.Path
		auth, tok := r.Header.Get("Authorization"), r.Header.Get("token")
		switch ep {
		case "GET /auth/methods":
			if auth != "" || tok != "" {
				t.Errorf("%s carries credentials: %v", ep, r.Header)
			}
		case "POST /auth":
			if auth != "Bearer "+secret || tok != "" || r.Query != "authMethod=TOKEN" {
				t.Errorf("%s: Authorization %q, token %q, query %q", ep, auth, tok, r.Query)
			}
		default:
			if auth != "" || tok != "t-42" {
				t.Errorf("%s: Authorization %q, token %q; want only the token", ep, auth, tok)
			}
		}
	}
	var wire map[string]any
	for _, r := range srv.Requests() {
		if r.Path == "/retrieval" {
			json.Unmarshal(r.Body, &wire)
		}
	}
	if v, ok := wire["retrievalProcessId"]; !ok || v != nil {
		t.Errorf("retrievalProcessId must be null when the server chooses: %v", wire)
	}
	if v, ok := wire["parameters"]; !ok || v != nil {
		t.Errorf("parameters must be null: %v", wire)
	}
	if wire["latestUserPromptType"] != "TEXT" || wire["maxMatches"] != float64(11) {
		t.Errorf("request %v", wire)
	}
}

func TestUsernamePasswordUsesTheServersFieldNames(t *testing.T) {
	srv := eritest.New(t, eritest.Options{Method: eri.AuthUsernamePassword, Username: "ada", Secret: secret,
		Mappings: []eri.AuthFieldMapping{{AuthField: eri.FieldUsername, FieldName: "X-Eri-User"}, {AuthField: eri.FieldPassword, FieldName: "X-Eri-Pass"}}})
	c := client(t, srv, eri.Credentials{Method: eri.AuthUsernamePassword, Username: "ada", Secret: secret})
	methods, err := c.AuthMethods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SignIn(context.Background(), methods); err != nil {
		t.Fatalf("sign-in with the server's field names: %v", err)
	}
	// Without the methods, the reference client's names are used: this
	// server does not take them.
	_, err = c.SignIn(context.Background(), nil)
	e, ok := eri.AsError(err)
	if !ok || !e.SignInRefused || e.ServerMessage != "wrong credentials" {
		t.Fatalf("a refused sign-in: %v", err)
	}
	noSecret(t, err)
}

func TestUsernamePasswordDefaultsAndNone(t *testing.T) {
	srv := eritest.New(t, eritest.Options{Method: eri.AuthUsernamePassword, Username: "ada", Secret: secret})
	c := client(t, srv, eri.Credentials{Method: eri.AuthUsernamePassword, Username: "ada", Secret: secret})
	if _, err := c.SignIn(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if last.Header.Get("user") != "ada" || last.Header.Get("password") != secret {
		t.Fatalf("the reference client's headers: %v", last.Header)
	}
	none := eritest.New(t, eritest.Options{})
	s, err := client(t, none, eri.Credentials{Method: eri.AuthNone}).SignIn(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DataSource(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSignInRefusalsNameWhatIsWrong(t *testing.T) {
	srv := eritest.New(t, eritest.Options{Method: eri.AuthToken, Secret: secret})
	c := client(t, srv, eri.Credentials{Method: eri.AuthToken, Secret: "wrong-" + secret})
	_, err := c.SignIn(context.Background(), nil)
	if e, ok := eri.AsError(err); !ok || !e.SignInRefused || !strings.Contains(err.Error(), "refused the sign-in") {
		t.Fatalf("%v", err)
	}
	noSecret(t, err)

	// A method the server does not offer is refused before /auth.
	c = client(t, srv, eri.Credentials{Method: eri.AuthUsernamePassword, Username: "x", Secret: secret})
	methods, _ := c.AuthMethods(context.Background())
	before := srv.Count("POST /auth")
	_, err = c.SignIn(context.Background(), methods)
	if err == nil || !strings.Contains(err.Error(), "offers TOKEN") || srv.Count("POST /auth") != before {
		t.Fatalf("%v", err)
	}
	_, err = client(t, srv, eri.Credentials{Method: eri.AuthKerberos}).SignIn(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("kerberos: %v", err)
	}
	// A token with a line break would smuggle a header.
	srv.Override("POST /auth", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"success":true,"token":"a\r\nX-Evil: 1","message":null}`))
	})
	_, err = client(t, srv, eri.Credentials{Method: eri.AuthToken, Secret: secret}).SignIn(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "line breaks") {
		t.Fatalf("header smuggling: %v", err)
	}
}

// The reference client accepts answers the spec's strictest reading would
// not: no success field, PascalCase names, null lists. Steward accepts both.
func TestLenientWhereClientAndSpecDisagree(t *testing.T) {
	srv := eritest.New(t, eritest.Options{})
	srv.Override("POST /auth", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"Token":"t-42"}`)) })
	srv.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"Name":"a.txt","Category":null,"Path":null,"Type":"TEXT","MatchedContent":"hello","SurroundingContent":null,"Links":null}]`))
	})
	c := client(t, srv, eri.Credentials{Method: eri.AuthNone})
	s, err := c.SignIn(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Retrieve(context.Background(), eri.RetrievalRequest{LatestUserPrompt: "hello", MaxMatches: 2})
	if err != nil || len(got) != 1 || got[0].MatchedContent != "hello" || got[0].Category != "" || got[0].Links != nil {
		t.Fatalf("%+v %v", got, err)
	}
	// Both answers are valid ERI v1 too.
	if err := eritest.ValidateAnswer(t, "post", "/auth", []byte(`{"token":"t-42"}`)); err != nil {
		t.Fatalf("spec: %v", err)
	}
	if err := eritest.ValidateAnswer(t, "post", "/retrieval", []byte(`[{"name":"a.txt","category":null,"type":"TEXT","matchedContent":"hello","surroundingContent":null,"links":null}]`)); err != nil {
		t.Fatalf("spec: %v", err)
	}
	// A server that wants the token on /auth/methods too still answers.
	if _, err := c.AuthMethods(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedAnswersFailTheCall(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"unknown field", `[{"name":"a","type":"TEXT","matchedContent":"x","surroundingContent":[],"links":[],"score":0.9}]`, 200, `"score" is not part of ERI v1`},
		{"html", `<html><body>Gateway error</body></html>`, 200, "not valid JSON"},
		{"wrong type", `[{"name":"a","type":"TEXT","matchedContent":42}]`, 200, "must not be a JSON number"},
		{"unknown enum", `[{"name":"a","type":"PDF","matchedContent":"x"}]`, 200, `"PDF", which ERI v1 does not define`},
		{"object instead of list", `{"contexts":[]}`, 200, "must not be a JSON object"},
		{"empty body", ``, 200, "the body is empty"},
		{"two values", `[] []`, 200, "more than one JSON value"},
		{"server error", `{"error":"boom"}`, 500, "HTTP 500"},
		{"token expired", `{}`, 401, "refused the sign-in (HTTP 401)"},
		{"redirect", ``, 302, "redirect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := eritest.New(t, eritest.Options{})
			srv.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) {
				if tc.status == 302 {
					w.Header().Set("Location", "http://127.0.0.2:1/steal")
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			})
			s, err := client(t, srv, eri.Credentials{Method: eri.AuthNone}).SignIn(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Retrieve(context.Background(), eri.RetrievalRequest{LatestUserPrompt: "x", MaxMatches: 3})
			if err == nil || got != nil {
				t.Fatalf("a malformed answer must fail the call, got %v", got)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "POST /retrieval") {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "Gateway error") || strings.Contains(err.Error(), "boom") {
				t.Fatalf("the error quotes the server's body: %q", err)
			}
		})
	}
}

func TestInfoAnswersAreCheckedToo(t *testing.T) {
	srv := eritest.New(t, eritest.Options{})
	srv.Override("GET /security/requirements", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"allowedProviderType":"CLOUD"}`))
	})
	srv.Override("GET /auth/methods", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"authMethod":"MAGIC","authFieldMappings":[]}]`))
	})
	c := client(t, srv, eri.Credentials{Method: eri.AuthNone})
	if _, err := c.AuthMethods(context.Background()); err == nil || !strings.Contains(err.Error(), "MAGIC") {
		t.Fatalf("methods: %v", err)
	}
	s, _ := c.SignIn(context.Background(), nil)
	if _, err := s.SecurityRequirements(context.Background()); err == nil || !strings.Contains(err.Error(), "CLOUD") {
		t.Fatalf("security: %v", err)
	}
	srv.Override("GET /security/requirements", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })
	sec, err := s.SecurityRequirements(context.Background())
	if err != nil || sec.AllowedProviderType != "" {
		t.Fatalf("a missing type comes back empty for the caller to decide: %+v %v", sec, err)
	}
	srv.Override("POST /auth", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"success":false,"token":null,"message":"account\nlocked ` + strings.Repeat("x", 400) + `"}`))
	})
	_, err = c.SignIn(context.Background(), nil)
	e, ok := eri.AsError(err)
	if !ok || !e.SignInRefused || strings.Contains(e.ServerMessage, "\n") || len([]rune(e.ServerMessage)) > 203 || strings.Contains(err.Error(), "locked") {
		t.Fatalf("the server's message is kept apart, on one line and short: %v / %q", err, e.ServerMessage)
	}
}

func TestSlowAndHugeAnswers(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := eritest.New(t, eritest.Options{})
	srv.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	u, _ := url.Parse(srv.URL())
	c, _ := eri.New(eri.Options{BaseURL: u, Credentials: eri.Credentials{Method: eri.AuthNone}, RetrievalTimeout: 150 * time.Millisecond})
	s, err := c.SignIn(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Retrieve(context.Background(), eri.RetrievalRequest{LatestUserPrompt: "x", MaxMatches: 1})
	if e, ok := eri.AsError(err); !ok || !e.Timeout || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("a hanging server: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the timeout did not end the call")
	}

	// A body that trickles in is bounded by the same deadline.
	srv.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	_, err = s.Retrieve(context.Background(), eri.RetrievalRequest{LatestUserPrompt: "x", MaxMatches: 1})
	if e, ok := eri.AsError(err); !ok || !e.Timeout {
		t.Fatalf("a trickling server: %v", err)
	}

	// A body over the cap is refused without being read to its end.
	srv.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"name":"a","type":"TEXT","matchedContent":"`))
		chunk := []byte(strings.Repeat("a", 1<<20))
		for i := 0; i < 20; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write([]byte(`"}]`))
	})
	c2, _ := eri.New(eri.Options{BaseURL: u, Credentials: eri.Credentials{Method: eri.AuthNone}})
	s2, _ := c2.SignIn(context.Background(), nil)
	_, err = s2.Retrieve(context.Background(), eri.RetrievalRequest{LatestUserPrompt: "x", MaxMatches: 1})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes", eri.MaxRetrievalBytes)) {
		t.Fatalf("a huge answer: %v", err)
	}

	// Ten thousand and one contexts are more than any page asks for.
	srv.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("[" + strings.TrimSuffix(strings.Repeat(`{"type":"TEXT","matchedContent":"x"},`, eri.MaxContexts+1), ",") + "]"))
	})
	if _, err = s2.Retrieve(context.Background(), eri.RetrievalRequest{LatestUserPrompt: "x", MaxMatches: 1}); err == nil || !strings.Contains(err.Error(), "10001 contexts") {
		t.Fatalf("too many contexts: %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	srv := eritest.New(t, eritest.Options{})
	u, _ := url.Parse(srv.URL())
	srv.Close()
	c, _ := eri.New(eri.Options{BaseURL: u, Credentials: eri.Credentials{Method: eri.AuthToken, Secret: secret}})
	_, err := c.SignIn(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "could not be reached") || strings.Contains(err.Error(), "/auth?") {
		t.Fatalf("%v", err)
	}
	noSecret(t, err)
}

func TestRedirectsAreNotFollowedWithTheSecret(t *testing.T) {
	var leaked int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked++ }))
	defer other.Close()
	srv := eritest.New(t, eritest.Options{Method: eri.AuthToken, Secret: secret})
	srv.Override("POST /auth", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/auth", http.StatusTemporaryRedirect)
	})
	_, err := client(t, srv, eri.Credentials{Method: eri.AuthToken, Secret: secret}).SignIn(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "redirect") || leaked != 0 {
		t.Fatalf("err %v, leaked %d", err, leaked)
	}
	noSecret(t, err)
}

func TestCredentialsNeverPrint(t *testing.T) {
	cr := eri.Credentials{Method: eri.AuthToken, Secret: secret}
	for _, s := range []string{fmt.Sprint(cr), fmt.Sprintf("%v %+v %#v %s", cr, cr, cr, cr)} {
		if strings.Contains(s, secret) {
			t.Fatalf("credentials print their secret: %s", s)
		}
	}
	if _, err := eri.New(eri.Options{}); err == nil {
		t.Fatal("a client needs a base URL")
	}
	if !errors.Is(fmt.Errorf("x: %w", &eri.Error{Err: context.Canceled}), context.Canceled) {
		t.Fatal("Error unwraps")
	}
}

// The spec check itself must be able to fail, or the server's answers
// would be checked by nothing.
func TestSpecCheckRefusesWhatTheSpecForbids(t *testing.T) {
	bad := map[string]string{
		"/retrieval":             `[{"name":"a","score":1}]`,
		"/auth":                  `{"success":"yes"}`,
		"/security/requirements": `{"allowedProviderType":"CLOUD"}`,
		"/dataSource":            `{"name":"a","owner":"b"}`,
	}
	for path, body := range bad {
		method := "get"
		if path == "/retrieval" || path == "/auth" {
			method = "post"
		}
		if err := eritest.ValidateAnswer(t, method, path, []byte(body)); err == nil {
			t.Errorf("%s %s accepted %s", method, path, body)
		}
	}
	if err := eritest.ValidateRetrievalRequest(t, []byte(`{"latestUserPrompt":"x","maxMatches":"ten"}`)); err == nil {
		t.Error("a retrieval request with a string maxMatches validated")
	}
	if err := eritest.ValidateRetrievalRequest(t, []byte(`{"latestUserPrompt":"x","latestUserPromptType":"TEXT","thread":{"contentBlocks":[]},"retrievalProcessId":null,"parameters":null,"maxMatches":3}`)); err != nil {
		t.Errorf("the request Steward sends: %v", err)
	}
}

// FuzzRetrieve feeds arbitrary answers to the retrieval: the call returns
// contexts or an error, never panics, and never returns a context whose
// type is outside the spec.
func FuzzRetrieve(f *testing.F) {
	f.Add([]byte(`[{"name":"a","category":"book","path":"/x","type":"TEXT","matchedContent":"m","surroundingContent":["s"],"links":["https://e"]}]`))
	f.Add([]byte(`[{"Name":null,"Type":"IMAGE"}]`))
	f.Add([]byte(`[{"type":"TEXT","extra":1}]`))
	f.Add([]byte(`{"a":[1,2,{"b":null}]}`))
	f.Add([]byte(`[` + strings.Repeat("[", 100)))
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/auth" {
			w.Write([]byte(`{"success":true,"token":"t"}`))
			return
		}
		w.Write(body)
	}))
	f.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	c, _ := eri.New(eri.Options{BaseURL: u, Credentials: eri.Credentials{Method: eri.AuthNone}})
	s, err := c.SignIn(context.Background(), nil)
	if err != nil {
		f.Fatal(err)
	}
	valid := map[eri.ContentType]bool{"": true, "NONE": true, "UNKNOWN": true, "TEXT": true, "IMAGE": true, "VIDEO": true, "AUDIO": true, "SPEECH": true}
	f.Fuzz(func(t *testing.T, b []byte) {
		body = b
		got, err := s.Retrieve(context.Background(), eri.RetrievalRequest{LatestUserPrompt: "q", MaxMatches: 3})
		if err != nil && got != nil {
			t.Fatal("an error with contexts")
		}
		for _, c := range got {
			if !valid[c.Type] {
				t.Fatalf("type %q passed", c.Type)
			}
		}
	})
}

// The sign-in travels in headers and the token with every call: a redirect
// to another origin is not followed, for every redirect status, and the
// error names the setting and where the server tried to send it.
func TestRedirectToAnotherOriginIsRefusedForEveryStatus(t *testing.T) {
	for _, status := range credhttptest.Statuses() {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			r := credhttptest.NewRedirector(t, status)
			u, _ := url.Parse(r.URL + "/eri/")
			c, err := eri.New(eri.Options{BaseURL: u, Credentials: eri.Credentials{Method: eri.AuthToken, Secret: secret}, Setting: "data source hr (hostname)"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.SignIn(context.Background(), nil)
			r.AssertNothingLeaked(t)
			if err == nil || !strings.Contains(err.Error(), "data source hr (hostname)") || !strings.Contains(err.Error(), r.Target) {
				t.Fatalf("%v", err)
			}
			noSecret(t, err)
		})
	}
}

func TestRedirectWithinTheOriginIsFollowed(t *testing.T) {
	base := credhttptest.SameOrigin(t, "/old/auth", "/new/auth", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			t.Errorf("the token did not follow within the origin: %v", r.Header)
		}
		w.Write([]byte(`{"success":true,"token":"t"}`))
	}))
	u, _ := url.Parse(base + "/old/")
	c, _ := eri.New(eri.Options{BaseURL: u, Credentials: eri.Credentials{Method: eri.AuthToken, Secret: secret}})
	if _, err := c.SignIn(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}
