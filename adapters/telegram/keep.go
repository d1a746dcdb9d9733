package telegram

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// tapHold is how long a tap's claim lasts in webhook mode unless its
// handling renews it (keep). Telegram takes an answer to a tap for about
// 15 s (heldTapTries says where the figure comes from), and in webhook
// mode nothing but a copy Telegram sends again can answer a tap whose
// replica died with it; the copy is handled only once the dead
// replica's claim has lapsed. With seenHold's minute every copy within
// those seconds was refused, and the tapper was answered nothing. A
// short claim lapses within tapHold of its holder's death, and the copy
// that comes next is answered within answerBudget: some 7.5 s after the
// death, plus however long Telegram takes to send the tap again.
const tapHold = 2 * answerBudget

// tapRenew is how often a tap's claim is renewed while it is handled: a
// quarter of its hold, so that a renewal the store fails, or is slow
// with, leaves two more before the claim would lapse under a live
// handling.
const tapRenew = tapHold / 4

// tapClaim is how long a tap's claim lasts unrenewed: tapHold in
// webhook mode; seenHold while polling, where a tap a dead poller held
// has its tapper answered by the poller that fetches it next
// (answerHeld), and no renewal is needed.
func (a *Adapter) tapClaim() time.Duration {
	if a.opts.WebhookSecret == "" {
		return seenHold
	}
	return tapHold
}

// keep renews a tap's claim g every tapRenew while its handling runs (in
// webhook mode, where the claim is short: tapClaim), until ctx ends or
// the returned stop is called, which is when the handling has ended and
// before it is settled: stop returns once no renewal is in flight, so
// none takes the claim again after settle releases it. A renewal the
// store fails is logged and tried again at the next tick, as the claim
// lasts until its hold passes. A claim lost for good (it lapsed and
// another handling took the tap, or it was confirmed) is logged and
// renewed no more: the tap may be handled twice, and the chokepoint
// records one answer of the two, which each handling's tapper is told.
func (a *Adapter) keep(ctx context.Context, g core.Sighting) (stop func()) {
	if !g.First() || a.opts.WebhookSecret == "" {
		return func() {}
	}
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-a.renewTick():
			}
			if !a.renew(ctx, g) {
				return
			}
		}
	}()
	return func() { close(quit); <-ended }
}

// renew renews claim g once, on a budget of its hold (a renewal that
// comes later is of no use), and reports whether to go on renewing it.
func (a *Adapter) renew(ctx context.Context, g core.Sighting) bool {
	rctx, cancel := context.WithTimeout(ctx, tapHold)
	defer cancel()
	st, err := g.Renew(rctx)
	switch {
	case err != nil:
		a.log.Warn().Err(err).Msg("telegram: a tap's claim could not be renewed while it is handled; should it lapse, a copy Telegram sends again is handled beside it, and one answer of the two is recorded")
		return true
	case st != core.OnceClaimed:
		a.log.Warn().Stringer("claim", st).Msg("telegram: a tap's claim lapsed while it was handled, and the tap was taken by another handling; one answer of the two is recorded, and its tapper told of it")
		return false
	}
	return true
}
