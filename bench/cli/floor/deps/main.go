// Command deps links every package that steward's main imports, runs
// their package initialization and prints a line: the floor under
// `steward --help` that no change to the command itself can go below.
package main

import (
	"os"

	_ "github.com/chzyer/readline"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/spf13/cobra"
	_ "github.com/stewardhq/steward/app"
	_ "github.com/stewardhq/steward/chat"
	_ "github.com/stewardhq/steward/config"
	_ "github.com/stewardhq/steward/datasource"
	_ "github.com/stewardhq/steward/datasource/eri"
	_ "github.com/stewardhq/steward/datasource/local"
	_ "github.com/stewardhq/steward/llm"
	_ "github.com/stewardhq/steward/loop"
	_ "github.com/stewardhq/steward/mailbox"
	_ "github.com/stewardhq/steward/mcp/client"
	_ "github.com/stewardhq/steward/mcp/server"
	_ "github.com/stewardhq/steward/policy"
	_ "github.com/stewardhq/steward/redact"
	_ "github.com/stewardhq/steward/registry"
	_ "github.com/stewardhq/steward/server"
	_ "github.com/stewardhq/steward/settings"
	_ "github.com/stewardhq/steward/store"
	_ "github.com/stewardhq/steward/store/mailindex"
	_ "github.com/stewardhq/steward/tool"
	_ "github.com/stewardhq/steward/tools/mail"
	_ "github.com/stewardhq/steward/tools/semantic"
	_ "golang.org/x/term"
)

func main() { _, _ = os.Stdout.WriteString("Usage: deps\n") }
