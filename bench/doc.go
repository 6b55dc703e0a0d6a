// Package bench holds Steward's side-by-side benchmarks: the loop's own cost
// per round on a scripted loopback conversation against charm.land/fantasy,
// and the decoding of recorded provider streams against the official OpenAI
// and Anthropic Go SDKs.
//
// It is a module of its own so that the product never depends on the
// libraries it is compared with; its go.mod replaces Steward with the
// working tree beside it. Everything lives in _test.go files: run it with
// go test -bench (see README.md). It must not contact anything but the
// loopback servers and in-memory transports it creates.
package bench
