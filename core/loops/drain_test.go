package loops_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// slackCourier is what the drain's test couriers share: they post into
// Slack, and do nothing but post (each adds its own Post).
type slackCourier struct{}

func (slackCourier) Surface() core.Surface                                         { return core.SurfaceSlack }
func (slackCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (slackCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (slackCourier) Digest(context.Context, core.Digest, string) error             { return nil }

// opsOnSlack is a service on the embedded store whose route "ops" posts
// into Slack's C1 (askOps asks there).
func opsOnSlack(t *testing.T) *core.Service {
	return coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}})
}

// startDrain drains svc's outbox through c until the function it returns
// is called or the test ends; the function returns once the drain has
// stopped.
func startDrain(t *testing.T, svc *core.Service, c core.Courier, o loops.DeliverOptions) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = loops.Deliver(ctx, svc, c, o) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// within is what ch receives, failing the test with what if nothing
// comes within ten seconds.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
	}
	t.Fatal(what)
	var none T
	return none
}
