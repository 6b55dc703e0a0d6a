package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stewardhq/steward/internal/testenv"
)

// Versions are the pinned npm versions .ci/run installs.
const (
	EverythingVersion = "2026.8.31"
	FilesystemVersion = "2026.8.31"
)

// InstallHint is the command that installs the servers.
const InstallHint = "npm install --prefix .cache/mcp-servers @modelcontextprotocol/server-everything@" + EverythingVersion +
	" @modelcontextprotocol/server-filesystem@" + FilesystemVersion

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("mcptest: %s not found but CI=true: run %s (see .ci/run)", what, InstallHint)
	}
	t.Skipf("mcptest: %s not found; run %s to run the tests against real MCP servers", what, InstallHint)
}

// Node returns the node binary.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node")
	}
	return p
}

func script(t testing.TB, pkg string) string {
	t.Helper()
	p := filepath.Join(testenv.RepoRoot(t), ".cache", "mcp-servers", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		missing(t, "@modelcontextprotocol/"+pkg)
	}
	return p
}

// Everything returns the command and arguments that start
// server-everything on stdio.
func Everything(t testing.TB) (string, []string) {
	t.Helper()
	node := Node(t)
	return node, []string{script(t, "server-everything"), "stdio"}
}

// Filesystem returns the command and arguments that start
// server-filesystem on stdio, allowed to read and write below dirs.
func Filesystem(t testing.TB, dirs ...string) (string, []string) {
	t.Helper()
	node := Node(t)
	return node, append([]string{script(t, "server-filesystem")}, dirs...)
}
