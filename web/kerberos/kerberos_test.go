package kerberos

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/web"
)

// SignIn is the web package's operating-system sign-in.
var _ web.SignIn = (*SignIn)(nil)

func TestFileCachePath(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	tests := []struct {
		name, in, want, wantErr string
	}{
		{"default", "", "/tmp/krb5cc_" + uid, ""},
		{"FILE prefix", "FILE:/tmp/cc", "/tmp/cc", ""},
		{"lower-case prefix", "file:/tmp/cc", "/tmp/cc", ""},
		{"plain path", "/run/user/1/krb5cc", "/run/user/1/krb5cc", ""},
		{"relative path without type", "krb5cc", "krb5cc", ""},
		{"empty FILE", "FILE:", "", "names no file"},
		{"KCM", "KCM:", "", "of type KCM"},
		{"KEYRING", "KEYRING:persistent:1000", "", "of type KEYRING"},
		{"DIR", "DIR:/run/user/1000/krb5cc", "", "only FILE caches"},
		{"MEMORY", "MEMORY:x", "", "of type MEMORY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fileCachePath(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestAuthorizeFailures checks the messages for what is missing or
// broken; no KDC is contacted because each case stops before that.
func TestAuthorizeFailures(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(conf, []byte("[libdefaults]\n default_realm = STEWARD.TEST\n[realms]\n STEWARD.TEST = {\n  kdc = 127.0.0.1:1\n }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not a ticket cache"), 0o600); err != nil {
		t.Fatal(err)
	}
	kcmConf := filepath.Join(dir, "kcm.conf")
	fileConf := filepath.Join(dir, "file.conf")
	for path, text := range map[string]string{
		kcmConf:  "[libdefaults]\n default_realm = STEWARD.TEST\n default_ccache_name = KCM:\n[realms]\n STEWARD.TEST = {\n  kdc = 127.0.0.1:1\n }\n",
		fileConf: "[realms]\n STEWARD.TEST = {\n  default_ccache_name = FILE:/not/this\n }\n[libdefaults]\n default_ccache_name = FILE:" + dir + "/cc_%{uid}\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		opts    Options
		url     string
		wantErr string
	}{
		{"default cache of the configuration is KCM", Options{ConfigPath: kcmConf}, "https://wiki.corp/", "of type KCM"},
		{"default cache of the configuration is a file", Options{ConfigPath: fileConf}, "https://wiki.corp/",
			"no Kerberos ticket cache at " + dir + "/cc_" + strconv.Itoa(os.Getuid()) + ";"},
		{"no cache", Options{ConfigPath: conf, CCache: "FILE:" + filepath.Join(dir, "missing")}, "https://wiki.corp/", "no Kerberos ticket cache at"},
		{"unreadable cache", Options{ConfigPath: conf, CCache: garbage}, "https://wiki.corp/", "not a readable FILE cache"},
		{"no configuration", Options{ConfigPath: filepath.Join(dir, "none.conf") + ":" + filepath.Join(dir, "also-none.conf"), CCache: garbage}, "https://wiki.corp/", "no Kerberos configuration was found"},
		{"no host", Options{ConfigPath: conf, CCache: garbage}, "https:///x", "names no host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequest(http.MethodGet, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Authorize(req)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if req.Header.Get("Authorization") != "" {
				t.Error("a failed sign-in set the Authorization header")
			}
		})
	}
}

func TestNewRefusesOtherCacheTypes(t *testing.T) {
	if _, err := New(Options{CCache: "KCM:1000"}); err == nil || !strings.Contains(err.Error(), "only FILE caches") {
		t.Fatalf("error %v, want the FILE-only explanation", err)
	}
}
