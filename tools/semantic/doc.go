// Package semantic is the semantic_search tool: the model searches the
// data sources of its chat with a query it works out from the
// conversation, whenever a question calls for it.
//
// The tool offers itself from the context of the chat (CONTEXT
// activation); nobody selects it. Its description lists the sources the
// provider may use in this chat, ordered by number then ID, with their
// IDs, names, kinds, page sizes, last pages and descriptions shortened to
// 500 characters; it offers nothing when there are none, or when the chat
// searches with every message instead. The answer stays the same while the
// chat does, and is cheap: ERI descriptions come from a five-minute cache.
//
// Each call checks the sources again, searches them in parallel, and
// brings their passages into one result through one filter action: the
// sources take turns, best passages first, within 100,000 characters, and
// what does not fit is counted. A source that fails is reported as not
// searched. Only the sources whose passages reached the model raise the
// chat's requirements. The package logs counts only, never a query or a
// passage, and holds no secret.
package semantic
