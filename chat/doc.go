// Package chat holds a chat thread: its messages, the requirements it
// demands of every later request (provider confidence, data security and
// the outbound data restriction with the mailbox that demanded it), which
// only ever tighten, and the web addresses given to the model.
//
// It also says what counts as a web address and when two addresses are the
// same (FindWebAddresses, RequestKey), and which addresses a tool result
// gives the model (ReturnedAddresses).
//
// It does no I/O: it opens no connection, reads no file and knows no
// provider. Storage belongs to the store package, which persists a thread
// through its JSON form; the session's ledger of tool-returned addresses is
// never persisted.
package chat
