// Package redact is the one place where configured secrets are taken out
// of what Steward prints or stores: provider keys, search backend keys,
// mailbox passwords and tokens, whatever came from the keyring or an
// organization's ENC:v1 value. A provider or a server that echoes a key
// back (in a 401 body, an error event, a page) must not have it shown on
// the terminal, written to --json output, or saved with a chat.
//
// A Set learns each secret as it is read, and rewrites strings and byte
// streams. It imports nothing of Steward's, so every room may use it; it
// never logs and never returns a secret.
package redact
