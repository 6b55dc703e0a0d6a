// Package llmtest is the test machinery the provider adapters under llm/
// share: loading recorded provider traffic (go-vcr cassettes of versions 1
// and 2, VCR.py cassettes, vercel-ai chunks files), loopback servers that
// replay it or hang, a transport that only ever reaches loopback, request
// validation against an API's published schema, golden files, and helpers
// for stream fuzzing.
//
// It is imported only by tests. It knows no wire format: what a recording
// must come to, and what a request must carry, stays in each adapter's own
// tests. It never contacts anything but the loopback servers it starts.
package llmtest
