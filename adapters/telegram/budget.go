package telegram

import (
	"context"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Telegram's published send limits, as budgets every replica spends from
// (core.Budget): one message a second per chat, twenty a minute per group,
// thirty a second in all. Bursts are 1, so no second ever holds more than
// one message into a chat or more than thirty in all, and no minute more
// than twenty into a group, whatever the number of replicas.
var (
	chatBudget   = core.Limit{Rate: 1, Per: time.Second}
	groupBudget  = core.Limit{Rate: 20, Per: time.Minute}
	globalBudget = core.Limit{Rate: 30, Per: time.Second}
)

// chatHold is how long a delivery waits in its lane for its chat's
// budget (core.Allowance.Hold): one second, the chat's whole period.
// After downtime every chat has messages queued and the bot's thirty a
// second is filled by thirty chats' one each, so a delivery handed back
// to the outbox for a chat due within the second came back out of turn
// and left the bot's sends idle meanwhile (issue 31: the drain at 74-93 %
// of Telegram's rate on Redis, run to run). The wait holds up its lane
// alone: the drain claims the next batch meanwhile (core/loops).
const chatHold = time.Second

var _ core.Budgeted = (*Adapter)(nil)

// Budgets names what a delivery spends: the bot as a whole, its group
// (chats with negative ids are groups), and its chat, which core spends
// in that order. The bot's budget comes first because it comes round
// every 33 ms, so core waits for it in place rather than handing the
// delivery back (core.Budgeted); the chat's comes last, so the message
// follows its chat's grant at once and the chat's messages stay a second
// apart however long the wait for the bot's budget was. The group limit
// is on messages sent, so an edit of a card spends only from its chat
// and the whole: the card shows its outcome a second after a click, not
// three. Core asks the chat's budget (and the group's) before it spends
// the bot's, and a delivery waits in its lane for its chat's next second
// (chatHold) rather than going back to the outbox.
func (a *Adapter) Budgets(d core.Delivery) []core.Allowance {
	out := []core.Allowance{{Key: "telegram:all", Limit: globalBudget}}
	room := d.Room
	if d.Message != nil && room == "" {
		room = d.Message.Room
	}
	// A private chat's id is its user's, and a topic's messages are its
	// chat's: Telegram's limits are per chat (parseRoom). A room that
	// names no chat is refused at its send.
	to, err := parseRoom(room)
	if err != nil {
		return out
	}
	chat := strconv.FormatInt(to.chat, 10)
	if to.chat < 0 && d.Kind != core.DeliverUpdate {
		out = append(out, core.Allowance{Key: "telegram:group:" + chat, Limit: groupBudget})
	}
	return append(out, core.Allowance{Key: "telegram:chat:" + chat, Limit: chatBudget, Hold: chatHold})
}

// spendShared takes one new message into chat from the shared budgets
// (Options.Budget), the ones the drain spends for a card (Budgets),
// waiting until each has a send or ctx ends. The drain spends one message
// a delivery; this is for what the adapter sends beyond that: a
// clarification's reply prompt after its card, and the prompts and notes
// that answer taps. Without it each clarification in a group would be two
// messages against one of the group's twenty a minute, and the prompt
// Telegram then refuses would be lost. Every budget is asked first,
// spending nothing, so a wait for one (a group's next send is up to three
// seconds away) spends nothing of the bot's meanwhile. If the store
// cannot say, the message goes ahead, as the drain's do: Telegram's own
// 429 is the backstop.
func (a *Adapter) spendShared(ctx context.Context, chat int64) error {
	if a.opts.Budget == nil {
		return nil
	}
	as := a.Budgets(core.Delivery{Kind: core.DeliverPost, Room: strconv.FormatInt(chat, 10)})
	for {
		longest := time.Duration(0)
		for _, al := range as {
			wait, err := a.opts.Budget.Until(ctx, al.Key, al.Limit)
			if err != nil {
				return ctx.Err()
			}
			longest = max(longest, wait)
		}
		if longest == 0 {
			break
		}
		if !a.sleep(ctx, longest) {
			return ctx.Err()
		}
	}
	for _, al := range as {
		for {
			wait, err := a.opts.Budget.Spend(ctx, al.Key, al.Limit)
			if err != nil {
				return ctx.Err()
			}
			if wait == 0 {
				break
			}
			if !a.sleep(ctx, wait) {
				return ctx.Err()
			}
		}
	}
	return nil
}
