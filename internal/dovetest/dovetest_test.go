package dovetest

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
)

func TestStartAppendFetch(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := Start(t)
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("testuser", "testpass").Wait(); err != nil {
		t.Fatalf("login: %v", err)
	}
	msg := "From: a@example.org\r\nSubject: hi\r\n\r\nbody\r\n"
	cmd := c.Append("INBOX", int64(len(msg)), nil)
	if _, err := cmd.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		t.Fatalf("append: %v", err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sel.NumMessages != 1 || sel.UIDValidity == 0 {
		t.Fatalf("select: %+v", sel)
	}
	lists, err := c.List("", "*", &imap.ListOptions{ReturnSpecialUse: true}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var drafts bool
	for _, l := range lists {
		for _, a := range l.Attrs {
			if a == imap.MailboxAttrDrafts {
				drafts = true
			}
		}
	}
	if !drafts {
		t.Errorf("no \\Drafts special-use folder in %+v", lists)
	}
	if err := c.Login("testuser", "wrong").Wait(); err == nil {
		t.Log("second login after success unexpectedly accepted")
	}
	s.WaitLog(t, 1, "imap-login: Info: Login: user=<testuser>")
}

func TestWrongPasswordLogged(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := Start(t, User{Name: "alice", Password: "secret"})
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("alice", "nope").Wait(); err == nil {
		t.Fatal("wrong password accepted")
	}
	s.WaitLog(t, 1, "alice", "Password mismatch")
}

func TestTLSListeners(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := StartWith(t, Options{TLS: true})
	conf := s.ClientTLSConfig(t)
	c, err := imapclient.DialTLS(s.TLSAddr(), &imapclient.Options{TLSConfig: conf})
	if err != nil {
		t.Fatalf("imaps: %v", err)
	}
	if err := c.Login("testuser", "testpass").Wait(); err != nil {
		t.Fatalf("login over imaps: %v", err)
	}
	c.Close()
	c, err = imapclient.DialStartTLS(s.Addr(), &imapclient.Options{TLSConfig: conf})
	if err != nil {
		t.Fatalf("starttls: %v", err)
	}
	if err := c.Login("testuser", "testpass").Wait(); err != nil {
		t.Fatalf("login after STARTTLS: %v", err)
	}
	c.Close()
	if n := s.WaitLog(t, 2, "Login: user=<testuser>, method=PLAIN, rip=127.0.0.1, lip=127.0.0.1"); n != 2 {
		t.Errorf("%d logins logged, want 2:\n%s", n, s.Log(t))
	}
	if n := s.WaitLog(t, 2, ", TLS, session="); n != 2 {
		t.Errorf("%d logins over TLS logged, want 2:\n%s", n, s.Log(t))
	}
	bad := &tls.Config{RootCAs: UnrelatedCAPool(t), ServerName: s.Host}
	if c, err := imapclient.DialTLS(s.TLSAddr(), &imapclient.Options{TLSConfig: bad}); err == nil {
		c.Close()
		t.Fatal("a client trusting an unrelated CA accepted the server certificate")
	}
}

func TestOAuth2Passdb(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	var mu sync.Mutex
	var posted []string
	in := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		tok := r.PostForm.Get("token")
		mu.Lock()
		posted = append(posted, r.Method+" "+r.URL.Path+" "+tok)
		mu.Unlock()
		if tok == "good" {
			fmt.Fprint(w, `{"active":true,"username":"testuser"}`)
			return
		}
		fmt.Fprint(w, `{"active":false}`)
	}))
	defer in.Close()
	s := StartWith(t, Options{OAuth2IntrospectionURL: in.URL + "/introspect"})

	tests := []struct {
		name  string
		login func(c *imapclient.Client) error
		ok    bool
	}{
		{"valid bearer token", func(c *imapclient.Client) error {
			return c.Authenticate(sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: "testuser", Token: "good"}))
		}, true},
		{"inactive bearer token", func(c *imapclient.Client) error {
			return c.Authenticate(sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: "testuser", Token: "bad"}))
		}, false},
		{"password still works", func(c *imapclient.Client) error { return c.Login("testuser", "testpass").Wait() }, true},
		{"token is no password", func(c *imapclient.Client) error { return c.Login("testuser", "good").Wait() }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := imapclient.DialInsecure(s.Addr(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := tc.login(c); (err == nil) != tc.ok {
				t.Errorf("sign-in error %v, want success %v\n%s", err, tc.ok, s.Log(t))
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "[POST /introspect good POST /introspect bad]"; fmt.Sprint(posted) != want {
		t.Errorf("introspection requests %v, want %s", posted, want)
	}
}
