package core

import (
	"context"
	"time"
)

// Limit is a platform's send rate: Rate sends per Per, in bursts of at
// most Burst (Burst 0 means 1, so sends are spread evenly).
type Limit struct {
	Rate  int
	Per   time.Duration
	Burst int
}

// Check refuses, for op on key's budget, a limit no budget can keep: a
// store's Spend and Until check it before anything else.
func (l Limit) Check(op, key string) error {
	if l.Rate <= 0 || l.Per <= 0 {
		return Errorf(CodeInvalid, op, "limit for %q needs a positive rate and period", key)
	}
	return nil
}

// Allowance names one budget a delivery spends from and the limit that
// budget keeps: a room, a method tier, the bot as a whole.
type Allowance struct {
	Key   string // namespaced by the platform, e.g. "telegram:chat:-1001"
	Limit Limit
	// Hold is how long a delivery may wait in its lane for this budget
	// rather than go back to the outbox; 0 is the drain's default (loops'
	// budgetWait, a moment). A room that waits holds up its lane, and
	// after one more batch the drain's next claim, so only a platform
	// whose deliveries are paced by this budget in any case (Telegram's
	// chats, each one message a second, all sending at once after
	// downtime) sets it longer.
	Hold time.Duration
}

// Budget is the send budget shared by every replica, kept in the store
// (law: what replicas share lives in the store), so N replicas together
// send into one room at the platform's rate, not N times it.
type Budget interface {
	// Spend takes one send from key's budget under l, if the budget has
	// one now, and reports 0; otherwise it takes nothing and reports how
	// long until it will.
	Spend(ctx context.Context, key string, l Limit) (wait time.Duration, err error)
	// Until reports how long until key's budget under l has a send, and
	// spends nothing (0: it has one now). The drain asks a delivery's
	// later budgets before it spends the first, so a delivery that one of
	// them sends back to the outbox has spent nothing of the others (a
	// bot-wide send spent for a room that was not due is a send lost).
	Until(ctx context.Context, key string, l Limit) (wait time.Duration, err error)
}

// Refunder is a Budget that takes back a send spent for a request never
// made: the drain gives back what it spent for a delivery whose courier
// made no request at all (Unspent), so a send the platform never counted
// is not lost to every replica's rate. A refund never fills a budget
// past its burst: a send given back after the budget came round in any
// case is lost, as a send made then would have been.
type Refunder interface {
	// Refund gives one send back to key's budget under l, up to its
	// burst (a full budget stays full).
	Refund(ctx context.Context, key string, l Limit) error
}

// Unspent marks a Courier error for an attempt that made no request of
// the platform at all (Discord's route had no requests left in this
// process, and the request was held back): the platform counted no send,
// so the drain gives back the sends it spent for the attempt
// (Refunder). It goes inside the error that says what becomes of the
// delivery (a RetryAfter, a NotSent), and on its own says nothing of
// that. A platform's refusal (a 429, a 4xx) was a request: its send was
// spent, and stays spent.
type Unspent struct{ Err error }

func (e *Unspent) Error() string { return e.Err.Error() }
func (e *Unspent) Unwrap() error { return e.Err }

// Budgeted is a Courier that names the budgets each delivery spends from.
// The drain (core/loops' Deliver) spends from every one before it sends;
// a delivery whose budget is spent waits in the outbox, and the
// deliveries of other rooms go on. It spends them in the order Budgets
// lists them, after asking the later ones (Budget.Until) whether they
// have a send within the time it may wait in place for each
// (Allowance.Hold), so a delivery handed back to the outbox has spent
// none of them.
type Budgeted interface {
	Budgets(d Delivery) []Allowance
}
