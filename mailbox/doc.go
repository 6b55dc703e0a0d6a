// Package mailbox keeps Steward's local index of a user's mailboxes and reads
// it for the mail tools: the mailbox configuration and the organization's
// policy over it, the read-only IMAP indexer, the embedding clients, and the
// retrieval service the tools and the CLI query.
//
// The indexer is the only code that talks to a mail server. It changes
// nothing there (EXAMINE and BODY.PEEK only), signs in at most once per run,
// and after a refused sign-in waits for the user. Nothing in this package
// logs a mail's subject, sender, recipients, folder or attachment names, or a
// secret; the SQL lives in store/mailindex.
package mailbox
