// Package webpage is the read_web_page tool: it reads one web page the model
// names, through the web package's allow-list policy, and hands the model the
// page's main content as Markdown after truncation and prompt-injection
// filtering (tools/webcontent).
//
// It decides on every call whether the address may be read at all: the
// chat's outbound data restriction (which it enforces itself, so that it can
// stay offered after a chat read mails) and the free address choice, which
// by default lets the model read only addresses given to it in the
// conversation. It never repeats a refused address in a refusal or a log,
// never reaches a private host that is not on the allowlist, and never
// reaches an allowed private host for a provider below HIGH confidence.
// With the setting useOsSignIn ON it hands web.Service the operating-system
// sign-in, which that service sends only over HTTPS to the requested host
// and port when all its addresses are private and allow-listed; this tool
// never allows it for a public host.
// It opens no connection itself; every request goes through web.Service.
package webpage
