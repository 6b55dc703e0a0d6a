// Package loop benchmarks Steward's tool-calling loop against the agent loop
// of charm.land/fantasy on the same scripted ten-round conversation, served
// by one loopback server, side by side in one process.
//
// It is a module of its own, apart from the decoding benchmarks one level
// up, because fantasy v0.41.2 builds only against an older
// github.com/openai/openai-go/v3 than the one those benchmarks compare
// with, and a module can hold only one version of it. It must not contact
// anything but the loopback server it starts.
package loop
