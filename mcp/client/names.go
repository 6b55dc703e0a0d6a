package client

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
)

// maxFunctionName is the longest function name providers accept.
const maxFunctionName = 64

// ToolPrefix starts the name of every tool an MCP server brings.
const ToolPrefix = "mcp__"

// CollectionID is the ID of the collection of a server's tools.
func CollectionID(serverID string) string { return ToolPrefix + serverID }

// ToolName maps a server's tool name to the name the model calls and the
// registry knows it by: mcp__<server>__<tool in snake case>, shortened
// with a stable hash of the original name when longer than 64 characters.
func ToolName(serverID, remote string) string {
	base := ToolPrefix + serverID + "__"
	part := snake(remote)
	if part == "" {
		return shorten(base+"tool", remote)
	}
	name := base + part
	if len(name) > maxFunctionName {
		return shorten(name, remote)
	}
	return name
}

// shorten cuts name to fit with an underscore and 8 hex digits of the
// original name's hash appended.
func shorten(name, original string) string {
	h := hashOf(original)
	keep := maxFunctionName - 1 - len(h)
	if len(name) > keep {
		name = strings.TrimRight(name[:keep], "_")
	}
	return name + "_" + h
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// snake turns a tool name such as "longRunningOperation", "get-tiny-image"
// or "files.read" into lower-case words joined by single underscores.
func snake(s string) string {
	var b strings.Builder
	prevLower := false
	under := false
	for _, r := range s {
		switch {
		case r < unicode.MaxASCII && unicode.IsUpper(r):
			if prevLower {
				under = true
			}
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			prevLower = true
		default:
			under = true
			prevLower = false
		}
	}
	return b.String()
}
