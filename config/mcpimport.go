package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// ImportedMCPServer is one server read from another client's
// configuration. Env and Headers hold the values, which the caller stores
// as secrets; Server lists only their names.
type ImportedMCPServer struct {
	// From names the format: "claude" (Claude Code, .mcp.json) or "crush".
	From    string
	Name    string
	Server  UserMCPServer
	Env     map[string]string
	Headers map[string]string
	// Notes are what was not taken over, e.g. an OAuth setting.
	Notes []string
}

// MCPImportError is a server of an imported file that could not be taken.
type MCPImportError struct {
	Name   string
	Reason string
}

func (e *MCPImportError) Error() string {
	return fmt.Sprintf("MCP server %q was not imported: %s", e.Name, e.Reason)
}

// importedEntry is the union of the fields Claude Code and Crush write for
// one server.
type importedEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// Crush only.
	Disabled      bool     `json:"disabled"`
	DisabledTools []string `json:"disabled_tools"`
	EnabledTools  []string `json:"enabled_tools"`
	Timeout       *int     `json:"timeout"`
	OAuth         any      `json:"oauth"`
}

// ParseMCPImport reads the MCP servers of a Claude Code file
// ({"mcpServers": {...}}, as in .mcp.json and ~/.claude.json) or a Crush
// file ({"mcp": {...}}, crush.json). Claude Code's ${VAR} and
// ${VAR:-default} are kept and expanded when Steward connects; Crush's $VAR
// becomes ${VAR}. A server whose values run commands ($(...)) or that
// cannot be read is returned as an error and the others are still taken.
// The result is ordered by name.
func ParseMCPImport(data []byte) ([]ImportedMCPServer, []error, error) {
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("the file is not a JSON object (%v): expected {\"mcpServers\": {...}} (Claude Code) or {\"mcp\": {...}} (Crush)", err)
	}
	from, raw := "", json.RawMessage(nil)
	switch {
	case doc["mcpServers"] != nil:
		from, raw = "claude", doc["mcpServers"]
	case doc["mcp"] != nil:
		from, raw = "crush", doc["mcp"]
	default:
		return nil, nil, fmt.Errorf("the file has no MCP servers: expected a top-level \"mcpServers\" (Claude Code, .mcp.json) or \"mcp\" (Crush) object")
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, nil, fmt.Errorf("%q must be an object of servers by name: %v", map[string]string{"claude": "mcpServers", "crush": "mcp"}[from], err)
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []ImportedMCPServer
	var errs []error
	ids := map[string]string{}
	for _, name := range names {
		s, err := importEntry(from, name, entries[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := ids[s.Server.ID]; dup {
			errs = append(errs, &MCPImportError{Name: name, Reason: fmt.Sprintf("its ID %q is also the ID of %q; rename one of them", s.Server.ID, prev)})
			continue
		}
		ids[s.Server.ID] = name
		out = append(out, s)
	}
	return out, errs, nil
}

func importEntry(from, name string, raw json.RawMessage) (ImportedMCPServer, error) {
	fail := func(format string, a ...any) (ImportedMCPServer, error) {
		return ImportedMCPServer{}, &MCPImportError{Name: name, Reason: fmt.Sprintf(format, a...)}
	}
	var e importedEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return fail("its entry cannot be read: %v", err)
	}
	id := MCPServerIDFrom(name)
	if id == "" {
		return fail("no server ID can be made of its name; use letters and digits")
	}
	s := ImportedMCPServer{From: from, Name: name, Env: map[string]string{}, Headers: map[string]string{}}
	u := UserMCPServer{ID: id, Name: name, Type: strings.ToLower(e.Type), Command: e.Command, Args: e.Args, URL: e.URL,
		DisabledTools: e.DisabledTools, EnabledTools: e.EnabledTools, Disabled: e.Disabled}
	if u.Type == "streamable-http" {
		u.Type = MCPHTTP
	}
	conv := func(field, v string) (string, error) {
		if from == "crush" {
			return crushToSteward(v)
		}
		if strings.Contains(v, "$(") {
			return "", fmt.Errorf("runs a command")
		}
		return v, nil
	}
	var err error
	if u.Command, err = conv("command", u.Command); err != nil {
		return fail("its command %s; Steward does not run commands from configuration values", err)
	}
	if u.URL, err = conv("url", u.URL); err != nil {
		return fail("its url %s; Steward does not run commands from configuration values", err)
	}
	for i, a := range u.Args {
		if u.Args[i], err = conv("args", a); err != nil {
			return fail("its argument %d %s; Steward does not run commands from configuration values", i+1, err)
		}
	}
	for k, v := range e.Env {
		if s.Env[k], err = conv("env", v); err != nil {
			return fail("its environment variable %s %s; Steward does not run commands from configuration values", k, err)
		}
		u.Env = append(u.Env, k)
	}
	for k, v := range e.Headers {
		if s.Headers[k], err = conv("headers", v); err != nil {
			return fail("its header %s %s; Steward does not run commands from configuration values", k, err)
		}
		u.Headers = append(u.Headers, k)
	}
	sort.Strings(u.Env)
	sort.Strings(u.Headers)
	if e.Timeout != nil {
		if *e.Timeout < 1 || *e.Timeout > MaxMCPTimeoutSeconds {
			return fail("its timeout %d must be 1 to %d seconds", *e.Timeout, MaxMCPTimeoutSeconds)
		}
		u.TimeoutSeconds = *e.Timeout
	}
	if e.OAuth != nil && e.OAuth != false {
		s.Notes = append(s.Notes, "OAuth sign-in is not supported yet; give the token in a header such as Authorization (steward mcp add --header)")
	}
	c := MCPServerConfig{ID: u.ID, Name: u.Name, Type: u.Type, Command: u.Command, Args: u.Args, URL: u.URL,
		Env: s.Env, Headers: s.Headers, TimeoutSeconds: u.TimeoutSeconds}
	if err := c.Validate(); err != nil {
		return fail("%s", strings.TrimPrefix(err.Error(), "MCP server "+u.ID+": "))
	}
	u.Type = c.Type
	s.Server = u
	return s, nil
}

var crushVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`) })

// crushToSteward turns Crush's shell-style $VAR into ${VAR} and refuses
// $(...), which would run a command.
func crushToSteward(v string) (string, error) {
	if strings.Contains(v, "$(") || strings.Contains(v, "`") {
		return "", fmt.Errorf("runs a command")
	}
	// ${VAR} stays; a bare $VAR gets braces.
	var b strings.Builder
	for i := 0; i < len(v); {
		if v[i] == '$' && i+1 < len(v) && v[i+1] == '{' {
			end := strings.IndexByte(v[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("has an unclosed ${")
			}
			b.WriteString(v[i : i+end+1])
			i += end + 1
			continue
		}
		if v[i] == '$' {
			if m := crushVar().FindStringSubmatch(v[i:]); m != nil && strings.HasPrefix(v[i:], m[0]) {
				b.WriteString("${" + m[1] + "}")
				i += len(m[0])
				continue
			}
		}
		b.WriteByte(v[i])
		i++
	}
	return b.String(), nil
}
