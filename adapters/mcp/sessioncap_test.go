package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
)

// initialize is the request a client opening a session sends.
const initialize = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// openSession sends an initialize without a session, as a client opening
// one does, with token tok, and returns the response's status and body.
func openSession(t *testing.T, ctx context.Context, url, tok string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode == http.StatusOK {
		// A session was opened: close it, as a client does, so that it
		// holds no place.
		del, _ := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
		del.Header.Set("Authorization", "Bearer "+tok)
		del.Header.Set("Mcp-Session-Id", res.Header.Get("Mcp-Session-Id"))
		if r, err := http.DefaultClient.Do(del); err == nil {
			_ = r.Body.Close()
		}
	}
	return res.StatusCode, string(b)
}

// TestSessionsPerCallerAreCapped: past 256 live MCP sessions opened by
// one caller on a server, or Options.MaxSessionsPerCaller, the caller's
// next session is refused with 429 and a JSON-RPC error saying why and
// how to free a place; another caller still opens its own, and a session
// the caller ends (DELETE, as a client closing it sends) frees its place
// at once. Before, nothing bounded them: one token could open sessions
// without end, each some 5.5 KB and a goroutine for up to a day.
func TestSessionsPerCallerAreCapped(t *testing.T) {
	t.Run("default", func(t *testing.T) { cappedSessions(t, 0, 256) })
	t.Run("set", func(t *testing.T) { cappedSessions(t, 2, 2) })
}

func cappedSessions(t *testing.T, set, most int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{Caller: agentOf, MaxSessionsPerCaller: set})))
	t.Cleanup(hs.Close) // after the sessions' own cleanup
	var first *mcpsdk.ClientSession
	for i := range most {
		cs, _ := aliceOn(t, ctx, hs.URL, nil)
		if i == 0 {
			first = cs
		}
	}
	status, body := openSession(t, ctx, hs.URL, "tok-alice")
	var m struct {
		ID    int64     `json:"id"`
		Error *rpcError `json:"error"`
	}
	if status != http.StatusTooManyRequests || json.Unmarshal([]byte(body), &m) != nil || m.ID != 7 || m.Error == nil ||
		!strings.Contains(m.Error.Message, "most MCP sessions") || !strings.Contains(m.Error.Message, "DELETE") {
		t.Fatalf("a session past the cap: HTTP %d %s; want 429 and a JSON-RPC error saying why", status, body)
	}
	alice := &bearer{}
	alice.token.Store("tok-alice")
	if _, err := httpClient(t, ctx, hs.URL, alice, nil); err == nil {
		t.Fatal("the SDK's client opened a session past the cap")
	}
	if status, body := openSession(t, ctx, hs.URL, "tok-mallory"); status != http.StatusOK {
		t.Fatalf("another caller's session: HTTP %d %s", status, body)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if status, body := openSession(t, ctx, hs.URL, "tok-alice"); status != http.StatusOK {
		t.Fatalf("a session after one was closed: HTTP %d %s", status, body)
	}
}

// TestExpiredSessionsFreeTheirPlaces: a session closed for being idle
// (Options.SessionIdle) no longer counts against its caller's cap, though
// nothing told the cap it ended.
func TestExpiredSessionsFreeTheirPlaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc},
		mcp.Options{Caller: agentOf, MaxSessionsPerCaller: 1, SessionIdle: 50 * time.Millisecond})))
	t.Cleanup(hs.Close)

	aliceOn(t, ctx, hs.URL, nil) // its place is the one: it goes idle
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); ; <-tick.C {
		status, body := openSession(t, ctx, hs.URL, "tok-alice")
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the place of an expired session was never freed: HTTP %d %s", status, body)
		}
	}
}
