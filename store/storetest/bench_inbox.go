package storetest

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// BenchInbox is how many questions the inbox benchmark asks:
// ASKBRIDGE_BENCH_INBOX, or 2,000.
func BenchInbox() int {
	return benchCount("ASKBRIDGE_BENCH_INBOX", 2_000)
}

// BenchOpenPage measures the inbox's read, one page of 50 open questions
// and the count of all, on a store where BenchInbox() questions were
// asked through the service and one in ten of them declined since (so
// the Redis store's open index still holds their members): with no
// filter ("all"), and with a filter that matches the same questions but
// that the store must check against each of them ("kind"). Run it with
// -benchtime 1x or more.
func BenchOpenPage(b *testing.B, st core.Store) {
	ctx := context.Background()
	svc := coretest.Service(b, st, coretest.Options{})
	n := BenchInbox()
	var declined atomic.Int64
	Parallel(b, 8, n, func(i int64) error {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent", RunID: "run-1",
			ToolCallID: "call-" + strconv.FormatInt(i, 10), Text: "Which region should the cluster run in?", Reversibility: core.Reversible})
		if err == nil && i%10 == 0 {
			_, err = svc.Decline(ctx, q.ID, core.Decider{Surface: core.SurfaceAPI, ID: "ops"})
			declined.Add(1)
		}
		return err
	})
	open := n - int(declined.Load())
	for _, c := range []struct {
		name string
		f    core.OpenFilter
	}{{"all", core.OpenFilter{}}, {"kind", core.OpenFilter{Kind: string(core.KindClarification)}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				p, err := svc.OpenPage(ctx, c.f, "", 50)
				if err != nil || len(p.Questions) != min(50, open) || p.Total != open {
					b.Fatalf("%d questions of %d, %v; want 50 of %d", len(p.Questions), p.Total, err, open)
				}
			}
		})
	}
}
