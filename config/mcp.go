package config

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stewardhq/steward/credhttp"
	"github.com/stewardhq/steward/policy"
)

// MCP server transports.
const (
	MCPStdio = "stdio"
	MCPHTTP  = "http"
	MCPSSE   = "sse"
)

// Bounds and defaults of an MCP server's limits.
const (
	DefaultMCPTimeoutSeconds        = 60
	MaxMCPTimeoutSeconds            = 3600
	DefaultMCPStartupTimeoutSeconds = 30
	MaxMCPStartupTimeoutSeconds     = 600
	DefaultMCPMaxResultChars        = 30000
	MaxMCPMaxResultChars            = 100000
	// MaxMCPServerIDLength keeps the tool names built from a server's ID
	// (mcp__<id>__<tool>) within the 64 characters a function name may
	// have, with room for the tool.
	MaxMCPServerIDLength = 24
)

// MCPServerConfig is one MCP server whose tools join the registry: an entry
// of CONFIG["MCP_SERVERS"] of a plugin, or one of the user's settings. It is
// addressed by ID; an organization's server cannot be replaced by a local
// plugin or by the user.
type MCPServerConfig struct {
	// ID is lower-case letters and digits in words joined by single
	// underscores, e.g. "docs" or "team_wiki".
	ID   string
	Name string
	// Type is MCPStdio (Command), MCPHTTP (streamable HTTP at URL) or MCPSSE.
	Type    string
	Command string
	Args    []string
	// Env and Headers hold the values in plain text. Every value counts as
	// a secret: it is never logged, shown or put into an error. Values may
	// hold ${VAR} or ${VAR:-default}, expanded from the environment when
	// Steward connects.
	Env     map[string]string
	URL     string
	Headers map[string]string
	// OutboundData is where the server may send the arguments of its tools;
	// MODEL_CHOSEN_ADDRESSES, the most open kind, unless declared.
	OutboundData policy.OutboundData
	// MinimumConfidence is the lowest provider confidence its tools are
	// offered to; NONE allows every provider.
	MinimumConfidence policy.Confidence
	// UntrustedContent is true unless declared otherwise: results and tool
	// descriptions then pass the prompt-injection filter.
	UntrustedContent bool
	// Outbound is the restriction a chat keeps once content of the server
	// reached the model; unset demands nothing.
	Outbound policy.OutboundRequirement
	// ResultConfidence is the provider confidence later messages need once
	// content of the server reached the model.
	ResultConfidence policy.Confidence
	// DataSecurity is SELF_HOSTED when its content may only go to
	// self-hosted providers.
	DataSecurity policy.DataSecurity
	// EnabledTools, when not empty, lists the only tools taken; DisabledTools
	// are left out. Both name the server's own tool names.
	EnabledTools  []string
	DisabledTools []string
	// TimeoutSeconds bounds one call, StartupTimeoutSeconds connecting and
	// listing the tools.
	TimeoutSeconds        int
	StartupTimeoutSeconds int
	// MaxResultChars is how much of one result reaches the model.
	MaxResultChars int
	Disabled       bool
	// Org is true for a server of an organization plugin.
	Org    bool
	Plugin string
}

var mcpServerID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`) })

// ValidMCPServerID reports why id cannot name an MCP server, or "".
func ValidMCPServerID(id string) string {
	switch {
	case id == "":
		return "the ID is missing"
	case len(id) > MaxMCPServerIDLength:
		return fmt.Sprintf("the ID %q is longer than %d characters", id, MaxMCPServerIDLength)
	case !mcpServerID().MatchString(id):
		return fmt.Sprintf("the ID %q must be lower-case letters and digits, starting with a letter, in words joined by single underscores (e.g. \"team_wiki\")", id)
	}
	return ""
}

// MCPServerIDFrom turns a name such as "My-Server.v2" into a valid server
// ID ("my_server_v2"), or "" when nothing usable is left.
func MCPServerIDFrom(name string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
		default:
			under = true
		}
	}
	id := strings.TrimLeft(b.String(), "0123456789_")
	if len(id) > MaxMCPServerIDLength {
		id = strings.TrimRight(id[:MaxMCPServerIDLength], "_")
	}
	if ValidMCPServerID(id) != "" {
		return ""
	}
	return id
}

// Validate checks a server's configuration and fills in the defaults of
// its limits. The error names what is wrong and what would be right; it
// never holds a value of Env or Headers.
func (c *MCPServerConfig) Validate() error {
	if msg := ValidMCPServerID(c.ID); msg != "" {
		return fmt.Errorf("MCP server: %s", msg)
	}
	if strings.TrimSpace(c.Name) == "" {
		c.Name = c.ID
	}
	if c.Type == "" {
		c.Type = MCPStdio
		if c.URL != "" && c.Command == "" {
			c.Type = MCPHTTP
		}
	}
	switch c.Type {
	case MCPStdio:
		if strings.TrimSpace(c.Command) == "" {
			return fmt.Errorf("MCP server %s: a stdio server needs a command, e.g. \"npx\" with args [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv/docs\"]", c.ID)
		}
		if c.URL != "" || len(c.Headers) > 0 {
			return fmt.Errorf("MCP server %s: a stdio server takes a command, not a URL or headers; set the type to http for a server at a URL", c.ID)
		}
	case MCPHTTP, MCPSSE:
		if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 {
			return fmt.Errorf("MCP server %s: an %s server takes a URL and headers, not a command, arguments or environment", c.ID, c.Type)
		}
		if err := checkMCPURL(c.URL); err != nil {
			return fmt.Errorf("MCP server %s: %w", c.ID, err)
		}
	default:
		return fmt.Errorf("MCP server %s: type %q is unknown: use stdio, http (streamable HTTP) or sse", c.ID, c.Type)
	}
	for name := range c.Env {
		if !envName().MatchString(name) {
			return fmt.Errorf("MCP server %s: environment variable name %q must be letters, digits and underscores, not starting with a digit", c.ID, name)
		}
	}
	for name := range c.Headers {
		if !headerName().MatchString(name) {
			return fmt.Errorf("MCP server %s: header name %q is not a valid HTTP header name", c.ID, name)
		}
	}
	if !c.MinimumConfidence.Valid() {
		return fmt.Errorf("MCP server %s: minimum confidence %d is no defined level", c.ID, int(c.MinimumConfidence))
	}
	var err error
	if c.TimeoutSeconds, err = boundedInt("timeout", c.TimeoutSeconds, DefaultMCPTimeoutSeconds, MaxMCPTimeoutSeconds, "seconds"); err != nil {
		return fmt.Errorf("MCP server %s: %w", c.ID, err)
	}
	if c.StartupTimeoutSeconds, err = boundedInt("startup timeout", c.StartupTimeoutSeconds, DefaultMCPStartupTimeoutSeconds, MaxMCPStartupTimeoutSeconds, "seconds"); err != nil {
		return fmt.Errorf("MCP server %s: %w", c.ID, err)
	}
	if c.MaxResultChars, err = boundedInt("max result chars", c.MaxResultChars, DefaultMCPMaxResultChars, MaxMCPMaxResultChars, "characters"); err != nil {
		return fmt.Errorf("MCP server %s: %w", c.ID, err)
	}
	return nil
}

var (
	envName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	headerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })
)

func boundedInt(what string, v, def, max int, unit string) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > max:
		return 0, fmt.Errorf("%s %d must be 1 to %d %s (leave it out for %d)", what, v, max, unit, def)
	}
	return v, nil
}

// checkMCPURL accepts an http or https URL without user information. The
// message never repeats the URL, whose query may hold a token.
func checkMCPURL(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("an http server needs a URL such as \"https://mcp.example.org/mcp\"")
	}
	if strings.Contains(raw, "${") {
		// Expanded when Steward connects; checked again then.
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("the URL must be an http or https address such as \"https://mcp.example.org/mcp\"")
	}
	if u.User != nil {
		return fmt.Errorf("the URL must not carry a user name or password; send credentials in a header such as Authorization")
	}
	return nil
}

// ParseOutboundData reads an outbound data kind by name.
func ParseOutboundData(s string) (policy.OutboundData, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "MODEL_CHOSEN_ADDRESSES":
		return policy.ModelChosenAddresses, nil
	case "THIRD_PARTY_QUERIES":
		return policy.ThirdPartyQueries, nil
	case "CONFIGURED_SERVICE":
		return policy.ConfiguredService, nil
	case "NONE":
		return policy.NoOutbound, nil
	}
	return policy.ModelChosenAddresses, fmt.Errorf("unknown outbound data kind %q: use NONE, CONFIGURED_SERVICE, THIRD_PARTY_QUERIES or MODEL_CHOSEN_ADDRESSES", s)
}

// looksSecretName reports whether a header or variable name suggests a
// credential, which an organization plugin must then give encrypted.
func looksSecretName(name string) bool {
	if credhttp.IsSecretHeader(name) {
		return true
	}
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "token", "key", "secret", "password", "passwd", "cookie", "credential", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// parseMCPServers reads CONFIG["MCP_SERVERS"] of a plugin. A server that
// cannot be used is reported and left out; the others stay.
func parseMCPServers(v any, org bool, plugin string, decrypt func(key, v string) (string, error), problem func(key, format string, a ...any)) []MCPServerConfig {
	var out []MCPServerConfig
	for i, e := range listOf(v) {
		m, ok := e.(map[string]any)
		if !ok {
			problem("MCP_SERVERS", "MCP_SERVERS[%d] must be a table", i+1)
			continue
		}
		c, err := readMCPServer(m, org, plugin, decrypt)
		if err != nil {
			problem(firstNonEmpty(str(m, "Id"), "MCP_SERVERS"), "MCP_SERVERS[%d]: %v; the server is left out", i+1, err)
			continue
		}
		if slices.ContainsFunc(out, func(o MCPServerConfig) bool { return o.ID == c.ID }) {
			problem(c.ID, "MCP_SERVERS[%d]: the ID %q is used twice in this plugin; the first stays", i+1, c.ID)
			continue
		}
		out = append(out, c)
	}
	return out
}

var mcpServerKeys = []string{"Id", "Name", "Type", "Command", "Args", "Env", "Url", "Headers", "OutboundData",
	"MinimumProviderConfidence", "UntrustedContent", "OutboundDataRestriction", "RequiredProviderConfidence",
	"DataSecurity", "EnabledTools", "DisabledTools", "TimeoutSeconds", "StartupTimeoutSeconds", "MaxResultChars", "Disabled"}

func readMCPServer(m map[string]any, org bool, plugin string, decrypt func(key, v string) (string, error)) (MCPServerConfig, error) {
	var unknown []string
	for k := range m {
		if !slices.Contains(mcpServerKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return MCPServerConfig{}, fmt.Errorf("unknown field %s; known fields are %s", strings.Join(unknown, ", "), strings.Join(mcpServerKeys, ", "))
	}
	c := MCPServerConfig{ID: str(m, "Id"), Name: str(m, "Name"), Type: strings.ToLower(str(m, "Type")), Command: str(m, "Command"),
		URL: str(m, "Url"), UntrustedContent: true, Org: org, Plugin: plugin}
	if c.Type == "streamable-http" || c.Type == "streamable_http" {
		c.Type = MCPHTTP
	}
	var err error
	if c.Args, err = stringList(m["Args"], "Args"); err != nil {
		return c, err
	}
	if c.EnabledTools, err = stringList(m["EnabledTools"], "EnabledTools"); err != nil {
		return c, err
	}
	if c.DisabledTools, err = stringList(m["DisabledTools"], "DisabledTools"); err != nil {
		return c, err
	}
	secretMap := func(key string) (map[string]string, error) {
		raw, present := m[key]
		if !present {
			return nil, nil
		}
		t, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s must be a table of names and values such as { [\"Authorization\"] = \"ENC:v1:...\" }", key)
		}
		out := map[string]string{}
		for name, val := range t {
			s, ok := val.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%q] must be a string", key, name)
			}
			if IsEncrypted(s) {
				plain, err := decrypt(key, s)
				if err != nil {
					return nil, fmt.Errorf("%s[%q] could not be decrypted: %w", key, name, err)
				}
				s = plain
			} else if org && looksSecretName(name) && s != "" && !strings.HasPrefix(s, "${") {
				return nil, fmt.Errorf("%s[%q] looks like a credential and must be encrypted (ENC:v1:...), not plain text", key, name)
			}
			out[name] = s
		}
		return out, nil
	}
	if c.Env, err = secretMap("Env"); err != nil {
		return c, err
	}
	if c.Headers, err = secretMap("Headers"); err != nil {
		return c, err
	}
	if c.OutboundData, err = ParseOutboundData(str(m, "OutboundData")); err != nil {
		return c, fmt.Errorf("OutboundData: %w", err)
	}
	if s := str(m, "MinimumProviderConfidence"); s != "" {
		if c.MinimumConfidence, err = policy.ParseConfidence(s); err != nil {
			return c, fmt.Errorf("MinimumProviderConfidence: %w", err)
		}
	}
	if s := str(m, "RequiredProviderConfidence"); s != "" {
		if c.ResultConfidence, err = policy.ParseConfidence(s); err != nil {
			return c, fmt.Errorf("RequiredProviderConfidence: %w", err)
		}
	}
	if s := str(m, "OutboundDataRestriction"); s != "" {
		r, err := policy.ParseRestriction(s)
		if err != nil {
			return c, fmt.Errorf("OutboundDataRestriction: %w", err)
		}
		c.Outbound = policy.OutboundRequirement{Set: true, Restriction: r}
	}
	if s := str(m, "DataSecurity"); s != "" {
		if c.DataSecurity, err = policy.ParseDataSecurity(s); err != nil {
			return c, fmt.Errorf("DataSecurity: %w", err)
		}
	}
	for key, dst := range map[string]*bool{"UntrustedContent": &c.UntrustedContent, "Disabled": &c.Disabled} {
		if v, ok := m[key]; ok {
			b, isBool := v.(bool)
			if !isBool {
				return c, fmt.Errorf("%s must be true or false, but is %s", key, kindName(v))
			}
			*dst = b
		}
	}
	for key, dst := range map[string]*int{"TimeoutSeconds": &c.TimeoutSeconds, "StartupTimeoutSeconds": &c.StartupTimeoutSeconds, "MaxResultChars": &c.MaxResultChars} {
		if v, ok := m[key]; ok {
			f, isNum := v.(float64)
			if !isNum || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
				return c, fmt.Errorf("%s must be a whole positive number, but is %v", key, v)
			}
			*dst = int(f)
		}
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

func stringList(v any, key string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	var out []string
	for _, e := range listOf(v) {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s must be a list of strings such as { \"a\", \"b\" }", key)
		}
		out = append(out, s)
	}
	if _, isList := v.([]any); !isList {
		if t, isTable := v.(map[string]any); !isTable || len(t) != 0 {
			return nil, fmt.Errorf("%s must be a list of strings such as { \"a\", \"b\" }", key)
		}
	}
	return out, nil
}

// UserMCP is the user's MCP part of settings.json.
type UserMCP struct {
	// ClientConfidence is the confidence `steward mcp serve` gives the
	// connecting MCP client; empty means UNKNOWN. An organization's locked
	// DataMCP.ClientConfidence wins.
	ClientConfidence string          `json:"client_confidence,omitempty"`
	Servers          []UserMCPServer `json:"servers,omitempty"`
}

// UserMCPServer is an MCP server the user added. The values of Env and
// Headers are secrets and live in the secret store under the service
// "mcp::<ID>" (keys "env:<NAME>" and "header:<Name>"); only their names
// are written here.
type UserMCPServer struct {
	ID      string   `json:"id"`
	Name    string   `json:"name,omitempty"`
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Env     []string `json:"env,omitempty"`
	URL     string   `json:"url,omitempty"`
	Headers []string `json:"headers,omitempty"`
	// OutboundData defaults to MODEL_CHOSEN_ADDRESSES.
	OutboundData string `json:"outbound_data,omitempty"`
	// MinimumConfidence defaults to NONE.
	MinimumConfidence string `json:"minimum_confidence,omitempty"`
	// UntrustedContent defaults to true.
	UntrustedContent *bool `json:"untrusted_content,omitempty"`
	// OutboundDataRestriction is kept by the chat once the server's content
	// reached the model; empty demands nothing.
	OutboundDataRestriction string   `json:"outbound_data_restriction,omitempty"`
	ResultConfidence        string   `json:"result_confidence,omitempty"`
	DataSecurity            string   `json:"data_security,omitempty"`
	EnabledTools            []string `json:"enabled_tools,omitempty"`
	DisabledTools           []string `json:"disabled_tools,omitempty"`
	TimeoutSeconds          int      `json:"timeout_seconds,omitempty"`
	StartupTimeoutSeconds   int      `json:"startup_timeout_seconds,omitempty"`
	MaxResultChars          int      `json:"max_result_chars,omitempty"`
	Disabled                bool     `json:"disabled,omitempty"`
}

// MCPSecretService is the secret store service of a user's MCP server.
func MCPSecretService(id string) string { return "mcp::" + id }

// MCPEnvKey and MCPHeaderKey name a value in the secret store.
func MCPEnvKey(name string) string { return "env:" + name }

// MCPHeaderKey names a header value in the secret store.
func MCPHeaderKey(name string) string { return "header:" + name }

// Config turns a user's server into a configuration, reading the values of
// its environment and headers with secret. A missing value is an error
// naming the variable or header, never a value.
func (u UserMCPServer) Config(secret func(service, key string) (string, bool, error)) (MCPServerConfig, error) {
	c := MCPServerConfig{ID: u.ID, Name: u.Name, Type: strings.ToLower(u.Type), Command: u.Command, Args: u.Args, URL: u.URL,
		EnabledTools: u.EnabledTools, DisabledTools: u.DisabledTools, TimeoutSeconds: u.TimeoutSeconds,
		StartupTimeoutSeconds: u.StartupTimeoutSeconds, MaxResultChars: u.MaxResultChars, Disabled: u.Disabled, UntrustedContent: true}
	if u.UntrustedContent != nil {
		c.UntrustedContent = *u.UntrustedContent
	}
	var err error
	if c.OutboundData, err = ParseOutboundData(u.OutboundData); err != nil {
		return c, fmt.Errorf("MCP server %s: outbound_data: %w", u.ID, err)
	}
	if u.MinimumConfidence != "" {
		if c.MinimumConfidence, err = policy.ParseConfidence(u.MinimumConfidence); err != nil {
			return c, fmt.Errorf("MCP server %s: minimum_confidence: %w", u.ID, err)
		}
	}
	if u.ResultConfidence != "" {
		if c.ResultConfidence, err = policy.ParseConfidence(u.ResultConfidence); err != nil {
			return c, fmt.Errorf("MCP server %s: result_confidence: %w", u.ID, err)
		}
	}
	if u.OutboundDataRestriction != "" {
		r, err := policy.ParseRestriction(u.OutboundDataRestriction)
		if err != nil {
			return c, fmt.Errorf("MCP server %s: outbound_data_restriction: %w", u.ID, err)
		}
		c.Outbound = policy.OutboundRequirement{Set: true, Restriction: r}
	}
	if u.DataSecurity != "" {
		if c.DataSecurity, err = policy.ParseDataSecurity(u.DataSecurity); err != nil {
			return c, fmt.Errorf("MCP server %s: data_security: %w", u.ID, err)
		}
	}
	read := func(names []string, key func(string) string, what string) (map[string]string, error) {
		if len(names) == 0 {
			return nil, nil
		}
		out := map[string]string{}
		for _, n := range names {
			if secret == nil {
				return nil, fmt.Errorf("MCP server %s: no secret store to read %s %s from", u.ID, what, n)
			}
			v, ok, err := secret(MCPSecretService(u.ID), key(n))
			if err != nil {
				return nil, fmt.Errorf("MCP server %s: reading %s %s from the secret store: %w", u.ID, what, n, err)
			}
			if !ok {
				return nil, fmt.Errorf("MCP server %s: the value of %s %s is not in the secret store: add the server again (steward mcp add or steward mcp import)", u.ID, what, n)
			}
			out[n] = v
		}
		return out, nil
	}
	if c.Env, err = read(u.Env, MCPEnvKey, "environment variable"); err != nil {
		return c, err
	}
	if c.Headers, err = read(u.Headers, MCPHeaderKey, "header"); err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// checkMCPClientConfidence checks DataMCP.ClientConfidence.
func checkMCPClientConfidence(v string) error {
	_, err := policy.ParseConfidence(v)
	return err
}

// MCPClientConfidence is the confidence `steward mcp serve` gives a
// connecting MCP client, and whether the organization locked it: the
// organization's locked value, else the user's, else the organization's
// editable default, else UNKNOWN.
func (e *Effective) MCPClientConfidence(user *UserSettings) (c policy.Confidence, locked bool, plugin string) {
	m, managed := e.Settings["DataMCP.ClientConfidence"]
	if managed && m.Locked {
		if c, err := policy.ParseConfidence(fmt.Sprint(m.Value)); err == nil {
			return c, true, m.Plugin
		}
		// An unreadable locked value never lets a client through wider.
		return policy.Unknown, true, m.Plugin
	}
	if user != nil && user.MCP != nil && user.MCP.ClientConfidence != "" {
		if c, err := policy.ParseConfidence(user.MCP.ClientConfidence); err == nil {
			return c, false, ""
		}
	}
	if managed {
		if c, err := policy.ParseConfidence(fmt.Sprint(m.Value)); err == nil {
			return c, false, ""
		}
	}
	return policy.Unknown, false, ""
}
