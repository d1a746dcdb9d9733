package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// postCourier posts each card, or fails with err, and counts the posts
// it was asked for.
type postCourier struct {
	posts int
	err   error
}

func (c *postCourier) Surface() core.Surface { return core.SurfaceSlack }
func (c *postCourier) Post(_ context.Context, _ *core.Question, m core.MessageRef) (core.MessageRef, error) {
	c.posts++
	m.ID = "1714564800.000100"
	return m, c.err
}
func (c *postCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (c *postCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (c *postCourier) Digest(context.Context, core.Digest, string) error             { return nil }

// TestBudgetWaitIsNoFailedDelivery: a delivery its send budget holds back
// (DeliverOne's gate says wait: NotYet, nothing sent, no attempt) leaves
// an askbridge.deliver span marked deferred, with when it is due again,
// not one failed with code "internal"; a post the platform fails is still
// a failed span. Before, a budgeted surface (email's one message a second
// to a room) painted every queued card as a failed delivery.
func TestBudgetWaitIsNoFailedDelivery(t *testing.T) {
	svc, exp := traced(t, coretest.OpenStore(t), coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
	}}})
	ctx := t.Context()
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Text: "Which region?", Route: "ops",
		Agent: "bot", RunID: "r1", Reversibility: core.Reversible}); err != nil {
		t.Fatal(err)
	}
	ds, err := svc.Claims().Claim(ctx, core.SurfaceSlack, "c", 10, time.Minute, 10*time.Millisecond)
	if err != nil || len(ds) != 1 {
		t.Fatalf("claimed %d, %v", len(ds), err)
	}
	c := &postCourier{}
	err = svc.DeliverOne(ctx, c, ds[0], func(context.Context) time.Duration { return 1500 * time.Millisecond })
	if ny, ok := errors.AsType[*core.NotYet](err); !ok || ny.After != 1500*time.Millisecond || c.posts != 0 {
		t.Fatalf("DeliverOne with the budget spent: %v, %d posts; want not yet, nothing posted", err, c.posts)
	}
	s := spanNamed(t, exp, "askbridge.deliver")
	deferred, _ := attr(s, "askbridge.delivery.deferred")
	due, _ := attr(s, "askbridge.delivery.due_again_seconds")
	if s.Status.Code == codes.Error || !deferred.AsBool() || due.AsFloat64() != 1.5 {
		t.Errorf("the budget wait's span: status %v %q, deferred %v, due again in %vs; want no error, deferred, 1.5s",
			s.Status.Code, s.Status.Description, deferred.AsBool(), due.AsFloat64())
	}

	exp.Reset()
	c.err = errors.New("slack is down")
	if err := svc.DeliverOne(ctx, c, ds[0], nil); err == nil || c.posts != 1 {
		t.Fatalf("DeliverOne with the platform failing: %v, %d posts", err, c.posts)
	}
	s = spanNamed(t, exp, "askbridge.deliver")
	if _, ok := attr(s, "askbridge.delivery.deferred"); s.Status.Code != codes.Error || ok {
		t.Errorf("the failed post's span: status %v, attributes %v; want an error, not deferred", s.Status.Code, s.Attributes)
	}
}
