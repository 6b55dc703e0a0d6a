package webpage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/web"
)

// recordingSignIn stands in for the Kerberos sign-in: it records the hosts
// it was asked for and adds a header the intranet server accepts.
type recordingSignIn struct {
	mu    sync.Mutex
	hosts []string
}

func (r *recordingSignIn) Authorize(req *http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts = append(r.hosts, req.URL.Hostname())
	req.Header.Set("Authorization", "Negotiate token-for-"+req.URL.Hostname())
	return nil
}

func (r *recordingSignIn) asked() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.hosts, " ")
}

// intranet serves made-up HTTPS hosts that want the Negotiate sign-in and
// records which hosts ever received an Authorization header.
type intranet struct {
	sim    *webtest.Net
	mu     sync.Mutex
	authed map[string]bool
}

func newIntranet(t *testing.T) *intranet {
	in := &intranet{authed: map[string]bool{}}
	in.sim = webtest.NewTLSNet(t, http.HandlerFunc(in.serve))
	in.sim.Host("intranet.example.com", "10.1.2.3")
	in.sim.Host("other.example.com", "10.1.2.4")
	in.sim.Host("www.example.com", "93.184.215.14")
	return in
}

func (in *intranet) serve(w http.ResponseWriter, r *http.Request) {
	host, _, _ := strings.Cut(r.Host, ":")
	auth := r.Header.Get("Authorization")
	if auth != "" {
		in.mu.Lock()
		in.authed[host] = true
		in.mu.Unlock()
	}
	signedIn := auth == "Negotiate token-for-"+host
	switch r.URL.Path {
	case "/open":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, htmlPage("Canteen menu", "Open to all", "Facilities", webtest.LongText(1200)))
		return
	case "/refuse":
		signedIn = false
	}
	if !signedIn {
		w.Header().Set("WWW-Authenticate", "Negotiate")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/leave":
		http.Redirect(w, r, in.sim.URL("other.example.com", "/handbook"), http.StatusFound)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, htmlPage("Staff handbook", "Internal", "HR", webtest.LongText(1500)))
	}
}

func (in *intranet) gotHeader(host string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.authed[host]
}

// TestOsSignIn reads pages of a made-up HTTPS intranet with the setting
// useOsSignIn and checks which hosts were signed in to.
func TestOsSignIn(t *testing.T) {
	t.Parallel()
	on := tool.Settings{SettingFreeAddressChoice: FreeChoiceOn, SettingAllowedPrivateHosts: "*.example.com", SettingUseOsSignIn: OsSignInOn}
	off := merge(on, tool.Settings{SettingUseOsSignIn: OsSignInOff})
	cases := []struct {
		name       string
		settings   tool.Settings
		confidence policy.Confidence
		signInErr  error
		noSignIn   bool // Deps.SignIn is nil
		host, path string
		wantTitle  string // or, when empty, an error containing wantErr
		wantErr    string
		wantAsked  string
		noHeaderAt string
	}{
		{name: "ON, allowed private host, HIGH", settings: on, confidence: policy.High, host: "intranet.example.com", path: "/handbook",
			wantTitle: "Staff handbook", wantAsked: "intranet.example.com"},
		{name: "ON, page that needs no sign-in", settings: on, confidence: policy.High, host: "intranet.example.com", path: "/open",
			wantTitle: "Canteen menu"},
		{name: "OFF", settings: off, confidence: policy.High, host: "intranet.example.com", path: "/handbook",
			wantErr: "HTTP 401", noHeaderAt: "intranet.example.com"},
		{name: "ON, public host is never signed in to", settings: on, confidence: policy.High, host: "www.example.com", path: "/handbook",
			wantErr: "HTTP 401", noHeaderAt: "www.example.com"},
		{name: "ON, redirect to another allowed host", settings: on, confidence: policy.High, host: "intranet.example.com", path: "/leave",
			wantErr: "HTTP 401", wantAsked: "intranet.example.com", noHeaderAt: "other.example.com"},
		{name: "ON, MEDIUM provider reads no private host", settings: on, confidence: policy.Medium, host: "intranet.example.com", path: "/handbook",
			wantErr: "HIGH confidence", noHeaderAt: "intranet.example.com"},
		{name: "ON, the server refuses the signed-in user", settings: on, confidence: policy.High, host: "intranet.example.com", path: "/refuse",
			wantErr: "refused the operating-system sign-in", wantAsked: "intranet.example.com"},
		{name: "ON, sign-in unusable, page needs it", settings: on, confidence: policy.High, signInErr: errors.New("the ticket cache is of type KCM"),
			host: "intranet.example.com", path: "/handbook", wantErr: "HTTP 401", noHeaderAt: "intranet.example.com"},
		{name: "ON, sign-in unusable, page needs none", settings: on, confidence: policy.High, signInErr: errors.New("the ticket cache is of type KCM"),
			host: "intranet.example.com", path: "/open", wantTitle: "Canteen menu"},
		{name: "ON, no sign-in in this installation", settings: on, confidence: policy.High, noSignIn: true,
			host: "intranet.example.com", path: "/handbook", wantErr: "offers no operating-system sign-in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := newIntranet(t)
			rec := &recordingSignIn{}
			var rep webtest.Reports
			deps := Deps{Web: in.sim.Service(), Guard: webtest.NewFilter(&rep), Logger: webtest.Discard()}
			if !c.noSignIn {
				deps.SignIn = func() (web.SignIn, error) {
					if c.signInErr != nil {
						return nil, c.signInErr
					}
					return rec, nil
				}
			}
			tl := New(deps)
			args, _ := json.Marshal(map[string]string{ArgURL: in.sim.URL(c.host, c.path)})
			res, err := tl.Execute(context.Background(), args, tool.ExecContext{
				Definition: tl.Definition(), Settings: c.settings, ProviderConfidence: c.confidence, Chat: threadWith("", policy.OutboundRequirement{}),
			})
			if c.wantTitle != "" {
				if err != nil {
					t.Fatalf("Execute failed: %v", err)
				}
				if len(res.Sources) != 1 || res.Sources[0].Title != c.wantTitle || res.RequiredConfidence != policy.High {
					t.Errorf("sources %+v, required %v; want %q and HIGH", res.Sources, res.RequiredConfidence, c.wantTitle)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				if c.signInErr != nil && !strings.Contains(err.Error(), c.signInErr.Error()) {
					t.Errorf("error %v does not say why the sign-in could not be used", err)
				}
				if strings.Contains(err.Error(), in.sim.Port()) || strings.Contains(err.Error(), c.host) {
					t.Errorf("error %v repeats the address", err)
				}
			}
			if got := rec.asked(); got != c.wantAsked {
				t.Errorf("sign-in asked for %q, want %q", got, c.wantAsked)
			}
			if c.noHeaderAt != "" && in.gotHeader(c.noHeaderAt) {
				t.Errorf("%s received an Authorization header", c.noHeaderAt)
			}
		})
	}
}

// TestOsSignInSetting checks the setting as the documentation generator
// sees it.
func TestOsSignInSetting(t *testing.T) {
	t.Parallel()
	var f *tool.SettingField
	for i, s := range Definition().Settings.Fields {
		if s.Name == SettingUseOsSignIn {
			f = &Definition().Settings.Fields[i]
		}
	}
	if f == nil {
		t.Fatal("the definition has no useOsSignIn setting")
	}
	if f.Default != OsSignInOff || strings.Join(f.Enum, ",") != "OFF,ON" || !strings.Contains(f.Description, "HTTPS") {
		t.Errorf("setting %+v, want default OFF, enum OFF/ON and a description naming HTTPS", *f)
	}
	c, err := parseConfig(tool.Settings{SettingUseOsSignIn: "yes"})
	if err == nil || c.osSignIn {
		t.Errorf("an unreadable sign-in setting must be reported and read as OFF (got %v, %v)", c.osSignIn, err)
	}
}
