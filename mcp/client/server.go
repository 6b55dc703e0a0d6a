package client

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/policy"
)

// Transports of a server.
const (
	Stdio = "stdio"
	HTTP  = "http"
	SSE   = "sse"
)

// Defaults of a server's limits, used where a Server leaves them zero.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultStartupTimeout = 30 * time.Second
	DefaultMaxResultChars = 30000
	// MaxTools is the most tools taken from one server; the rest are
	// reported and left out.
	MaxTools = 128
	// MaxDescriptionChars bounds the description of one tool.
	MaxDescriptionChars = 2000
	// MaxSchemaBytes bounds the input schema of one tool.
	MaxSchemaBytes = 64 << 10
	// MaxFrameBytes bounds one message a server sends.
	MaxFrameBytes = 8 << 20
)

// Server is one MCP server as configured, with its secrets in plain text.
type Server struct {
	// ID names the server in tool names (mcp__<ID>__<tool>) and the
	// collection (mcp__<ID>); lower-case letters, digits, single
	// underscores.
	ID string
	// Name is shown to people and the model.
	Name string
	// Type is Stdio, HTTP or SSE.
	Type    string
	Command string
	Args    []string
	// Env and Headers are secrets; ${VAR} and ${VAR:-default} in them, in
	// Command, Args and URL are expanded from the environment on connect.
	Env     map[string]string
	URL     string
	Headers map[string]string

	// OutboundData is where the server may send its tools' arguments.
	OutboundData policy.OutboundData
	// MinimumConfidence is the collection's minimum provider confidence.
	MinimumConfidence policy.Confidence
	// TrustedContent is set for a server whose descriptions and results
	// need no prompt-injection filter; the zero value filters them.
	TrustedContent bool
	// Outbound is the restriction the chat keeps once a result reached the
	// model (Set false: none). The requirement names the server.
	Outbound policy.OutboundRequirement
	// ResultConfidence and DataSecurity are what a result demands of the
	// chat.
	ResultConfidence policy.Confidence
	DataSecurity     policy.DataSecurity
	// EnabledTools, when not empty, are the only tools taken; DisabledTools
	// are left out. Both use the server's own names.
	EnabledTools  []string
	DisabledTools []string
	// Timeout bounds one call, StartupTimeout connecting and listing.
	Timeout        time.Duration
	StartupTimeout time.Duration
	// MaxResultChars is how much of one result reaches the model.
	MaxResultChars int
	// Org is true for an organization's server.
	Org bool
}

// Filter is what the client needs of the prompt-injection filter;
// *guard.Filter satisfies it.
type Filter interface {
	FilterBatch(ctx context.Context, texts []guard.Text) []guard.Outcome
	BeginAction() (end func())
}

// Options are what connecting needs besides the server.
type Options struct {
	// Guard filters descriptions and results of untrusted servers; nil
	// leaves texts as they are (tests only).
	Guard Filter
	// HTTPClient reaches HTTP servers; nil uses a fresh client. It is
	// wrapped so that redirects stay on the server's origin.
	HTTPClient *http.Client
	// Getenv reads Steward's environment for ${VAR}; nil means none.
	Getenv func(string) string
	// ReservedNames are the function names of Steward's own tools: a
	// server's tool of such a name is reported (it is offered under its
	// mcp__ name and never replaces Steward's).
	ReservedNames []string
	// Transport, when set, replaces the stdio process or HTTP connection,
	// e.g. with one end of mcp.NewInMemoryTransports in tests. It is
	// called for every (re)connection.
	Transport func(ctx context.Context) (mcp.Transport, error)
	// Logger receives diagnostics without secrets or content; nil discards.
	Logger *slog.Logger
	// Version is Steward's version, sent as the client's.
	Version string
}

func (s *Server) defaults() {
	if s.Name == "" {
		s.Name = s.ID
	}
	if s.Type == "" {
		s.Type = Stdio
		if s.URL != "" && s.Command == "" {
			s.Type = HTTP
		}
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.StartupTimeout <= 0 {
		s.StartupTimeout = DefaultStartupTimeout
	}
	if s.MaxResultChars <= 0 {
		s.MaxResultChars = DefaultMaxResultChars
	}
}

// SourceID is how an outbound requirement names an MCP server: the
// requirement's MailboxID field holds it (see policy.MCPServerSource).
func SourceID(serverID string) string { return policy.MCPServerSourcePrefix + serverID }
