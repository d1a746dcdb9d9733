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

// Allowance names one budget a delivery spends from and the limit that
// budget keeps: a room, a method tier, the bot as a whole.
type Allowance struct {
	Key   string // namespaced by the platform, e.g. "telegram:chat:-1001"
	Limit Limit
}

// Budget is the send budget shared by every replica, kept in the store
// (law: what replicas share lives in the store), so N replicas together
// send into one room at the platform's rate, not N times it.
type Budget interface {
	// Spend takes one send from key's budget under l, if the budget has
	// one now, and reports 0; otherwise it takes nothing and reports how
	// long until it will.
	Spend(ctx context.Context, key string, l Limit) (wait time.Duration, err error)
}

// Budgeted is a Courier that names the budgets each delivery spends from.
// The drain (core/loops' Deliver) spends from every one before it sends;
// a delivery whose budget is spent waits in the outbox, and the
// deliveries of other rooms go on. It spends them in the order Budgets
// lists them, and waits in place for one that has a send again within a
// moment (loops' budgetWait); a delivery handed back to the outbox has spent those before the one that
// sent it back for nothing.
type Budgeted interface {
	Budgets(d Delivery) []Allowance
}
