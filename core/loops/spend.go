package loops

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// spend takes d's sends from every budget its courier names, and reports
// how long d must wait instead (0: go ahead). It first asks the budgets
// after the first whether they have a send within the time d may wait
// for each in its lane (hold), spending nothing, and waits here for the
// latest of them; one further off hands d back to the outbox having
// spent nothing. A bot-wide budget spent for a room that was not due is
// a send lost for everyone: after Telegram's downtime, thirty chats at
// one message a second fill the bot's thirty a second exactly, so every
// send lost so is time lost (issue 31). Then it spends them in order; a
// budget that has a send again within its hold is waited for here, and
// only it is spent again. If the store cannot say, the send goes ahead:
// the platform's own 429 is the backstop. A delivery handed back waits
// its turn among those handed back before it for the same budget
// (handBacks).
func (s *drain) spend(ctx context.Context, budgets core.Budgeted, d core.Delivery, o DeliverOptions, hb *handBacks) time.Duration {
	if budgets == nil {
		return 0
	}
	as := budgets.Budgets(d)
	if len(as) > 1 {
		if wait := s.dueLater(ctx, as[1:], d, o, hb); wait > 0 {
			return wait
		}
	}
	for _, a := range as {
		for {
			wait, err := o.Budget.Spend(ctx, a.Key, a.Limit)
			if err != nil {
				o.OnError(d, core.Internal("budget", err))
				return 0
			}
			if wait == 0 {
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

// dueLater waits in the lane until every one of as has a send, if each
// has one within its hold, and reports 0; otherwise it reports how long
// d is to wait in the outbox. Nothing is spent. A budget that another
// lane or replica spends meanwhile is asked again, at most a few times:
// the spends that follow wait for it in any case.
func (s *drain) dueLater(ctx context.Context, as []core.Allowance, d core.Delivery, o DeliverOptions, hb *handBacks) time.Duration {
	for range 4 {
		longest := time.Duration(0)
		for _, a := range as {
			wait, err := o.Budget.Until(ctx, a.Key, a.Limit)
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
