// Package confluencetest is a fake Confluence for tests, built from
// shared/reference/confluence.md: the REST search and content API in the
// Cloud layout (/wiki/rest/api, cursor paging, Basic e-mail and API token,
// also under /ex/confluence/<cloudId> for scoped tokens) and the Data Center
// layout (an optional context path, start/limit paging, Bearer personal
// access tokens), the Data Center search page dosearchsite.action with the
// wiki's pages as HTML, its login page and Negotiate sign-in, and scenario
// switches for the errors a real site gives (400, 401, 403, 404, 429 with
// Retry-After, redirects out of the wiki and to the login page).
//
// It parses the CQL it receives with a parser of its own (ParseCQL), so a
// test can check what a query builder really sent, and records every
// request. It serves on loopback only, with a self-signed certificate for
// the made-up names a test gives (see Certificate); it never contacts
// anything. It is imported only by tests.
package confluencetest
