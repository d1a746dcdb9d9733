// Command askbridge is the bridge between AI agents that need a human
// decision and the humans who give it. One binary: the server (serve), the
// CLI that talks to it (ask, questions, answer, decline, events), the MCP
// stdio server (mcp) and version. The program is internal/app; this is
// only its process.
package main

import "github.com/askbridge/askbridge/cmd/askbridge/internal/app"

func main() {
	app.Exit()
}
