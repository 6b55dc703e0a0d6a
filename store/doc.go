// Package store keeps Steward's chats in SQLite on disk (WAL mode): their
// messages, tool traces without results, the sources shown, and the chat's
// requirements together with the mailbox which demanded a restriction.
//
// It is the only room that speaks SQL for chats. Every write of a chat is
// one transaction, so a crash in the middle of an answer leaves the stored
// chat as it was before. Tool results are never stored: the seed requires
// paging tools to be stateless because results do not travel into later
// turns.
package store
