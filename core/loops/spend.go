package loops

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// spend takes d's sends from every budget its courier names, and reports
// how long d must wait instead (0: go ahead). The drain has asked them
// first (dueLater), spending nothing, so they rarely refuse here; it
// spends them in order, and a budget that has a send again within its
// hold is waited for here, and only it is spent again. If the store
// cannot say, the send goes ahead: the platform's own 429 is the
// backstop; but not once ctx has ended (handBackNow). A delivery handed
// back waits its turn among those handed back before it for the same
// budget (handBacks). Each budget spent is added to spent, for refund.
func (s *drain) spend(ctx context.Context, budgets core.Budgeted, d core.Delivery, o DeliverOptions, hb *handBacks, spent *[]core.Allowance) time.Duration {
	if budgets == nil {
		return 0
	}
	for _, a := range budgets.Budgets(d) {
		for {
			wait, err := o.Budget.Spend(ctx, a.Key, a.Limit)
			if err != nil && ctx.Err() != nil {
				return handBackNow // stopping (stop.go)
			}
			if err != nil {
				o.OnError(d, core.Internal("budget", err))
				return 0
			}
			if wait == 0 {
				*spent = append(*spent, a)
				break
			}
			if wait > hold(a) {
				return hb.wait(a.Key, a.Limit, wait, s.svc.Now())
			}
			if !Sleep(ctx, wait) {
				return wait
			}
		}
	}
	return 0
}

// refund gives back what the gate's last pass spent (spent) for an
// attempt that made no request at all: the gate's own hand-back (a
// budget after those spent had no send), or a courier's core.Unspent
// (Discord's route had none left in this process). So a send the
// platform never counted is not lost to every replica's rate: kept,
// each such hand-back lowered the room's and the bot's budgets as a
// send would. A budget that cannot give back (no core.Refunder) keeps
// them, and so does a stopping drain, whose hand-backs come first
// (stop.go).
func refund(ctx context.Context, d core.Delivery, o DeliverOptions, spent []core.Allowance) {
	r, ok := o.Budget.(core.Refunder)
	if !ok || len(spent) == 0 || ctx.Err() != nil {
		return
	}
	for _, a := range spent {
		if err := r.Refund(ctx, a.Key, a.Limit); err != nil {
			if ctx.Err() == nil {
				o.OnError(d, core.Internal("refund", err))
			}
			return
		}
	}
}

// dueLater waits in the lane until every one of as has a send, if each
// has one within its hold, and reports 0; otherwise it reports how long
// d is to wait in the outbox. Nothing is spent: a delivery sent back to
// the outbox has spent nothing of its other budgets. A bot-wide budget
// spent for a room that was not due is a send lost for everyone: after
// Telegram's downtime, thirty chats at one message a second fill the
// bot's thirty a second exactly, so every send lost so is time lost
// (issue 31). A budget that another lane or replica spends meanwhile is
// asked again, at most a few times: the spends that follow wait for it
// in any case.
//
// A delivery waiting here has its budgets' answer (it goes once they
// have a send), so granted is called before the wait: the next batch is
// claimed meanwhile rather than after it, and the bot-wide budget is not
// left idle behind one chat's second.
func (s *drain) dueLater(ctx context.Context, as []core.Allowance, d core.Delivery, o DeliverOptions, hb *handBacks, granted func()) time.Duration {
	for range 4 {
		longest := time.Duration(0)
		for _, a := range as {
			wait, err := o.Budget.Until(ctx, a.Key, a.Limit)
			if err != nil && ctx.Err() != nil {
				return handBackNow // stopping (stop.go)
			}
			if err != nil {
				o.OnError(d, core.Internal("budget", err))
				return 0
			}
			if wait > hold(a) {
				return hb.wait(a.Key, a.Limit, wait, s.svc.Now())
			}
			longest = max(longest, wait)
		}
		if longest == 0 {
			return 0
		}
		granted()
		if !Sleep(ctx, longest) {
			return longest
		}
	}
	return 0
}

// hold is how long a delivery waits in its lane for a's budget rather
// than back in the outbox: a's own Hold, or budgetWait.
func hold(a core.Allowance) time.Duration {
	if a.Hold > 0 {
		return a.Hold
	}
	return budgetWait
}

// budgetWait is the longest a delivery waits for a budget in its lane
// rather than back in the outbox unless the budget says otherwise
// (core.Allowance.Hold): a bot-wide budget of thirty a second comes
// round every 33 ms, while a room's (one a second) is left to the
// outbox, so that one room waiting never holds up another for long.
const budgetWait = 200 * time.Millisecond
