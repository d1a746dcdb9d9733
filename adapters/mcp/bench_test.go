package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// benchHost is one replica over the embedded store and a host of alice's
// that declares the Tasks extension, each request one 2026-07-28 POST.
func benchHost(b *testing.B) (*taskClient, context.Context) {
	svc, _ := coretest.Open(b, coretest.Options{Routes: map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}},
	}})
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{Caller: agentOf})))
	b.Cleanup(hs.Close)
	tr := &bearer{}
	tr.token.Store("tok-alice")
	return &taskClient{t: b, http: &http.Client{Transport: tr}, url: hs.URL, caps: tasksCaps(false)}, b.Context()
}

// BenchmarkTaskGet is one host's poll of an open task: a 2026-07-28
// tasks/get over HTTP, read from the store (no task state in memory).
func BenchmarkTaskGet(b *testing.B) {
	h, ctx := benchHost(b)
	raw, err := h.callTool(ctx, mcp.ToolClarification, map[string]any{"question": "Poll me?", "reversibility": "reversible"})
	if err != nil {
		b.Fatal(err)
	}
	id := asTask(b, raw).TaskID
	b.ReportAllocs()
	for b.Loop() {
		if w, err := h.get(ctx, id); err != nil || w.Status != "working" {
			b.Fatalf("%+v, %v", w, err)
		}
	}
}

// BenchmarkTaskCreate is a parking tool call that returns a task: the
// question parked (durably, before the response) and the task built.
func BenchmarkTaskCreate(b *testing.B) {
	h, ctx := benchHost(b)
	b.ReportAllocs()
	for b.Loop() {
		raw, err := h.callTool(ctx, mcp.ToolClarification, map[string]any{"question": "Park me?", "reversibility": "reversible"})
		if err != nil {
			b.Fatal(err)
		}
		asTask(b, raw)
	}
}
