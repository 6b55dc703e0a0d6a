// Package credhttp is the one way Steward sends an HTTP request that carries
// a secret: a provider key, a search backend's token, an embedding
// provider's or classifier's key, an ERI or Confluence credential, or the
// headers a user configured for an MCP server.
//
// A client from Client follows a redirect only while it stays within the
// origin (scheme, host and port) of the request that started it. Go's own
// client drops Authorization on a redirect to another host but forwards every
// other header, so a key in x-api-key or X-Subscription-Token would reach
// whoever the configured server points at. Here a redirect to another origin
// is not followed at all, and the error names the setting to fix and the
// origin the server tried to send the request to. A redirect within the
// origin is followed as Go does it: 307 and 308 resend the body, 301, 302 and
// 303 turn into a GET without one.
//
// IsSecretHeader names the headers Steward puts secrets in, so a request's
// headers can be masked wherever they are shown.
//
// The package imports nothing of Steward's. It does not decide whether a
// destination may be contacted at all (that is the web package's and the
// policy's job); it only keeps credentials with the origin they were
// configured for.
package credhttp
