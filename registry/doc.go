// Package registry knows which tools and tool collections exist, and
// decides which of them a request offers and why the others are not
// offered. It validates definitions when tools are registered, translates
// selections between collections and tools, applies visibility per
// component, checks every candidate in one fixed order, resolves what each
// passing tool offers in this request, and assembles the tools' system
// prompt instructions.
//
// The registry decides; it never executes a tool and never talks to a
// provider. It reads settings and policy through the settings package and
// the chat only through tool.ChatView.
package registry
