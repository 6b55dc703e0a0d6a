package testenv

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the directory holding go.mod of the main module.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && containsModule(string(b)) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: no go.mod of github.com/stewardhq/steward above the working directory")
		}
		dir = parent
	}
}

func containsModule(gomod string) bool {
	const want = "module github.com/stewardhq/steward\n"
	return len(gomod) >= len(want) && gomod[:len(want)] == want
}

// SharedDir returns the shared/ folder laid beside the repository, which holds
// peers/ (provider specs and recordings) and reference/. The test fails when
// it is missing: these tests must not silently pass without their data.
func SharedDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(RepoRoot(t), "..", "shared")
	if _, err := os.Stat(filepath.Join(d, "peers")); err != nil {
		t.Fatalf("testenv: shared/peers not found beside the repository at %s: %v", d, err)
	}
	return d
}

// FailDial returns a DialContext that fails the test whenever it is reached.
// Give it to code under test whose refusals must happen before any
// connection is attempted.
func FailDial(t testing.TB) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		t.Errorf("testenv: a connection to %s %s was attempted; it must have been refused before dialing", network, addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.ErrPermission}
	}
}
