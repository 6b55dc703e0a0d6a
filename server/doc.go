// Package server is `steward serve`: an HTTP API over app and the chat page
// that uses it, embedded in the binary. It is a surface like cmd/steward:
// every rule it shows (which providers a chat may use, which tools are
// offered and why not, which links may be followed, which settings are
// locked) is decided by app and the rooms below it; the server only
// carries the answers to the browser.
//
// The server binds loopback unless told otherwise, answers nothing without
// its access token, checks the Origin of every state-changing request,
// sends no CORS headers and a strict Content-Security-Policy, and caps
// request bodies. The page renders model output and tool content inert:
// Markdown is built into DOM nodes from text, raw HTML is never parsed, no
// image or frame written by a model is loaded, and only the addresses the
// chat's outbound data restriction allows are made clickable.
//
// A turn runs in the server, not in the request that started it: closing
// the tab leaves it running, and its answer is stored as the command line
// stores it.
package server
