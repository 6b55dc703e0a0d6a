// Package web is the one way Steward reads a web page.
//
// A Service fetches one address under a target policy chosen by whoever chose
// the address (PublicOnly for web_search, AllowList for read_web_page,
// UserChosen for an address the user typed), checks every hop of the redirect
// chain before connecting, resolves names itself and dials only the addresses
// it checked, caps the response size after decompression, refuses binary
// content on its headers, and turns an HTML page into Markdown of its main
// content (a text document comes back as sent): tables stay Markdown tables,
// links are made absolute, and a discussion thread marked up with schema.org
// microdata keeps its replies, not only the opening post. Truncate is the Markdown
// truncator the tools apply before the prompt-injection filter runs.
//
// A retrieval may carry the operating-system sign-in (Options.SignIn,
// Kerberos through SPNEGO; web/kerberos implements it) when a server
// challenges with Negotiate, but only on an https hop to the first
// request's host and port whose addresses are all private and allow-listed
// (or all public and explicitly allowed), for a HIGH-confidence or trusted
// provider. A 401 to the signed-in request is ErrSignInRefused.
//
// This package must not filter content for prompt injections (that is the
// guard package), must not know any tool or provider, must never log fetched
// content or a URL's query values or userinfo, and must never put a refused
// address into an error message.
package web
