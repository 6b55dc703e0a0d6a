// Package datasource holds Steward's data sources: local folders and
// files searched through the local document index, and ERI v1 servers an
// organization runs. It says what a source is and which values its fields
// may take, which sources a provider may use in a chat (the chat provider
// and the source's embedding provider must meet the source's confidence, a
// SELF_HOSTED source only goes to a self-hosted or trusted provider),
// searches them in parallel, turns what they find into passages of one
// shape (Markdown with their origin) within a shared character budget, and
// runs the classic retrieval process that searches with every message.
//
// What a source returns is written by others: every field of a passage
// and every server description passes the prompt-injection filter before
// it reaches a model, one filter action per search. Only the sources whose
// passages reached the model raise the chat's requirements; a search that
// found nothing brings nothing into the chat. A source that could not be
// searched is reported as not searched, never as empty.
//
// The package holds no SQL (the local index lives in datasource/local and
// store/docindex), opens no connection itself (ERI servers are reached
// through datasource/eri), never logs a query, a passage or a secret, and
// never puts a secret into an error.
package datasource
