// Package client connects to MCP servers and offers their tools as Steward
// tools: one tool.Tool per tool of a server, one registry collection per
// server.
//
// A server's tools are what the server says they are, and the server may be
// hostile, so everything it says passes Steward's rules: names are mapped
// to mcp__<server>__<tool> (never colliding with Steward's own), input
// schemas are normalized, validated and converted by the strict rules of
// package tool (a schema strict mode cannot express keeps the tool out of
// strict mode), descriptions and results of an untrusted server pass the
// prompt-injection filter, results are truncated, and model arguments are
// validated against the schema before they are sent. Annotations may only
// tighten what the configuration declares (an openWorldHint never widens
// the outbound data kind). A server that fails to start, crashes, hangs or
// answers garbage costs only its own tools, with a message naming it.
//
// Values of a server's environment and headers are secrets: they never
// appear in a log line, an error or a trace. A stdio server gets only a
// minimal environment of Steward's (PATH, HOME, locale) plus its own, so
// provider keys and the configuration secret never reach it. HTTP servers
// are reached with the HTTP client the caller gives, through the client
// that keeps secret-bearing requests on their origin.
//
// The package does not decide which tools a request offers (the registry
// does), and it does not serve MCP (package mcp/server does).
package client
