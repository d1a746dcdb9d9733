package discord

import (
	"time"

	"github.com/askbridge/askbridge/core"
)

// Discord's limits as budgets every replica spends from (core.Budget):
// the message limit per channel (five per five seconds), spread to one a
// second, and the global limit of fifty requests a second per bot, which
// counts every replica's requests together (interaction callbacks apart).
// discordgo's own limiter still follows the per-route buckets each
// response's headers announce, within one process, and the adapter's
// token bucket (Options.RatePerSecond) keeps each process under the
// global limit on its own.
var (
	channelBudget = core.Limit{Rate: 5, Per: 5 * time.Second}
	globalBudget  = core.Limit{Rate: 50, Per: time.Second}
)

var _ core.Budgeted = (*Adapter)(nil)

// Budgets names what a delivery spends: the bot as a whole once for each
// REST request the delivery makes, and the channel it posts in or edits.
// A post into a person's DM room opens (or finds) the DM channel first,
// a request of its own, so it spends the bot's budget twice. The bot's
// budget comes first: it comes round every 20 ms, so core waits for it in
// place rather than handing the delivery back.
func (a *Adapter) Budgets(d core.Delivery) []core.Allowance {
	room := d.Room
	if d.Message != nil && room == "" {
		room = d.Message.Room
	}
	out := []core.Allowance{{Key: "discord:all", Limit: globalBudget}}
	if _, dm := core.DMUser(room); dm && d.Kind != core.DeliverUpdate {
		out = append(out, core.Allowance{Key: "discord:all", Limit: globalBudget})
	}
	return append(out, core.Allowance{Key: "discord:channel:" + room, Limit: channelBudget})
}
