package policy

import "strings"

// MCPServerSourcePrefix starts the MailboxID of an OutboundRequirement
// that an MCP server demanded rather than a mailbox: "mcp:<server ID>",
// with the server's name in MailboxName. Stored chats keep the requirement
// as it is, so the server stays named after a restart.
const MCPServerSourcePrefix = "mcp:"

// MCPServer returns the ID of the MCP server which demanded the
// requirement, and false when a mailbox (or nobody) demanded it.
func (o OutboundRequirement) MCPServer() (id string, ok bool) {
	return strings.CutPrefix(o.MailboxID, MCPServerSourcePrefix)
}
