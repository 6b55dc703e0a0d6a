package dovetest

import (
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

func TestStartAppendFetch(t *testing.T) {
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
	if !strings.Contains(s.Log(t), "imap-login") {
		t.Errorf("log does not show logins: %s", s.Log(t))
	}
}

func TestWrongPasswordLogged(t *testing.T) {
	s := Start(t, User{Name: "alice", Password: "secret"})
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("alice", "nope").Wait(); err == nil {
		t.Fatal("wrong password accepted")
	}
	if !strings.Contains(s.Log(t), "auth failed") && !strings.Contains(s.Log(t), "Password mismatch") {
		t.Errorf("log does not record the failure:\n%s", s.Log(t))
	}
}
