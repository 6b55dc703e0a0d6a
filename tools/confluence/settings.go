package confluence

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Setting names, shared by the settings schema and the code reading them.
// An organization addresses them as "search_confluence.<name>".
const (
	SettingBaseURL              = "baseUrl"
	SettingMode                 = "mode"
	SettingEmail                = "email"
	SettingAPIToken             = "apiToken"
	SettingPersonalAccessToken  = "personalAccessToken"
	SettingCloudID              = "cloudId"
	SettingAPIBaseURL           = "apiBaseUrl"
	SettingDefaultSpaceKey      = "defaultSpaceKey"
	SettingTimeoutSeconds       = "timeoutSeconds"
	SettingMaxContentCharacters = "maxContentCharacters"
	SettingPageBodies           = "pageBodies"
	SettingUseOsSignIn          = "useOsSignIn"
)

// BaseURLKey is the organization's key of the wiki's base URL. read_web_page
// reads the same setting, so the wiki it may open after a chat read mails
// is the wiki this tool searches.
const BaseURLKey = ID + "." + SettingBaseURL

// The modes.
const (
	// ModeSearchPage loads the Data Center search page dosearchsite.action
	// through the page retrieval service, with the operating-system
	// sign-in; no token.
	ModeSearchPage = "SEARCH_PAGE"
	// ModeREST asks the REST API (/rest/api/search) of Confluence Cloud or
	// Data Center with a token.
	ModeREST = "REST"
)

// The values of useOsSignIn.
const (
	OsSignInOn  = "ON"
	OsSignInOff = "OFF"
)

// Defaults and bounds of the numeric settings.
const (
	DefaultTimeoutSeconds       = 30
	MaxTimeoutSeconds           = 120
	DefaultMaxContentCharacters = 30000
	MaxMaxContentCharacters     = 100000
	DefaultPageBodies           = 3
	MaxPageBodies               = 5
	// maxSpaceKeyChars bounds a space key, as Confluence does.
	maxSpaceKeyChars = 255
)

// scopedAPIHost is where scoped API tokens (and OAuth) must be sent.
const scopedAPIHost = "https://api.atlassian.com/ex/confluence/"

// config is the parsed settings of one call or one validation.
type config struct {
	base     *url.URL // the wiki, ending in "/"
	mode     string
	email    string
	apiToken string
	pat      string
	cloudID  string
	// apiBase is where the REST API is asked, ending in "/"; apiSetting
	// names the setting it came from, for errors.
	apiBase    *url.URL
	apiSetting string
	space      string
	timeout    time.Duration
	maxChars   int
	bodies     int
	osSignIn   bool
}

// key names a setting the way an organization writes it.
func key(name string) string { return ID + "." + name }

// ParseBaseURL reads the wiki's base URL: an https address with a host and
// no user name, password, query or fragment. The path is kept, ending in
// "/" (a Data Center context path such as /confluence/, Cloud's /wiki/). The
// error says what is wrong, never repeating a password.
func ParseBaseURL(raw string) (*url.URL, error) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return nil, errors.New("it is empty")
	}
	if strings.ContainsFunc(v, unicode.IsSpace) || strings.ContainsFunc(v, unicode.IsControl) {
		return nil, errors.New("it contains spaces or control characters")
	}
	u, err := url.Parse(v)
	if err != nil || u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("it is not an absolute address with a host, such as https://wiki.example.org/")
	}
	switch {
	case u.Scheme != "https":
		return nil, errors.New("it must start with https:// (the tool never sends a search over plain http)")
	case u.User != nil:
		return nil, errors.New("it must not contain a user name or password; the credentials have settings of their own")
	case u.RawQuery != "" || u.ForceQuery:
		return nil, errors.New("it must not contain a query (?…)")
	case u.Fragment != "" || strings.Contains(v, "#"):
		return nil, errors.New("it must not contain a fragment (#…)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("its port is not a number from 1 to 65535")
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if d := strings.ToLower(seg); d == "." || d == ".." || strings.Contains(d, "%2e") || strings.Contains(d, "%2f") {
			return nil, errors.New("its path must not contain . or .. segments or escaped slashes")
		}
	}
	u.Host = strings.ToLower(u.Host)
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u, nil
}

var cloudIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// isCloudSite reports whether the wiki is on Atlassian's Cloud domain.
func isCloudSite(u *url.URL) bool {
	return strings.HasSuffix(strings.ToLower(u.Hostname()), ".atlassian.net")
}

// parseConfig reads the settings. Every problem is collected, each naming
// its setting; a setting with a problem takes its default (or none), so a
// caller can still tell the rest. Secrets never appear in a message.
func parseConfig(s map[string]string) (config, error) {
	get := func(name string) string { return strings.TrimSpace(s[name]) }
	var errs []error
	c := config{mode: ModeSearchPage, timeout: DefaultTimeoutSeconds * time.Second, maxChars: DefaultMaxContentCharacters,
		bodies: DefaultPageBodies, osSignIn: true}

	if v := get(SettingBaseURL); v == "" {
		errs = append(errs, fmt.Errorf("setting %s is missing: the https address of the wiki, e.g. https://wiki.example.org/ (Data Center) or https://example.atlassian.net/wiki/ (Cloud)", key(SettingBaseURL)))
	} else if u, err := ParseBaseURL(v); err != nil {
		errs = append(errs, fmt.Errorf("setting %s is not usable: %w", key(SettingBaseURL), err))
	} else {
		c.base = u
	}
	switch v := get(SettingMode); v {
	case "", ModeSearchPage:
	case ModeREST:
		c.mode = ModeREST
	default:
		errs = append(errs, fmt.Errorf("setting %s must be %s (the Data Center search page) or %s (the REST API of Cloud or Data Center), exactly, in capitals", key(SettingMode), ModeSearchPage, ModeREST))
	}
	c.email, c.apiToken, c.pat, c.cloudID = get(SettingEmail), get(SettingAPIToken), get(SettingPersonalAccessToken), get(SettingCloudID)
	for _, f := range []struct{ name, v string }{{SettingAPIToken, c.apiToken}, {SettingPersonalAccessToken, c.pat}} {
		if strings.ContainsFunc(f.v, unicode.IsSpace) || strings.ContainsFunc(f.v, unicode.IsControl) || !utf8.ValidString(f.v) {
			errs = append(errs, fmt.Errorf("setting %s contains spaces or control characters; paste the token exactly as the wiki showed it", key(f.name)))
		}
	}
	if c.email != "" && (strings.Count(c.email, "@") != 1 || strings.ContainsAny(c.email, ": \t\r\n") || strings.HasPrefix(c.email, "@") || strings.HasSuffix(c.email, "@")) {
		errs = append(errs, fmt.Errorf("setting %s must be the e-mail address of the Atlassian account, such as jane@example.org", key(SettingEmail)))
	}
	if c.cloudID != "" && !cloudIDPattern().MatchString(c.cloudID) {
		errs = append(errs, fmt.Errorf("setting %s must be the site's cloud ID, a UUID such as 0f3c2a4e-1b2d-4c5e-8f90-123456789abc (https://<site>.atlassian.net/_edge/tenant_info shows it)", key(SettingCloudID)))
	}
	if v := get(SettingAPIBaseURL); v != "" {
		if u, err := ParseBaseURL(v); err != nil {
			errs = append(errs, fmt.Errorf("setting %s is not usable: %w", key(SettingAPIBaseURL), err))
		} else {
			c.apiBase, c.apiSetting = u, key(SettingAPIBaseURL)
		}
	}
	if v := get(SettingDefaultSpaceKey); v != "" {
		if utf8.RuneCountInString(v) > maxSpaceKeyChars || strings.ContainsFunc(v, unicode.IsControl) {
			errs = append(errs, fmt.Errorf("setting %s must be one space key of at most %d characters without control characters, such as OPS or ~jdoe", key(SettingDefaultSpaceKey), maxSpaceKeyChars))
		} else {
			c.space = v
		}
	}
	if n, err := parseNumber(get(SettingTimeoutSeconds), SettingTimeoutSeconds, 1, DefaultTimeoutSeconds, MaxTimeoutSeconds); err != nil {
		errs = append(errs, err)
	} else {
		c.timeout = time.Duration(n) * time.Second
	}
	if n, err := parseNumber(get(SettingMaxContentCharacters), SettingMaxContentCharacters, 1000, DefaultMaxContentCharacters, MaxMaxContentCharacters); err != nil {
		errs = append(errs, err)
	} else {
		c.maxChars = n
	}
	if n, err := parseNumber(get(SettingPageBodies), SettingPageBodies, 0, DefaultPageBodies, MaxPageBodies); err != nil {
		errs = append(errs, err)
	} else {
		c.bodies = n
	}
	switch get(SettingUseOsSignIn) {
	case "", OsSignInOn:
	case OsSignInOff:
		c.osSignIn = false
	default:
		errs = append(errs, fmt.Errorf("setting %s must be %s or %s (exactly, in capitals)", key(SettingUseOsSignIn), OsSignInOn, OsSignInOff))
	}
	errs = append(errs, c.checkMode()...)
	return c, errors.Join(errs...)
}

// checkMode checks the settings that depend on the mode and the site.
func (c *config) checkMode() []error {
	var errs []error
	cloud := c.base != nil && isCloudSite(c.base)
	if c.mode == ModeSearchPage {
		if cloud {
			errs = append(errs, fmt.Errorf("setting %s is %s, but Confluence Cloud has no search page to read: set it to %s and give %s and %s",
				key(SettingMode), ModeSearchPage, ModeREST, key(SettingEmail), key(SettingAPIToken)))
		}
		for _, f := range []struct{ name, v string }{{SettingAPIToken, c.apiToken}, {SettingPersonalAccessToken, c.pat}, {SettingEmail, c.email}, {SettingCloudID, c.cloudID}} {
			if f.v != "" {
				errs = append(errs, fmt.Errorf("setting %s is set, but %s is %s, which never uses it: set %s to %s, or clear %s",
					key(f.name), key(SettingMode), ModeSearchPage, key(SettingMode), ModeREST, key(f.name)))
			}
		}
		if c.apiBase != nil {
			errs = append(errs, fmt.Errorf("setting %s is set, but %s is %s, which never uses it: set %s to %s, or clear %s",
				key(SettingAPIBaseURL), key(SettingMode), ModeSearchPage, key(SettingMode), ModeREST, key(SettingAPIBaseURL)))
		}
		return errs
	}
	if cloud && c.base.Path != "/wiki/" {
		errs = append(errs, fmt.Errorf("setting %s must end in /wiki/ on Confluence Cloud, such as https://%s/wiki/", key(SettingBaseURL), c.base.Host))
	}
	basic := c.email != "" || c.apiToken != ""
	switch {
	case basic && c.pat != "":
		errs = append(errs, fmt.Errorf("set either %s with %s (Confluence Cloud) or %s (Data Center), not both", key(SettingEmail), key(SettingAPIToken), key(SettingPersonalAccessToken)))
	case c.email != "" && c.apiToken == "":
		errs = append(errs, fmt.Errorf("setting %s is missing: with %s set, the REST API needs the account's API token", key(SettingAPIToken), key(SettingEmail)))
	case c.apiToken != "" && c.email == "":
		errs = append(errs, fmt.Errorf("setting %s is missing: an API token is sent together with the e-mail address of its Atlassian account", key(SettingEmail)))
	case !basic && c.pat == "":
		errs = append(errs, fmt.Errorf("%s %s needs a credential: %s with %s (Confluence Cloud), or %s (Data Center 7.9 or later)",
			key(SettingMode), ModeREST, key(SettingEmail), key(SettingAPIToken), key(SettingPersonalAccessToken)))
	case cloud && c.pat != "":
		errs = append(errs, fmt.Errorf("setting %s is for Data Center; Confluence Cloud takes %s with %s", key(SettingPersonalAccessToken), key(SettingEmail), key(SettingAPIToken)))
	}
	if c.cloudID != "" && c.pat != "" {
		errs = append(errs, fmt.Errorf("setting %s is for scoped API tokens of Confluence Cloud, which go with %s and %s, not with %s",
			key(SettingCloudID), key(SettingEmail), key(SettingAPIToken), key(SettingPersonalAccessToken)))
	}
	switch {
	case c.apiBase != nil:
	case c.cloudID != "":
		c.apiBase, _ = url.Parse(scopedAPIHost + strings.ToLower(c.cloudID) + "/wiki/")
		c.apiSetting = key(SettingCloudID)
	default:
		c.apiBase, c.apiSetting = c.base, key(SettingBaseURL)
	}
	return errs
}

// authorization is the Authorization header of a REST request: Basic with
// the e-mail and API token (Cloud, classic or scoped), or Bearer with the
// personal access token (Data Center). Never log it.
func (c config) authorization() string {
	if c.pat != "" {
		return "Bearer " + c.pat
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.email+":"+c.apiToken))
}

// credentialSetting names the setting holding the credential in use.
func (c config) credentialSetting() string {
	if c.pat != "" {
		return key(SettingPersonalAccessToken)
	}
	return key(SettingEmail) + " and " + key(SettingAPIToken)
}

// parseNumber reads a whole number from min to max; blank gives def.
func parseNumber(v, name string, min, def, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return def, fmt.Errorf("setting %s must be a whole number from %d to %d (default %d)", key(name), min, max, def)
	}
	return n, nil
}
