// Package eri is Steward's client of the External Retrieval Interface v1
// (ERI), the contract between a chat application and an organization's
// retrieval server: the sign-in methods a server offers, the sign-in,
// what the data source is, which embeddings and retrieval processes it
// uses, its security requirements, and the retrieval itself, as the
// published OpenAPI document (v1.json) specifies them.
//
// Where the reference client and the spec disagree, the client accepts
// both: the spec puts the ERI token on every call while the reference
// client sends none to /auth/methods and /auth, so neither gets one here;
// fields the spec marks nullable may be null or missing; field names are
// read in camelCase or PascalCase. A field the spec does not know, an
// enum value outside it, or an answer that is not JSON fails the call with
// an error naming the endpoint and what was wrong, never with a partial
// result, so a server that fails is reported as not searched rather than
// as empty.
//
// Every call has a deadline and a size cap on the answer. Requests carry
// the configured secret (a password in the headers the server names, or a
// bearer token) only to /auth, and the token it returns only to the same
// origin: the HTTP client refuses a redirect to another one. No secret,
// token, passage or query ever appears in an error or a log.
//
// The package knows no policy and no chat: deciding which provider may see
// what a server returns is the datasource package's job.
package eri
