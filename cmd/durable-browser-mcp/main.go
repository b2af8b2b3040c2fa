// Command durable-browser-mcp is `durable-browser mcp`: the MCP server over
// the tools, on stdio or streamable HTTP. It is a binary of its own so that
// the durable-browser binary's other client verbs do not link the MCP SDK
// (about 2 MiB more resident at every start); `durable-browser mcp` execs
// it with the same arguments. Run it either way: the flags are the same.
package main

import (
	"os"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
)

// cliEnv is what a verb may touch (cli.Env, shared by the four commands).
type cliEnv = cli.Env

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { cli.Main("mcp", runMCP, os.Args[1:]) }
