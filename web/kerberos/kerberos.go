package kerberos

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// DefaultConfigPath is the Kerberos configuration read when KRB5_CONFIG is
// not set.
const DefaultConfigPath = "/etc/krb5.conf"

// Options say where the Kerberos configuration and the ticket cache are.
type Options struct {
	// ConfigPath is the krb5.conf to read; empty means DefaultConfigPath.
	// A colon-separated list (as KRB5_CONFIG allows) uses its first file
	// that exists.
	ConfigPath string
	// CCache names the ticket cache as KRB5CCNAME does: "FILE:/path" or a
	// plain path. Empty means the configuration's default_ccache_name,
	// else FILE:/tmp/krb5cc_<uid>.
	CCache string
	// Now replaces time.Now for the expiry check.
	Now func() time.Time
}

// FromEnvironment returns the Options the Kerberos tools use: KRB5_CONFIG
// and KRB5CCNAME from the environment.
func FromEnvironment() Options {
	return Options{ConfigPath: os.Getenv("KRB5_CONFIG"), CCache: os.Getenv("KRB5CCNAME")}
}

// SignIn signs requests in with the user's Kerberos ticket. It satisfies
// web.SignIn and is safe for concurrent use.
type SignIn struct {
	configPaths []string
	ccache      string // as KRB5CCNAME; empty: from the configuration
	now         func() time.Time
}

// New checks that a ticket cache named in o is a FILE cache and returns
// the sign-in. The files themselves are read on every Authorize, so they
// need not exist yet.
func New(o Options) (*SignIn, error) {
	ccache := strings.TrimSpace(o.CCache)
	if ccache != "" {
		if _, err := fileCachePath(ccache); err != nil {
			return nil, err
		}
	}
	paths := []string{DefaultConfigPath}
	if c := strings.TrimSpace(o.ConfigPath); c != "" {
		paths = nil
		for _, p := range strings.Split(c, ":") {
			if p = strings.TrimSpace(p); p != "" {
				paths = append(paths, p)
			}
		}
	}
	s := &SignIn{configPaths: paths, ccache: ccache, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// fileCachePath returns the file of a FILE ticket cache name.
func fileCachePath(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "/tmp/krb5cc_" + strconv.Itoa(os.Getuid()), nil
	}
	typ, rest, hasType := strings.Cut(name, ":")
	if !hasType || strings.HasPrefix(name, "/") {
		return name, nil
	}
	if strings.EqualFold(typ, "FILE") {
		if rest == "" {
			return "", errors.New("the Kerberos ticket cache name FILE: names no file; set KRB5CCNAME to FILE:/path/to/cache")
		}
		return rest, nil
	}
	return "", fmt.Errorf("the Kerberos ticket cache is of type %s, which cannot be read; only FILE caches can. "+
		"Sign in to a file cache, e.g. KRB5CCNAME=FILE:/tmp/krb5cc_%d kinit, and start Steward with that KRB5CCNAME",
		strings.ToUpper(typ), os.Getuid())
}

// Authorize adds "Authorization: Negotiate <token>" for the service
// principal HTTP/<host> of req's host. It needs a valid ticket-granting
// ticket in the cache and asks the realm's KDC for the service ticket.
func (s *SignIn) Authorize(req *http.Request) error {
	host := strings.ToLower(strings.TrimSuffix(req.URL.Hostname(), "."))
	if host == "" {
		return errors.New("the request names no host to sign in to")
	}
	cfg, cfgPath, err := s.loadConfig()
	if err != nil {
		return err
	}
	cachePath, err := s.cacheFile(cfgPath)
	if err != nil {
		return err
	}
	cl, err := s.client(cfg, cachePath)
	if err != nil {
		return err
	}
	defer cl.Destroy()
	if err := spnego.SetSPNEGOHeader(cl, req, "HTTP/"+host); err != nil {
		// gokrb5 names the principal; the host stays out of the message.
		msg := strings.ReplaceAll(describe(err), "HTTP/"+host, "the web server's principal")
		return fmt.Errorf("no Kerberos service ticket for the web server could be obtained: %s", msg)
	}
	return nil
}

// cacheFile returns the ticket cache file: the one named in Options, else
// the configuration's default_ccache_name, else /tmp/krb5cc_<uid>.
func (s *SignIn) cacheFile(cfgPath string) (string, error) {
	if s.ccache != "" {
		return fileCachePath(s.ccache)
	}
	name, err := defaultCCacheName(cfgPath)
	if err != nil {
		return "", err
	}
	if name == "" {
		return fileCachePath("")
	}
	p, err := fileCachePath(expandCCacheName(name))
	if err != nil {
		return "", fmt.Errorf("%w (default_ccache_name in %s)", err, cfgPath)
	}
	return p, nil
}

// defaultCCacheName returns default_ccache_name from the [libdefaults]
// section of the configuration file, or "" (gokrb5 does not read it).
func defaultCCacheName(cfgPath string) (string, error) {
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return "", fmt.Errorf("the Kerberos configuration %s could not be read: %w", cfgPath, err)
	}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if ok && section == "libdefaults" && strings.TrimSpace(key) == "default_ccache_name" {
			return strings.TrimSpace(value), nil
		}
	}
	return "", nil
}

// expandCCacheName replaces the parameters MIT Kerberos expands in a cache
// name that can occur in a FILE cache's path.
func expandCCacheName(name string) string {
	uid := strconv.Itoa(os.Getuid())
	return strings.NewReplacer(
		"%{uid}", uid, "%{USERID}", uid, "%{euid}", strconv.Itoa(os.Geteuid()), "%{TEMP}", "/tmp",
	).Replace(name)
}

// loadConfig reads the first configuration file that exists and returns
// it with its path.
func (s *SignIn) loadConfig() (*config.Config, string, error) {
	var path string
	for _, p := range s.configPaths {
		if _, err := os.Stat(p); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		return nil, "", fmt.Errorf("no Kerberos configuration was found at %s; set KRB5_CONFIG to the krb5.conf to use", strings.Join(s.configPaths, ", "))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("the Kerberos configuration %s could not be opened: %w", path, err)
	}
	defer f.Close()
	cfg, err := config.NewFromReader(f)
	var unsupported config.UnsupportedDirective
	if err != nil && !(errors.As(err, &unsupported) && cfg != nil) {
		return nil, "", fmt.Errorf("the Kerberos configuration %s could not be read: %s", path, describe(err))
	}
	return cfg, path, nil
}

// client builds a Kerberos client from the ticket cache, after checking
// that it holds a ticket-granting ticket that has not expired.
func (s *SignIn) client(cfg *config.Config, cachePath string) (*client.Client, error) {
	data, err := os.ReadFile(cachePath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("there is no Kerberos ticket cache at %s; sign in with kinit (or the system's login) first", cachePath)
	}
	if err != nil {
		return nil, fmt.Errorf("the Kerberos ticket cache %s could not be read: %w", cachePath, err)
	}
	cc := new(credentials.CCache)
	if err := cc.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("the Kerberos ticket cache %s is not a readable FILE cache: %s", cachePath, describe(err))
	}
	realm := cc.DefaultPrincipal.Realm
	tgt, ok := cc.GetEntry(types.PrincipalName{NameType: nametype.KRB_NT_SRV_INST, NameString: []string{"krbtgt", realm}})
	if !ok {
		return nil, fmt.Errorf("the Kerberos ticket cache %s holds no ticket-granting ticket for realm %s; sign in with kinit again", cachePath, realm)
	}
	if !tgt.EndTime.IsZero() && !s.now().Before(tgt.EndTime) {
		return nil, fmt.Errorf("the Kerberos ticket in %s expired at %s; sign in with kinit again", cachePath, tgt.EndTime.UTC().Format(time.RFC3339))
	}
	cl, err := client.NewFromCCache(cc, cfg, client.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("the Kerberos ticket cache %s could not be used: %s", cachePath, describe(err))
	}
	return cl, nil
}

// describe shortens a gokrb5 error to one line of bounded length. gokrb5's
// messages name principals, realms and error codes, never key material.
func describe(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	const max = 400
	if len(msg) > max {
		msg = msg[:max] + "…"
	}
	return msg
}
