package web

import (
	"net/url"
	"testing"
)

func TestWithinBase(t *testing.T) {
	base, _ := url.Parse("https://wiki.example.org/confluence/")
	for raw, want := range map[string]bool{
		"https://wiki.example.org/confluence/":                    true,
		"https://wiki.example.org/confluence":                     true,
		"https://WIKI.example.org/confluence/display/OPS/Runbook": true,
		"HTTPS://wiki.example.org:443/confluence/x":               true,
		"https://wiki.example.org/confluence/x?next=https://evil": true,
		"https://wiki.example.org/confluence-evil/x":              false,
		"https://wiki.example.org/other":                          false,
		"https://wiki.example.org/confluence/../admin":            false,
		"https://wiki.example.org/confluence/%2e%2e/admin":        false,
		"https://wiki.example.org/confluence/%2E%2E/admin":        false,
		"https://wiki.example.org/confluence/.%2E/admin":          false,
		"https://wiki.example.org/confluence/a%2Fb":               false,
		"https://wiki.example.org:8443/confluence/x":              false,
		"http://wiki.example.org/confluence/x":                    false,
		"https://user@wiki.example.org/confluence/x":              false,
		"https://wiki.example.org.evil.example/confluence/x":      false,
		"https://evil.example/confluence/x":                       false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := WithinBase(base, u); got != want {
			t.Errorf("WithinBase(%s) = %v, want %v", raw, got, want)
		}
	}
	root, _ := url.Parse("https://wiki.example.org")
	if u, _ := url.Parse("https://wiki.example.org/anything"); !WithinBase(root, u) {
		t.Error("a base without a path holds the whole host")
	}
	if WithinBase(nil, root) || WithinBase(root, nil) {
		t.Error("nil")
	}
}
