// Package policy holds Steward's trust vocabulary: provider confidence levels
// and the schemes that assign them, data-source security, the kinds of
// outbound data a tool produces and the outbound data restriction of a chat.
//
// It is pure: no I/O, no imports of other Steward packages. Every other room
// decides with these rules rather than re-stating them.
package policy
