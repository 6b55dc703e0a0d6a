package webpage

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/stewardhq/steward/tool"
)

// Setting names, shared by the settings schema and the code reading them.
const (
	SettingTimeoutSeconds       = "timeoutSeconds"
	SettingMaxContentCharacters = "maxContentCharacters"
	SettingAllowedPrivateHosts  = "allowedPrivateHosts"
	SettingFreeAddressChoice    = "freeAddressChoice"
	SettingUseOsSignIn          = "useOsSignIn"
)

// Defaults and maximums of the numeric settings.
const (
	DefaultTimeoutSeconds       = 60
	MaxTimeoutSeconds           = 240
	DefaultMaxContentCharacters = 30000
	MaxMaxContentCharacters     = 100000
)

// The values of the free address choice.
const (
	FreeChoiceOff = "OFF"
	FreeChoiceOn  = "ON"
)

// The values of the operating-system sign-in setting.
const (
	OsSignInOff = "OFF"
	OsSignInOn  = "ON"
)

// config is the parsed settings of one call or one validation.
type config struct {
	timeout    time.Duration
	maxChars   int
	allowed    []hostPattern
	freeChoice bool
	osSignIn   bool
}

// hostPattern is one entry of the private-host allowlist.
type hostPattern struct {
	host string
	// subdomains is set for "*.host": it matches every subdomain of host,
	// never host itself.
	subdomains bool
}

// matches reports whether the lower-case host (as the web package hands
// it over: no trailing dot, IP literals as their text) is covered.
func (p hostPattern) matches(host string) bool {
	if p.subdomains {
		return strings.HasSuffix(host, "."+p.host)
	}
	return host == p.host
}

// parseConfig reads the settings. Every problem is collected; a setting
// with a problem takes its default, so that a call can still decide safely
// (an unreadable allowlist allows nothing, an unreadable choice is OFF).
func parseConfig(s tool.Settings) (config, error) {
	var errs []error
	c := config{timeout: DefaultTimeoutSeconds * time.Second, maxChars: DefaultMaxContentCharacters}
	if n, err := parseNumber(s, SettingTimeoutSeconds, DefaultTimeoutSeconds, MaxTimeoutSeconds); err != nil {
		errs = append(errs, err)
	} else {
		c.timeout = time.Duration(n) * time.Second
	}
	if n, err := parseNumber(s, SettingMaxContentCharacters, DefaultMaxContentCharacters, MaxMaxContentCharacters); err != nil {
		errs = append(errs, err)
	} else {
		c.maxChars = n
	}
	if hosts, err := parseAllowedHosts(s.Get(SettingAllowedPrivateHosts)); err != nil {
		errs = append(errs, err)
	} else {
		c.allowed = hosts
	}
	switch v := s.Get(SettingFreeAddressChoice); strings.TrimSpace(v) {
	case "", FreeChoiceOff:
	case FreeChoiceOn:
		c.freeChoice = true
	default:
		errs = append(errs, fmt.Errorf("setting %s must be %s or %s (exactly, in capitals); it is read as %s until corrected", SettingFreeAddressChoice, FreeChoiceOff, FreeChoiceOn, FreeChoiceOff))
	}
	switch v := s.Get(SettingUseOsSignIn); strings.TrimSpace(v) {
	case "", OsSignInOff:
	case OsSignInOn:
		c.osSignIn = true
	default:
		errs = append(errs, fmt.Errorf("setting %s must be %s or %s (exactly, in capitals); it is read as %s until corrected", SettingUseOsSignIn, OsSignInOff, OsSignInOn, OsSignInOff))
	}
	return c, errors.Join(errs...)
}

// parseNumber reads a positive whole number up to max; blank gives def.
func parseNumber(s tool.Settings, name string, def, max int) (int, error) {
	v := strings.TrimSpace(s.Get(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > max {
		return def, fmt.Errorf("setting %s must be a whole number from 1 to %d (default %d)", name, max, def)
	}
	return n, nil
}

// parseAllowedHosts reads the allowlist: entries separated by line breaks,
// commas or semicolons, each a host name, an IP address, or "*." and a host
// name for its subdomains. Entries are trimmed, lower-cased and lose a
// trailing dot. An address with a scheme or a path is refused, because the
// list names hosts, not pages.
func parseAllowedHosts(v string) ([]hostPattern, error) {
	var out []hostPattern
	var errs []error
	for i, entry := range strings.FieldsFunc(v, func(r rune) bool { return r == '\r' || r == '\n' || r == ',' || r == ';' }) {
		e := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(entry), "."))
		if e == "" {
			continue
		}
		p, err := parseHostPattern(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("setting %s, entry %d: %w", SettingAllowedPrivateHosts, i+1, err))
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

func parseHostPattern(e string) (hostPattern, error) {
	if strings.Contains(e, "://") || strings.Contains(e, "/") {
		return hostPattern{}, errors.New("write a host name such as intranet.example.org, not an address with a scheme or a path")
	}
	p := hostPattern{host: e}
	if rest, ok := strings.CutPrefix(e, "*."); ok {
		p = hostPattern{host: rest, subdomains: true}
	}
	if strings.HasPrefix(p.host, "[") && strings.HasSuffix(p.host, "]") {
		p.host = p.host[1 : len(p.host)-1]
	}
	if ip, err := netip.ParseAddr(p.host); err == nil {
		if p.subdomains {
			return hostPattern{}, errors.New("\"*.\" only goes before a host name, not before an IP address")
		}
		p.host = ip.Unmap().String()
		return p, nil
	}
	ascii, err := idna.Lookup.ToASCII(p.host)
	if err != nil || !validHostName(ascii) {
		return hostPattern{}, errors.New("not a valid host name or IP address; use letters, digits, hyphens and dots, optionally starting with \"*.\" for the subdomains of a host")
	}
	p.host = ascii
	return p, nil
}

// validHostName checks the syntax of an ASCII host name: dot-separated
// labels of 1 to 63 letters, digits and hyphens, not starting or ending with
// a hyphen, 253 characters at most.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// isAllowed reports whether the private host is on the allowlist.
func (c config) isAllowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		host = ip.Unmap().String()
	}
	for _, p := range c.allowed {
		if p.matches(host) {
			return true
		}
	}
	return false
}
