package email

import (
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Send budgets, kept in the store so that every replica together stays
// within them (core.Budget): one message a second to one room (a route's
// recipient, or a person's own copies) after a burst of three, so a burst
// of questions reaches an inbox as a trickle rather than a flood a spam
// filter notices, and ten a second in all, what common relays take
// from one sender without throttling. A delivery over budget waits in the
// outbox; other recipients go on.
var (
	recipientBudget = core.Limit{Rate: 1, Per: time.Second, Burst: 3}
	allBudget       = core.Limit{Rate: 10, Per: time.Second}
)

var _ core.Budgeted = (*Adapter)(nil)

// Budgets names what a delivery spends. An update sends nothing (mail is
// not edited), so it spends nothing.
func (a *Adapter) Budgets(d core.Delivery) []core.Allowance {
	if d.Kind == core.DeliverUpdate || d.Room == "" {
		return nil
	}
	return []core.Allowance{
		{Key: "email:all", Limit: allBudget},
		{Key: "email:to:" + strings.ToLower(d.Room), Limit: recipientBudget},
	}
}
