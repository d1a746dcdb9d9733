package discord

import (
	"time"

	"github.com/askbridge/askbridge/core"
)

// Discord's message limit per channel (five per five seconds), spread to
// one a second, as a budget every replica spends from (core.Budget).
// discordgo's own limiter still follows the per-route buckets each
// response's headers announce, within one process.
var channelBudget = core.Limit{Rate: 5, Per: 5 * time.Second}

var _ core.Budgeted = (*Adapter)(nil)

// Budgets names what a delivery spends: the channel it posts in or edits.
func (a *Adapter) Budgets(d core.Delivery) []core.Allowance {
	room := d.Room
	if d.Message != nil && room == "" {
		room = d.Message.Room
	}
	return []core.Allowance{{Key: "discord:channel:" + room, Limit: channelBudget}}
}
