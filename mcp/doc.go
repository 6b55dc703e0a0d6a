// Package mcp is the bridge between Steward and the Model Context Protocol.
// It has two sides, each in a subpackage so that imports keep pointing down:
//
//   - mcp/client brings the tools of MCP servers into Steward: each server's
//     tools become tools of the registry, one collection per server, under
//     the same checks as Steward's own (outbound data, provider confidence,
//     the prompt-injection filter, the chat's requirements).
//   - mcp/server serves Steward's registry to MCP clients, a surface like
//     the command line: the connecting client is treated as a provider whose
//     confidence is configured, and each MCP session is a chat whose
//     requirements only tighten.
//
// This package itself holds nothing but this overview.
package mcp
