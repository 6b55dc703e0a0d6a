// Package mail holds the mail tools: search_mails, read_mail and
// count_mails, which form the collection "mailboxes". They read only the
// local index through mailbox.Service: no tool contacts a mail server or
// marks anything read.
//
// Everything of a mail that reaches the model passes the prompt-injection
// filter in one batch per call; only mailboxes whose content reached the
// model raise the chat's requirements. Nothing here logs or returns in an
// error a subject, sender, recipient, folder or attachment name: an unknown
// folder is answered in the result.
package mail
