package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/config"
	mcpclient "github.com/stewardhq/steward/mcp/client"
	mcpserver "github.com/stewardhq/steward/mcp/server"
	"github.com/stewardhq/steward/policy"
)

// startedApps are the apps of a command that started MCP servers; run
// stops their servers when the command ends.
type startedApps struct {
	mu   sync.Mutex
	apps []*app.App
}

func (s *startedApps) add(a *app.App) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.apps = append(s.apps, a)
	s.mu.Unlock()
}

func (s *startedApps) stop() {
	s.mu.Lock()
	apps := s.apps
	s.apps = nil
	s.mu.Unlock()
	for _, a := range apps {
		a.CloseMCP()
	}
}

// offersTools reports whether a command offers tools to a model, and so
// starts the configured MCP servers: ask, chat and tools.
func offersTools(cmd *cobra.Command) bool {
	if cmd.Parent() == nil || cmd.Parent().Parent() != nil {
		return false
	}
	switch cmd.Name() {
	case "ask", "chat", "tools", "serve":
		return true
	}
	return false
}

// reportMCP tells the user, one line each, what went wrong with MCP
// servers and their tools.
func reportMCP(e env, a *app.App) {
	for _, p := range a.MCPProblems() {
		fmt.Fprintf(e.stderr, "steward: %s\n", p)
	}
}

func newMCPCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve Steward's tools over MCP, and use the tools of MCP servers",
		Long: `The Model Context Protocol in both directions.

steward mcp serve makes Steward an MCP server: Claude Code, Crush or any MCP
client gets Steward's tools under Steward's rules. The client is treated as a
provider of the confidence you or your organization set (UNKNOWN by default),
and every session is a chat whose requirements only tighten.

The other commands manage MCP servers whose tools Steward offers its models:
one collection per server (mcp__<id>), each tool named mcp__<id>__<tool>,
under the same checks as Steward's own tools.`,
		Example: `  steward mcp serve
  steward mcp serve --http 127.0.0.1:8765 --token-file ~/.config/steward/mcp-token
  steward mcp add docs --outbound-data NONE -- npx -y @modelcontextprotocol/server-filesystem /srv/docs
  steward mcp import .mcp.json
  steward mcp list
  steward mcp tools docs
  steward mcp check`,
	}
	cmd.AddCommand(newMCPServeCmd(e), newMCPListCmd(e), newMCPToolsCmd(e), newMCPCheckCmd(e), newMCPAddCmd(e), newMCPRemoveCmd(e), newMCPImportCmd(e))
	return cmd
}

func openAppNoMCP(cmd *cobra.Command, e env) (*app.App, error) {
	// offersTools is false for every mcp command, so openApp starts no
	// server; the commands that need them start them themselves.
	return openApp(cmd, e)
}

func newMCPServeCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [--http ADDRESS]",
		Short: "Serve Steward's tools to an MCP client (stdio, or streamable HTTP on loopback)",
		Long: `Serve Steward's tools over MCP. Without --http the protocol runs on standard
input and output, for a client that starts Steward itself. With --http Steward
listens on a loopback address for streamable HTTP and requires the bearer token
it prints (or keeps in --token-file).

The client counts as a provider whose confidence is --confidence, else your
setting mcp.client_confidence, else UNKNOWN; an organization's locked
DataMCP.ClientConfidence wins. The registry then decides what each session
lists and may run, exactly as for a chat: a session that read a mailbox
restricted to ONLY_CONFIGURED_SERVICES loses web_search, and a session whose
data needs more confidence than the client has is refused every tool.

Tools of configured MCP servers are not served again.`,
		Example: `  steward mcp serve
  steward mcp serve --tools web_search,read_web_page --confidence LOW
  steward mcp serve --http 127.0.0.1:8765 --token-file ~/.config/steward/mcp-token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAppNoMCP(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			conf, from, err := mcpClientConfidence(cmd, a)
			if err != nil {
				return err
			}
			var selected []string
			if cmd.Flags().Changed("tools") {
				s, _ := cmd.Flags().GetString("tools")
				selected = splitList(s)
				if selected == nil {
					selected = []string{}
				}
				for _, id := range selected {
					if !a.Registry.IsKnown(id) {
						return usagef("--tools names %q, which is no tool or collection: see steward tools", id)
					}
				}
			}
			b := mcpserver.New(mcpserver.Options{
				Registry: a.Registry, Selected: selected, Confidence: conf, ConfidenceFrom: from,
				Names:       a.MailboxName,
				FilterError: a.FilterToolError,
				Logger:      a.Logger,
				Version:     app.Version,
				AfterCall: func(string, string) {
					for _, r := range a.TakeFilterReports() {
						if r.Message != "" {
							fmt.Fprintf(e.stderr, "steward: the prompt-injection filter %s\n", r.Message)
						}
						if r.Warning != "" {
							fmt.Fprintf(e.stderr, "steward: %s\n", r.Warning)
						}
					}
				},
			})
			addr, _ := cmd.Flags().GetString("http")
			if addr == "" {
				fmt.Fprintf(e.stderr, "steward: serving MCP on standard input and output; the client counts as confidence %s (%s)\n", conf, from)
				in, _ := e.stdin.(io.ReadCloser)
				if in == nil {
					in = io.NopCloser(e.stdin)
				}
				t := &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{e.stdout}}
				err := b.Serve(cmd.Context(), t)
				if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
					return fmt.Errorf("serving MCP: %w", err)
				}
				return nil
			}
			return serveHTTP(cmd, e, b, addr, conf, from)
		},
	}
	cmd.Flags().String("http", "", "serve streamable HTTP on this loopback address, e.g. 127.0.0.1:8765 (port 0 picks one)")
	cmd.Flags().String("token-file", "", "with --http: read the bearer token from this file, or create it there (mode 0600)")
	cmd.Flags().String("tools", "", "comma-separated tool or collection IDs to serve (default: every selectable one)")
	cmd.Flags().String("confidence", "", "the client's confidence: NONE … HIGH (default: your setting, else UNKNOWN)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpClientConfidence decides the client's confidence: the flag, which may
// not exceed a level the organization locked; the settings; UNKNOWN.
func mcpClientConfidence(cmd *cobra.Command, a *app.App) (policy.Confidence, string, error) {
	conf, locked, plugin := a.MCPClientConfidence()
	from := "the default"
	switch {
	case locked:
		from = fmt.Sprintf("locked by the organization plugin %q", plugin)
	case a.User.MCP != nil && a.User.MCP.ClientConfidence != "":
		from = "your setting mcp.client_confidence"
	}
	if flag, _ := cmd.Flags().GetString("confidence"); flag != "" {
		c, err := policy.ParseConfidence(flag)
		if err != nil {
			return 0, "", usagef("--confidence: %v", err)
		}
		if locked && c > conf {
			return 0, "", fmt.Errorf("--confidence %s is above %s, which the organization plugin %q set for MCP clients", c, conf, plugin)
		}
		conf, from = c, "--confidence"
	}
	if min := a.Org.GlobalMinimum(); !policy.Allows(conf, min) {
		return 0, "", fmt.Errorf("your organization allows only providers with confidence %s or higher, and an MCP client counts as %s (%s): raise it with --confidence if the client's model is one your organization trusts", min, conf, from)
	}
	return conf, from, nil
}

func serveHTTP(cmd *cobra.Command, e env, b *mcpserver.Bridge, addr string, conf policy.Confidence, from string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %q must be host:port, e.g. 127.0.0.1:8765", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usagef("--http %q: Steward serves MCP on a loopback address only (127.0.0.1, ::1 or localhost)", addr)
	}
	token, tokenNote, err := mcpToken(cmd)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", b.Handler(token))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(e.stderr, "steward: serving MCP at %s; the client counts as confidence %s (%s)\n", url, conf, from)
	fmt.Fprintf(e.stderr, "steward: %s\n", tokenNote)
	fmt.Fprintf(e.stderr, "steward: e.g. claude mcp add --transport http steward %s --header \"Authorization: Bearer <token>\"\n", url)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-cmd.Context().Done():
		ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serving MCP at %s: %w", url, err)
	}
}

// mcpToken reads or creates the bearer token. A fresh token is printed
// once, for the user to give their client.
func mcpToken(cmd *cobra.Command) (token, note string, err error) {
	path, _ := cmd.Flags().GetString("token-file")
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
				return "", "", fmt.Errorf("the token file %s is readable by others (mode %v): run chmod 600 on it", path, fi.Mode().Perm())
			}
			t := strings.TrimSpace(string(b))
			if len(t) < 16 {
				return "", "", fmt.Errorf("the token file %s holds fewer than 16 characters: remove it and Steward writes a new token", path)
			}
			return t, "the bearer token is in " + path, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("reading the token file: %w", err)
		}
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(raw)
	if path != "" {
		if err := config.WriteFileAtomic(path, []byte(token+"\n"), 0o600); err != nil {
			return "", "", fmt.Errorf("writing the token file: %w", err)
		}
		return token, "a new bearer token was written to " + path, nil
	}
	return token, "bearer token for this run (use --token-file to keep one): " + token, nil
}

// mcpServerRow is one server of `steward mcp list`.
type mcpServerRow struct {
	ID                string   `json:"id"`
	Name              string   `json:"name"`
	Type              string   `json:"type"`
	Target            string   `json:"target"`
	From              string   `json:"from"`
	Disabled          bool     `json:"disabled,omitempty"`
	OutboundData      string   `json:"outbound_data"`
	MinimumConfidence string   `json:"minimum_confidence"`
	UntrustedContent  bool     `json:"untrusted_content"`
	Restriction       string   `json:"outbound_data_restriction,omitempty"`
	ResultConfidence  string   `json:"result_confidence,omitempty"`
	DataSecurity      string   `json:"data_security,omitempty"`
	Env               []string `json:"env,omitempty"`
	Headers           []string `json:"headers,omitempty"`
	Collection        string   `json:"collection"`
	Selected          bool     `json:"selected"`
}

func serverRow(a *app.App, c config.MCPServerConfig) mcpServerRow {
	r := mcpServerRow{ID: c.ID, Name: c.Name, Type: c.Type, From: "your settings", Disabled: c.Disabled, OutboundData: c.OutboundData.String(),
		MinimumConfidence: c.MinimumConfidence.String(), UntrustedContent: c.UntrustedContent, Collection: mcpclient.CollectionID(c.ID),
		Selected: slices.Contains(a.User.SelectedTools, mcpclient.CollectionID(c.ID))}
	if c.Plugin != "" {
		r.From = "plugin " + c.Plugin
		if c.Org {
			r.From = "organization plugin " + c.Plugin
		}
	}
	if c.Type == config.MCPStdio {
		r.Target = strings.Join(append([]string{c.Command}, c.Args...), " ")
	} else {
		r.Target = redactURL(c.URL)
	}
	if c.Outbound.Set {
		r.Restriction = c.Outbound.Restriction.String()
	}
	if c.ResultConfidence != policy.None {
		r.ResultConfidence = c.ResultConfidence.String()
	}
	if c.DataSecurity != policy.NotSpecified {
		r.DataSecurity = c.DataSecurity.String()
	}
	for k := range c.Env {
		r.Env = append(r.Env, k)
	}
	for k := range c.Headers {
		r.Headers = append(r.Headers, k)
	}
	sort.Strings(r.Env)
	sort.Strings(r.Headers)
	return r
}

// redactURL drops the query of a URL, which may carry a token.
func redactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i] + "?…"
	}
	return u
}

func newMCPListCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured MCP servers and their policy (starts none)",
		Example: `  steward mcp list
  steward mcp list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAppNoMCP(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			cfgs, errs := a.MCPServerConfigs()
			for _, err := range errs {
				fmt.Fprintf(e.stderr, "steward: %v\n", err)
			}
			var rows []mcpServerRow
			for _, c := range cfgs {
				rows = append(rows, serverRow(a, c))
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				if rows == nil {
					rows = []mcpServerRow{}
				}
				return writeJSON(e.stdout, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(e.stderr, "No MCP servers configured: add one with steward mcp add or steward mcp import.")
				return nil
			}
			for _, r := range rows {
				state := ""
				if r.Disabled {
					state = " (disabled)"
				}
				fmt.Fprintf(e.stdout, "%s%s  %s  %s: %s\n", r.ID, state, r.Name, r.Type, r.Target)
				fmt.Fprintf(e.stdout, "    from %s; sends data: %s; minimum confidence: %s; content untrusted: %v", r.From, r.OutboundData, r.MinimumConfidence, r.UntrustedContent)
				if r.Restriction != "" {
					fmt.Fprintf(e.stdout, "; chat keeps %s after use", r.Restriction)
				}
				if r.ResultConfidence != "" {
					fmt.Fprintf(e.stdout, "; results need confidence %s", r.ResultConfidence)
				}
				if r.DataSecurity != "" {
					fmt.Fprintf(e.stdout, "; results need %s", r.DataSecurity)
				}
				fmt.Fprintln(e.stdout)
				if len(r.Env)+len(r.Headers) > 0 {
					fmt.Fprintf(e.stdout, "    secrets: env %s; headers %s\n", listOrNone(r.Env), listOrNone(r.Headers))
				}
				sel := "not selected (add it to --tools or steward settings)"
				if r.Selected {
					sel = "selected"
				}
				fmt.Fprintf(e.stdout, "    collection %s, %s\n", r.Collection, sel)
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// connectFor starts the servers named in args (all when none), checking
// that each name is configured.
func connectFor(cmd *cobra.Command, a *app.App, args []string) ([]app.MCPServer, error) {
	cfgs, errs := a.MCPServerConfigs()
	for _, err := range errs {
		fmt.Fprintf(cmd.ErrOrStderr(), "steward: %v\n", err)
	}
	for _, id := range args {
		if !slices.ContainsFunc(cfgs, func(c config.MCPServerConfig) bool { return c.ID == id }) {
			return nil, usagef("no MCP server %q is configured: see steward mcp list", id)
		}
	}
	var only []string
	if len(args) > 0 {
		only = args
	}
	return a.ConnectMCPServers(cmd.Context(), only), nil
}

type mcpToolRow struct {
	Server       string `json:"server"`
	Remote       string `json:"remote_name"`
	Name         string `json:"name"`
	Strict       bool   `json:"strict"`
	OutboundData string `json:"outbound_data"`
	ReadOnlyHint bool   `json:"read_only_hint"`
	Description  string `json:"description"`
}

func newMCPToolsCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools [SERVER...]",
		Short: "Start MCP servers and show the tools Steward takes from them",
		Long: `Start the named MCP servers (all when none is named), list their tools the way
Steward offers them (name, strict mode, where each sends data), and say what was
left out, renamed, filtered or kept out of strict mode.`,
		Example: `  steward mcp tools
  steward mcp tools docs --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAppNoMCP(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			servers, err := connectFor(cmd, a, args)
			if err != nil {
				return err
			}
			defer a.CloseMCPServers(servers)
			asJSON, _ := cmd.Flags().GetBool("json")
			var rows []mcpToolRow
			failed := 0
			for _, s := range servers {
				if s.Err != nil {
					failed++
					fmt.Fprintf(e.stderr, "steward: %v\n", s.Err)
					continue
				}
				if s.Conn == nil {
					fmt.Fprintf(e.stderr, "steward: MCP server %q is disabled\n", s.Config.ID)
					continue
				}
				for _, ti := range s.Conn.Infos() {
					rows = append(rows, mcpToolRow{Server: s.Config.ID, Remote: ti.Remote, Name: ti.Name, Strict: ti.Strict,
						OutboundData: ti.OutboundData.String(), ReadOnlyHint: ti.ReadOnly, Description: ti.Description})
				}
				for _, p := range s.Conn.Problems() {
					fmt.Fprintf(e.stderr, "steward: MCP server %q: %s\n", s.Config.ID, p)
				}
			}
			if asJSON {
				if rows == nil {
					rows = []mcpToolRow{}
				}
				if err := writeJSON(e.stdout, rows); err != nil {
					return err
				}
			} else {
				for _, r := range rows {
					strict := "strict"
					if !r.Strict {
						strict = "not strict"
					}
					fmt.Fprintf(e.stdout, "%s  (%s of %s; %s; sends data: %s)\n    %s\n", r.Name, r.Remote, r.Server, strict, r.OutboundData, firstLine(r.Description))
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d MCP servers could not be started", failed, len(servers))
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "write JSON")
	return cmd
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

func newMCPCheckCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check [SERVER...]",
		Short: "Start MCP servers, check that they answer, and show what went wrong",
		Long: `Start the named MCP servers (all when none is named), ask each for its tools
and a ping, and report per server: OK with its name, version and number of
tools, or what failed, with the last lines it wrote to its standard error
(secrets removed). Exits 1 when a server fails.`,
		Example: `  steward mcp check
  steward mcp check docs`,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAppNoMCP(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			servers, err := connectFor(cmd, a, args)
			if err != nil {
				return err
			}
			defer a.CloseMCPServers(servers)
			failed := 0
			for _, s := range servers {
				switch {
				case s.Err != nil:
					failed++
					fmt.Fprintf(e.stdout, "%s: FAILED: %v\n", s.Config.ID, s.Err)
				case s.Conn == nil:
					fmt.Fprintf(e.stdout, "%s: disabled\n", s.Config.ID)
					continue
				default:
					if err := s.Conn.Ping(cmd.Context()); err != nil {
						failed++
						fmt.Fprintf(e.stdout, "%s: FAILED: it started but does not answer a ping: %v\n", s.Config.ID, err)
						break
					}
					name, version := s.Conn.ServerInfo()
					fmt.Fprintf(e.stdout, "%s: OK: %s %s, %d tools taken\n", s.Config.ID, firstNonEmptyStr(name, "(unnamed server)"), version, len(s.Conn.Infos()))
					for _, p := range s.Conn.Problems() {
						fmt.Fprintf(e.stdout, "    %s\n", p)
					}
				}
				if s.Conn != nil || s.Err != nil {
					if tail := stderrOf(s); tail != "" {
						fmt.Fprintf(e.stdout, "    its standard error ended with:\n%s\n", indent(tail, "      "))
					}
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d MCP servers failed", failed, len(servers))
			}
			return nil
		},
	}
	return cmd
}

func stderrOf(s app.MCPServer) string {
	text := ""
	if s.Conn != nil {
		text = s.Conn.Stderr()
	} else {
		var se interface{ Stderr() string }
		if errors.As(s.Err, &se) {
			text = se.Stderr()
		}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func firstNonEmptyStr(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// policyFlags are the server policy a user sets with add and import.
func addPolicyFlags(cmd *cobra.Command) {
	cmd.Flags().String("outbound-data", "", "where the server sends its tools' arguments: NONE, CONFIGURED_SERVICE, THIRD_PARTY_QUERIES or MODEL_CHOSEN_ADDRESSES (default, the most open)")
	cmd.Flags().String("min-confidence", "", "the lowest provider confidence its tools are offered to (default NONE)")
	cmd.Flags().Bool("trusted", false, "its descriptions and results need no prompt-injection filter (default: untrusted)")
	cmd.Flags().String("restrict-outbound", "", "the restriction a chat keeps once its content reached the model: ONLY_LINKS_FROM_CHAT or ONLY_CONFIGURED_SERVICES")
	cmd.Flags().String("result-confidence", "", "the provider confidence a chat needs once its content reached the model")
	cmd.Flags().String("data-security", "", "SELF_HOSTED when its content may only go to self-hosted providers")
	cmd.Flags().Bool("no-select", false, "do not add the server's collection to your tool selection")
}

func applyPolicyFlags(cmd *cobra.Command, u *config.UserMCPServer) error {
	get := func(name string) string { v, _ := cmd.Flags().GetString(name); return strings.TrimSpace(v) }
	if v := get("outbound-data"); v != "" {
		if _, err := config.ParseOutboundData(v); err != nil {
			return usagef("--outbound-data: %v", err)
		}
		u.OutboundData = strings.ToUpper(v)
	}
	for flag, dst := range map[string]*string{"min-confidence": &u.MinimumConfidence, "result-confidence": &u.ResultConfidence} {
		if v := get(flag); v != "" {
			c, err := policy.ParseConfidence(v)
			if err != nil {
				return usagef("--%s: %v", flag, err)
			}
			*dst = c.String()
		}
	}
	if v := get("restrict-outbound"); v != "" {
		r, err := policy.ParseRestriction(v)
		if err != nil {
			return usagef("--restrict-outbound: %v", err)
		}
		u.OutboundDataRestriction = r.String()
	}
	if v := get("data-security"); v != "" {
		d, err := policy.ParseDataSecurity(v)
		if err != nil {
			return usagef("--data-security: %v", err)
		}
		u.DataSecurity = d.String()
	}
	if trusted, _ := cmd.Flags().GetBool("trusted"); trusted {
		f := false
		u.UntrustedContent = &f
	}
	return nil
}

// saveServer stores a user's server: its secrets in the secret store, the
// rest in settings.json, and (unless --no-select) its collection in the
// selection. It refuses an ID taken by the organization.
func saveServer(cmd *cobra.Command, a *app.App, u config.UserMCPServer, env, headers map[string]string, replace bool) error {
	for _, c := range a.Org.MCPServers {
		if c.ID == u.ID {
			return fmt.Errorf("MCP server %q is defined by the plugin %q; choose another ID", u.ID, c.Plugin)
		}
	}
	if a.User.MCP == nil {
		a.User.MCP = &config.UserMCP{}
	}
	i := slices.IndexFunc(a.User.MCP.Servers, func(s config.UserMCPServer) bool { return s.ID == u.ID })
	if i >= 0 && !replace {
		return fmt.Errorf("an MCP server %q exists already: remove it first (steward mcp remove %s) or pass --replace", u.ID, u.ID)
	}
	// Check the whole configuration before anything is stored.
	c := config.MCPServerConfig{ID: u.ID, Name: u.Name, Type: u.Type, Command: u.Command, Args: u.Args, URL: u.URL, Env: env, Headers: headers,
		TimeoutSeconds: u.TimeoutSeconds, StartupTimeoutSeconds: u.StartupTimeoutSeconds, MaxResultChars: u.MaxResultChars}
	if err := c.Validate(); err != nil {
		return usageError{err}
	}
	u.Type = c.Type
	service := config.MCPSecretService(u.ID)
	if i >= 0 {
		old := a.User.MCP.Servers[i]
		for _, n := range old.Env {
			_ = a.Secrets.Delete(service, config.MCPEnvKey(n))
		}
		for _, n := range old.Headers {
			_ = a.Secrets.Delete(service, config.MCPHeaderKey(n))
		}
	}
	u.Env, u.Headers = nil, nil
	for _, k := range sortedKeys(env) {
		if err := a.Secrets.Set(service, config.MCPEnvKey(k), env[k]); err != nil {
			return fmt.Errorf("storing the environment variable %s in %s: %w", k, a.Secrets.Where(), err)
		}
		u.Env = append(u.Env, k)
	}
	for _, k := range sortedKeys(headers) {
		if err := a.Secrets.Set(service, config.MCPHeaderKey(k), headers[k]); err != nil {
			return fmt.Errorf("storing the header %s in %s: %w", k, a.Secrets.Where(), err)
		}
		u.Headers = append(u.Headers, k)
	}
	if i >= 0 {
		a.User.MCP.Servers[i] = u
	} else {
		a.User.MCP.Servers = append(a.User.MCP.Servers, u)
	}
	if noSelect, _ := cmd.Flags().GetBool("no-select"); !noSelect {
		if col := mcpclient.CollectionID(u.ID); !slices.Contains(a.User.SelectedTools, col) {
			a.User.SelectedTools = append(a.User.SelectedTools, col)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func newMCPAddCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add ID [flags] (-- COMMAND [ARGS...] | --url URL)",
		Short: "Add an MCP server whose tools Steward offers its models",
		Long: `Add an MCP server to your settings: a command Steward starts (stdio), given
after --, or a streamable HTTP server at --url. Values of --env and --header are
secrets: they go to the OS keyring (or the user-only secrets file), never into
settings.json. ${VAR} and ${VAR:-default} in them, in the command, its arguments
and the URL are read from the environment when Steward starts the server.

Its tools join the registry as the collection mcp__<ID>, which is added to your
tool selection unless --no-select. By default the server counts as sending data
anywhere (MODEL_CHOSEN_ADDRESSES) and its content as untrusted; declare what
you know with the policy flags.`,
		Example: `  steward mcp add docs --outbound-data NONE --restrict-outbound ONLY_CONFIGURED_SERVICES -- npx -y @modelcontextprotocol/server-filesystem /srv/docs
  steward mcp add github --url https://api.githubcopilot.com/mcp/ --header "Authorization: Bearer \${GH_PAT}"
  steward mcp add wiki --url https://mcp.example.org/mcp --outbound-data CONFIGURED_SERVICE --min-confidence HIGH --result-confidence HIGH`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			var id string
			var command []string
			switch {
			case dash < 0 && len(args) == 1:
				id = args[0]
			case dash == 1:
				id, command = args[0], args[1:]
			default:
				return usagef("mcp add takes the server's ID, then -- and the command to start it, or --url")
			}
			if msg := config.ValidMCPServerID(id); msg != "" {
				return usagef("%s", msg)
			}
			url, _ := cmd.Flags().GetString("url")
			switch {
			case url != "" && len(command) > 0:
				return usagef("give either a command after -- or --url, not both")
			case url == "" && len(command) == 0:
				return usagef("give the command to start the server after --, or --url for an HTTP server")
			}
			u := config.UserMCPServer{ID: id}
			u.Name, _ = cmd.Flags().GetString("name")
			if len(command) > 0 {
				u.Type, u.Command, u.Args = config.MCPStdio, command[0], command[1:]
			} else {
				u.Type, u.URL = config.MCPHTTP, url
				if sse, _ := cmd.Flags().GetBool("sse"); sse {
					u.Type = config.MCPSSE
				}
			}
			env := map[string]string{}
			envs, _ := cmd.Flags().GetStringArray("env")
			for _, kv := range envs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("--env %q must be NAME=VALUE, e.g. API_TOKEN=${API_TOKEN}", kv)
				}
				env[k] = v
			}
			headers := map[string]string{}
			hs, _ := cmd.Flags().GetStringArray("header")
			for _, kv := range hs {
				k, v, ok := strings.Cut(kv, ":")
				if !ok || strings.TrimSpace(k) == "" {
					return usagef("--header must be \"Name: value\", e.g. \"Authorization: Bearer ${TOKEN}\"")
				}
				headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			u.EnabledTools, _ = cmd.Flags().GetStringSlice("enable-tool")
			u.DisabledTools, _ = cmd.Flags().GetStringSlice("disable-tool")
			u.TimeoutSeconds, _ = cmd.Flags().GetInt("timeout")
			if err := applyPolicyFlags(cmd, &u); err != nil {
				return err
			}
			a, err := openAppNoMCP(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			replace, _ := cmd.Flags().GetBool("replace")
			if err := saveServer(cmd, a, u, env, headers, replace); err != nil {
				return err
			}
			if err := a.SaveUserSettings(); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "Added MCP server %s; check it with: steward mcp check %s\n", id, id)
			return nil
		},
	}
	cmd.Flags().String("url", "", "the URL of a streamable HTTP server")
	cmd.Flags().Bool("sse", false, "with --url: the server speaks the older HTTP+SSE transport")
	cmd.Flags().String("name", "", "a name for people and the model (default: the ID)")
	cmd.Flags().StringArray("env", nil, "NAME=VALUE for the server's environment (a secret; repeatable)")
	cmd.Flags().StringArray("header", nil, "\"Name: value\" sent to an HTTP server (a secret; repeatable)")
	cmd.Flags().StringSlice("enable-tool", nil, "take only these of the server's tools (its own names)")
	cmd.Flags().StringSlice("disable-tool", nil, "leave these of the server's tools out (its own names)")
	cmd.Flags().Int("timeout", 0, "seconds one call may take (default 60)")
	cmd.Flags().Bool("replace", false, "replace a server of the same ID")
	addPolicyFlags(cmd)
	return cmd
}

func newMCPRemoveCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:     "remove ID",
		Short:   "Remove an MCP server of your settings, with its secrets",
		Example: `  steward mcp remove docs`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("mcp remove takes the server's ID")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAppNoMCP(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			id := args[0]
			i := -1
			if a.User.MCP != nil {
				i = slices.IndexFunc(a.User.MCP.Servers, func(s config.UserMCPServer) bool { return s.ID == id })
			}
			if i < 0 {
				for _, c := range a.Org.MCPServers {
					if c.ID == id {
						return fmt.Errorf("MCP server %q comes from the plugin %q and cannot be removed here; switch it off with steward settings disable %s", id, c.Plugin, mcpclient.CollectionID(id))
					}
				}
				return usagef("no MCP server %q in your settings: see steward mcp list", id)
			}
			s := a.User.MCP.Servers[i]
			for _, n := range s.Env {
				_ = a.Secrets.Delete(config.MCPSecretService(id), config.MCPEnvKey(n))
			}
			for _, n := range s.Headers {
				_ = a.Secrets.Delete(config.MCPSecretService(id), config.MCPHeaderKey(n))
			}
			a.User.MCP.Servers = slices.Delete(a.User.MCP.Servers, i, i+1)
			a.User.SelectedTools = slices.DeleteFunc(a.User.SelectedTools, func(t string) bool { return t == mcpclient.CollectionID(id) })
			if err := a.SaveUserSettings(); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "Removed MCP server %s.\n", id)
			return nil
		},
	}
}

func newMCPImportCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import MCP servers from a Claude Code (.mcp.json) or Crush (crush.json) file",
		Long: `Import the MCP servers of a Claude Code file ({"mcpServers": {...}}: .mcp.json,
~/.claude.json) or a Crush file ({"mcp": {...}}: crush.json). Values of env and
headers go to the secret store. ${VAR} and ${VAR:-default} are kept and read
from the environment when Steward starts the server; Crush's $VAR becomes
${VAR}; a value that runs a command ($(...)) is refused for that server. The
policy flags apply to every imported server; without them each counts as
sending data anywhere with untrusted content.`,
		Example: `  steward mcp import .mcp.json
  steward mcp import ~/.config/crush/crush.json --only fs,github
  steward mcp import .mcp.json --outbound-data NONE --restrict-outbound ONLY_CONFIGURED_SERVICES`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("mcp import takes one file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("reading %s: %w", args[0], err)
			}
			servers, problems, err := config.ParseMCPImport(data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			only, _ := cmd.Flags().GetStringSlice("only")
			a, err := openAppNoMCP(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			replace, _ := cmd.Flags().GetBool("replace")
			imported := 0
			for _, p := range problems {
				fmt.Fprintf(e.stderr, "steward: %v\n", p)
			}
			for _, s := range servers {
				if len(only) > 0 && !slices.Contains(only, s.Name) && !slices.Contains(only, s.Server.ID) {
					continue
				}
				u := s.Server
				if err := applyPolicyFlags(cmd, &u); err != nil {
					return err
				}
				if err := saveServer(cmd, a, u, s.Env, s.Headers, replace); err != nil {
					fmt.Fprintf(e.stderr, "steward: MCP server %q was not imported: %v\n", s.Name, err)
					continue
				}
				for _, n := range s.Notes {
					fmt.Fprintf(e.stderr, "steward: MCP server %q: %s\n", s.Name, n)
				}
				fmt.Fprintf(e.stderr, "Imported MCP server %q as %s.\n", s.Name, u.ID)
				imported++
			}
			if imported > 0 {
				if err := a.SaveUserSettings(); err != nil {
					return err
				}
			}
			if imported == 0 {
				return errors.New("no MCP server was imported")
			}
			return nil
		},
	}
	cmd.Flags().StringSlice("only", nil, "import only these servers (names as in the file, or IDs)")
	cmd.Flags().Bool("replace", false, "replace servers of the same ID")
	addPolicyFlags(cmd)
	return cmd
}

// outboundDemander names who demanded a chat's outbound restriction: a
// mailbox or an MCP server.
func outboundDemander(o policy.OutboundRequirement) string {
	if _, ok := o.MCPServer(); ok {
		return fmt.Sprintf("MCP server %q", o.MailboxName)
	}
	return fmt.Sprintf("mailbox %q", o.MailboxName)
}
