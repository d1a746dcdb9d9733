package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAWaitEndsWhenItsTokenNoLongerHolds: a blocking call whose caller's
// token a reload removed (Options.Still says it no longer holds) ends
// with a tool error at its next wait slice, and the question stays
// parked; before, it waited on and handed the removed token the person's
// answer, hours later.
func TestAWaitEndsWhenItsTokenNoLongerHolds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	var revoked atomic.Bool
	h := mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{WaitSlice: 20 * time.Millisecond, Caller: agentOf,
		Still: func(*http.Request) func(context.Context) bool {
			return func(context.Context) bool { return !revoked.Load() }
		}})
	hs := httptest.NewServer(authenticate(h))
	t.Cleanup(hs.Close)
	cs, _ := aliceOn(t, ctx, hs.URL, nil)
	out := callOn(ctx, cs, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "reversible"}})
	q := waitParked(t, ctx, svc)
	revoked.Store(true)
	res := result(t, ctx, out)
	if !res.IsError || !strings.Contains(text(t, res), "no longer holds") {
		t.Fatalf("the call after its token was removed: %+v", res)
	}
	if got, err := svc.Get(ctx, q.ID); err != nil || !got.Open() {
		t.Fatalf("the question: %+v, %v; want it still parked", got, err)
	}
}
