package loops_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// answerCourier answers every post with err, spending one room's budget.
type answerCourier struct {
	slackCourier
	budget core.Allowance
	err    error
}

func (c *answerCourier) Post(context.Context, *core.Question, core.MessageRef) (core.MessageRef, error) {
	return core.MessageRef{}, c.err
}

func (c *answerCourier) Budgets(core.Delivery) []core.Allowance { return []core.Allowance{c.budget} }

// TestNoRequestGivesItsSendsBack: a delivery whose courier made no
// request at all (core.Unspent: Discord's route had none left in the
// process) has the sends the drain spent for it given back to the
// shared budget, which the platform never counted; one the platform
// answered itself (its 429) keeps them, as a request it counted. Before,
// every hand-back kept its sends, lowering every replica's rate as if a
// request had gone out.
func TestNoRequestGivesItsSendsBack(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		back bool
	}{
		"no request":     {&core.RetryAfter{After: time.Hour, Err: &core.Unspent{Err: errors.New("route has none left")}}, true},
		"platform's 429": {&core.RetryAfter{After: time.Hour, Err: errors.New("429")}, false},
	} {
		t.Run(name, func(t *testing.T) {
			st := &handBackCount{Store: coretest.OpenStore(t)}
			svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{"ops": {
				Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
				Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
			}}})
			if _, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "ops",
				ToolCallID: "t", Text: "Which?", Reversibility: core.Reversible, Timeout: time.Hour}); err != nil {
				t.Fatal(err)
			}
			room := core.Allowance{Key: "room:C1", Limit: core.Limit{Rate: 1, Per: time.Hour}}
			startDrain(t, svc, &answerCourier{budget: room, err: tc.err}, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, Budget: st})
			waitFor(t, "the card to be handed back", func() bool { return st.retries.Load() > 0 })
			wait, err := st.Until(t.Context(), room.Key, room.Limit)
			if err != nil {
				t.Fatal(err)
			}
			if back := wait == 0; back != tc.back {
				t.Fatalf("the room's budget has a send again: %v (next in %s); want %v", back, wait, tc.back)
			}
		})
	}
}

// busyAtSpend is the embedded store as the send budget, except that
// budget busy is found spent at the spend (another replica took its
// send between the drain's ask and its spend), though the ask (Until)
// found it due.
type busyAtSpend struct {
	handBackCount
	busy string
}

func (s *busyAtSpend) Until(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	if key == s.busy {
		return 0, nil
	}
	return s.Store.Until(ctx, key, l)
}

func (s *busyAtSpend) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	if key == s.busy {
		return time.Hour, nil
	}
	return s.Store.Spend(ctx, key, l)
}

// twoBudgets names a room's budget and then the bot's for every
// delivery, and counts its posts.
type twoBudgets struct {
	slackCourier
	room, bot core.Allowance
	posts     atomic.Int32
}

func (c *twoBudgets) Post(_ context.Context, _ *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.posts.Add(1)
	card.ID = "m1"
	return card, nil
}

func (c *twoBudgets) Budgets(core.Delivery) []core.Allowance { return []core.Allowance{c.room, c.bot} }

// TestAHandBackAtTheGateGivesItsSendsBack: a delivery whose gate spent
// one budget (the room's) and then found the next one (the bot's) spent
// by another replica is handed back without a request, so the room's
// send is given back: before, it was kept, and the room waited a whole
// interval for a send that never went out.
func TestAHandBackAtTheGateGivesItsSendsBack(t *testing.T) {
	room := core.Allowance{Key: "room:C1", Limit: core.Limit{Rate: 1, Per: time.Hour}}
	bot := core.Allowance{Key: "bot", Limit: core.Limit{Rate: 30, Per: time.Second}}
	st := &busyAtSpend{handBackCount: handBackCount{Store: coretest.OpenStore(t)}, busy: bot.Key}
	svc := onSlackC1(t, st)
	c := &twoBudgets{room: room, bot: bot}
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, Budget: st})
	askOps(t, svc, "toolu_1")
	waitFor(t, "the card to be handed back", func() bool { return st.retries.Load() > 0 })
	if n := c.posts.Load(); n != 0 {
		t.Fatalf("%d posts went out past a spent budget", n)
	}
	if wait, err := st.Until(t.Context(), room.Key, room.Limit); err != nil || wait != 0 {
		t.Fatalf("the room's budget: next send in %s, %v; want its send given back", wait, err)
	}
}
