// Package websearch is the web_search tool: it asks the configured search
// services (SearXNG, Tavily, Brave Search) for a query the model wrote,
// merges and de-duplicates their hits, reads the result pages through the
// web package's public-only policy within a character budget and timeouts,
// and returns each result with its page content as Markdown, or with the
// engine's snippet and the reason when the page could not be read.
//
// Everything that reaches the model — page fields, engine titles and
// snippets, and what the search services say in notes — goes through one
// prompt-injection filter batch per search. Safe search is never bypassed:
// while a safe-search policy is set, a service that cannot filter is not
// asked. The package reaches the search services only through its HTTP
// client (the one it is given, or a plain one of its own) and result pages only through web.Service; it never
// reaches a private, loopback or link-local page, never logs a query, an
// API key or page content, and never puts an API key into an error.
package websearch
