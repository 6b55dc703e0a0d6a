// Package mcptest finds the real MCP servers the tests run as processes:
// @modelcontextprotocol/server-everything and
// @modelcontextprotocol/server-filesystem, installed by npm into
// .cache/mcp-servers of the repository (see .ci/run), and node to run them.
// A test that needs them is skipped when they are absent, and fails when
// the environment variable CI is "true".
//
// It is imported only by tests, starts nothing itself and opens no
// connection.
package mcptest
