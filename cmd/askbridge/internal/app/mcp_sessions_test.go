package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestMCPMaxSessionsPerCallerFromTheEnvironment:
// ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER bounds the MCP sessions one agent
// token holds open on the replica: with 1, a second session of the same
// token is refused while the first is open, another token's is not, and
// closing the first frees its place. Before, serve never gave the setting
// to the MCP door, whose cap stayed 256.
func TestMCPMaxSessionsPerCallerFromTheEnvironment(t *testing.T) {
	s := apptest.FromEnv(t, map[string]string{"ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER": "1"})
	s.DataDir = "" // the test's own
	m := apptest.Start(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	connect := func(token string) (*mcpsdk.ClientSession, error) {
		return mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
			&mcpsdk.StreamableClientTransport{Endpoint: m.URL + "/mcp", HTTPClient: &http.Client{Transport: withToken(token)}, MaxRetries: -1}, legacyMCP)
	}
	first, err := connect(apptest.AgentA)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := connect(apptest.AgentA); err == nil {
		cs.Close()
		t.Fatal("a second session of one token opened; want it refused, the bound being 1")
	}
	other, err := connect(apptest.AgentB)
	if err != nil {
		t.Fatalf("another token's session: %v", err)
	}
	defer other.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := connect(apptest.AgentA)
	if err != nil {
		t.Fatalf("a session after the first was closed: %v", err)
	}
	again.Close()
}

// TestMCPMaxSessionsPerCallerRefused: a bound that is no whole number from
// 1 to 65536 stops serve with the configuration's exit code, naming the
// variable and its range.
func TestMCPMaxSessionsPerCallerRefused(t *testing.T) {
	for _, v := range []string{"0", "-1", "many", "65537"} {
		_, err := app.LoadSettings(func(k string) string {
			return map[string]string{"ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER": v}[k]
		})
		if err == nil || !strings.Contains(err.Error(), "ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER") || !strings.Contains(err.Error(), "1 to 65536") {
			t.Errorf("ASKBRIDGE_MCP_MAX_SESSIONS_PER_CALLER=%q: %v; want it refused naming the variable and its range", v, err)
		}
	}
}
