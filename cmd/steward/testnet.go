//go:build !steward_testnet

package main

import "github.com/stewardhq/steward/app"

// testNetwork is nil in every build but the end-to-end tests' own (the
// build tag steward_testnet, see testnet_on.go): a production binary never
// reads a made-up network from its environment.
func testNetwork(func(string) string) func(*app.Options) { return nil }
