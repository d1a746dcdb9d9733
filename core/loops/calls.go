package loops

import (
	"context"
	"errors"

	"github.com/askbridge/askbridge/core"
)

// DeliverCalls drains the webhook outbox through c until ctx ends, as
// Deliver drains a chat surface's: claims, heartbeats, retries and
// take-over of a dead replica's claims are the same. Set o.GiveUpAfter to
// bound how long a webhook is retried.
func DeliverCalls(ctx context.Context, svc *core.Service, c core.Caller, o DeliverOptions) error {
	return Deliver(ctx, svc, callCourier{c}, o)
}

// callCourier puts a Caller where Deliver takes a Courier: the webhook
// outbox holds webhook deliveries only, so the card methods are never
// called, and refuse if they are. core.Service.DeliverOne hands each
// webhook delivery to its Call.
type callCourier struct{ core.Caller }

var errNoCards = &core.Permanent{Err: errors.New("the webhook surface holds no cards")}

func (callCourier) Surface() core.Surface { return core.SurfaceWebhook }
func (callCourier) Post(context.Context, *core.Question, core.MessageRef) (core.MessageRef, error) {
	return core.MessageRef{}, errNoCards
}
func (callCourier) Update(context.Context, *core.Question, core.MessageRef) error { return errNoCards }
func (callCourier) Remind(context.Context, *core.Question, string) error          { return errNoCards }
func (callCourier) Digest(context.Context, core.Digest, string) error             { return errNoCards }
