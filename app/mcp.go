package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/mcp/client"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// MCPServer is one configured MCP server and what became of it.
type MCPServer struct {
	Config config.MCPServerConfig
	// Conn is the connection while the server runs; nil when it is
	// disabled, was not started or failed.
	Conn *client.Conn
	// Err says why the server cannot be used; nil when it runs or is
	// disabled.
	Err error
}

// MCPServerConfigs returns the organization's MCP servers and the user's,
// in that order. A user's server that cannot be read, or that takes the ID
// of an organization's server, is returned as a problem.
func (a *App) MCPServerConfigs() ([]config.MCPServerConfig, []error) {
	out := slices.Clone(a.Org.MCPServers)
	var errs []error
	if a.User.MCP == nil {
		return out, nil
	}
	seen := map[string]bool{}
	for _, u := range a.User.MCP.Servers {
		if i := slices.IndexFunc(out, func(c config.MCPServerConfig) bool { return c.ID == u.ID }); i >= 0 && !seen[u.ID] {
			if out[i].Org {
				errs = append(errs, fmt.Errorf("MCP server %s of your settings is ignored: the organization plugin %q defines a server with this ID", u.ID, out[i].Plugin))
			} else {
				errs = append(errs, fmt.Errorf("MCP server %s of your settings is ignored: the local plugin %q defines a server with this ID", u.ID, out[i].Plugin))
			}
			continue
		}
		if seen[u.ID] {
			errs = append(errs, fmt.Errorf("MCP server %s is listed twice in your settings; the first stays", u.ID))
			continue
		}
		seen[u.ID] = true
		c, err := u.Config(a.Secrets.Get)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	return out, errs
}

// clientServer turns a configuration into what the client connects to.
func clientServer(c config.MCPServerConfig) client.Server {
	return client.Server{
		ID: c.ID, Name: c.Name, Type: c.Type, Command: c.Command, Args: c.Args, Env: c.Env, URL: c.URL, Headers: c.Headers,
		OutboundData: c.OutboundData, MinimumConfidence: c.MinimumConfidence, TrustedContent: !c.UntrustedContent,
		Outbound: c.Outbound, ResultConfidence: c.ResultConfidence, DataSecurity: c.DataSecurity,
		EnabledTools: c.EnabledTools, DisabledTools: c.DisabledTools,
		Timeout: time.Duration(c.TimeoutSeconds) * time.Second, StartupTimeout: time.Duration(c.StartupTimeoutSeconds) * time.Second,
		MaxResultChars: c.MaxResultChars, Org: c.Org,
	}
}

// ConnectMCPServers starts every enabled MCP server concurrently, each
// within its startup timeout. A server that fails costs only its own
// tools: its error is kept in its MCPServer and logged without secrets.
// Only the servers whose ID is in only start when only is not nil.
func (a *App) ConnectMCPServers(ctx context.Context, only []string) []MCPServer {
	cfgs, errs := a.MCPServerConfigs()
	for _, err := range errs {
		a.Logger.Warn("an MCP server of the settings is not used", "error", err)
	}
	reserved := a.builtinNames()
	servers := make([]MCPServer, 0, len(cfgs))
	for _, c := range cfgs {
		if only != nil && !slices.Contains(only, c.ID) {
			continue
		}
		servers = append(servers, MCPServer{Config: c})
	}
	var wg sync.WaitGroup
	for i := range servers {
		s := &servers[i]
		if s.Config.Disabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := client.Connect(ctx, clientServer(s.Config), client.Options{
				Guard:         a.Filter(),
				HTTPClient:    a.HTTPClient,
				Getenv:        a.getenv,
				ReservedNames: reserved,
				Logger:        a.Logger,
				Version:       Version,
			})
			if err != nil {
				s.Err = err
				a.Logger.Warn("an MCP server could not be started; its tools are not available", "server", s.Config.ID, "error", err)
				return
			}
			s.Conn = conn
		}()
	}
	wg.Wait()
	return servers
}

// Version is Steward's version as MCP peers see it.
var Version = "dev"

// builtinNames are the function names of the tools Steward ships.
func (a *App) builtinNames() []string {
	var out []string
	for _, t := range a.Tools {
		if _, isMCP := t.(*client.Tool); !isMCP {
			out = append(out, t.Definition().Function.Name)
		}
	}
	return out
}

// addMCPTools connects the MCP servers and adds their tools; called by
// Open before the registry is built.
func (a *App) addMCPTools(ctx context.Context) {
	a.MCP = a.ConnectMCPServers(ctx, nil)
	for _, s := range a.MCP {
		if s.Conn == nil {
			continue
		}
		a.Tools = append(a.Tools, s.Conn.Tools()...)
		if col := s.Conn.Collection(); len(col.ToolIDs) > 0 {
			a.mcpCollections = append(a.mcpCollections, col)
		}
	}
}

// CloseMCP stops every MCP server this App started.
func (a *App) CloseMCP() { a.CloseMCPServers(a.MCP) }

// MCPProblems are one line each for what the user should know about the
// MCP servers of this App: servers that failed, and tools left out,
// renamed, filtered or kept out of strict mode.
func (a *App) MCPProblems() []string {
	var out []string
	for _, s := range a.MCP {
		if s.Err != nil {
			out = append(out, s.Err.Error())
			continue
		}
		if s.Conn == nil {
			continue
		}
		for _, p := range s.Conn.Problems() {
			out = append(out, fmt.Sprintf("MCP server %q: %s", s.Config.ID, p))
		}
	}
	for _, err := range a.RegistryProblems {
		if strings.Contains(err.Error(), client.ToolPrefix) {
			out = append(out, err.Error())
		}
	}
	return out
}

// mcpServerName names a server for the refusal of a chat it restricted.
func (a *App) mcpServerName(id string) (string, bool) {
	for _, c := range a.Org.MCPServers {
		if c.ID == id {
			return c.Name, true
		}
	}
	if a.User.MCP != nil {
		for _, u := range a.User.MCP.Servers {
			if u.ID == id {
				return firstNonEmpty(u.Name, u.ID), true
			}
		}
	}
	return "", false
}

// MCPClientConfidence is the confidence `steward mcp serve` gives the
// connecting client (see config.Effective.MCPClientConfidence).
func (a *App) MCPClientConfidence() (c policy.Confidence, locked bool, plugin string) {
	return a.Org.MCPClientConfidence(a.User)
}

// MCPTool reports whether t is a tool of an MCP server.
func MCPTool(t tool.Tool) (*client.Tool, bool) {
	c, ok := t.(*client.Tool)
	return c, ok
}

// MailboxName names the mailbox or MCP server an outbound requirement
// names, and false when it has been removed.
func (a *App) MailboxName(id string) (string, bool) { return a.mailboxName(id) }

// CloseMCPServers stops the servers ConnectMCPServers started.
func (a *App) CloseMCPServers(servers []MCPServer) {
	var wg sync.WaitGroup
	for _, s := range servers {
		if s.Conn == nil {
			continue
		}
		wg.Add(1)
		go func(c *client.Conn) {
			defer wg.Done()
			_ = c.Close()
		}(s.Conn)
	}
	wg.Wait()
}
