package core_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/internal/coretest"
)

// TestTheLongestCodexMCPToolNameIsAsked: Codex's hooks name an MCP tool
// "mcp__" + the name its model calls it by, which Codex keeps within 64
// bytes (server and tool hashed shorter when they are longer), so the
// longest it sends is 69 bytes: well within MaxToolLen, and asked.
func TestTheLongestCodexMCPToolNameIsAsked(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	tool := "mcp__" + strings.Repeat("s", 30) + "__" + strings.Repeat("t", 32)
	if len(tool) != 69 {
		t.Fatalf("the name is %d bytes", len(tool))
	}
	if _, err := svc.Ask(t.Context(), approvalOf(tool, `{}`)); err != nil {
		t.Fatalf("an approval of %s: %v; want it asked", tool, err)
	}
}
