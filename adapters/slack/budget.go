package slack

import (
	"time"

	"github.com/askbridge/askbridge/core"
)

// Slack's limits as budgets every replica spends from (core.Budget):
// chat.postMessage allows about one message a second per channel, and
// chat.update is a Tier 3 method (about 50 a minute per workspace).
var (
	channelBudget = core.Limit{Rate: 1, Per: time.Second}
	updateBudget  = core.Limit{Rate: 50, Per: time.Minute}
)

var _ core.Budgeted = (*Adapter)(nil)

// Budgets names what a delivery spends: an edit spends from the update
// tier, anything posted from its channel.
func (a *Adapter) Budgets(d core.Delivery) []core.Allowance {
	if d.Kind == core.DeliverUpdate {
		return []core.Allowance{{Key: "slack:tier3:chat.update", Limit: updateBudget}}
	}
	return []core.Allowance{{Key: "slack:channel:" + d.Room, Limit: channelBudget}}
}
