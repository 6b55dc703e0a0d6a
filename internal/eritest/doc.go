// Package eritest is an ERI v1 server on loopback for tests: it offers
// sign-in methods, signs clients in, describes its data source, its
// embeddings, retrieval processes and security requirements, and answers
// retrievals from a small corpus by the words of the query.
//
// Every request it receives is checked against the published spec
// (../shared/reference/eri/v1.json, the way the provider adapters' requests
// are checked against the providers' specs, through llmtest.Schema), and so
// is every answer it gives on its own: a test fails when either does not
// validate. A test that needs a malformed, slow or hostile answer replaces
// an endpoint's handler with Override; such answers are not validated.
//
// The token the spec puts on every call is required on every call but
// /auth/methods and /auth, which accept it and accept its absence, since
// the reference client sends none there. It is imported only by tests and
// listens on 127.0.0.1 only.
package eritest
