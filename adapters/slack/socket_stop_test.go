package slack_test

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/logbuf"
)

// TestSocketStopAcksClicksInHand: stopped while clicks are being
// handled (here waiting on Slack to list a user group), the adapter
// keeps its Socket Mode connection up until their handling ends, so each
// click, its answer recorded, is acknowledged; clicks still waiting for
// a free handler are dropped, and their acks withheld, so Slack shows
// their clickers an error for clicks that did not count. Before, the
// connection closed at the stop, before the clicks in hand were
// answered: their acks had nowhere to go, and Slack showed an error
// mark beside a click that was recorded.
func TestSocketStopAcksClicksInHand(t *testing.T) {
	var logs logbuf.Buffer
	e, stop := socketOnlyWith(t, func(o *slack.Options) {
		o.AckBudget = wait // only the answers let the acks go
		o.Log = zerolog.New(&logs)
	})
	q := e.ask(decision())
	m, err := e.a.Post(t.Context(), q, core.MessageRef{Room: room, Kind: core.DeliverPost})
	if err != nil {
		t.Fatal(err)
	}
	card, _ := e.fake.Message(m.Room, m.ID)
	b := button(t, card, core.RefOption, -1, 1)

	release := e.fake.Hold("usergroups.users.list") // every click reads the route's group
	defer release()
	const clicks, handlers = 20, 16 // more clicks than may be handled at once
	var envs []string
	for range clicks {
		env, err := e.fake.SendEnvelope("interactive", slackfake.ClickPayload(alice, card, b), wait)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	e.until("every handler to wait on Slack", func() bool { return e.fake.Calls("usergroups.users.list") >= handlers })
	stop(func() {
		e.until("the adapter to see the stop", func() bool {
			return len(logs.Lines("acks in hand")) > 0 || e.fake.Connections() == 0
		})
		if e.fake.Connections() == 0 {
			t.Fatal("the Socket Mode connection was closed with clicks in hand: their acks cannot be sent")
		}
		release()
	})
	// Run has returned.
	acked := 0
	for _, env := range envs {
		if e.fake.Acked(env) {
			acked++
		}
	}
	if acked != handlers {
		t.Errorf("%d of %d clicks acknowledged; want the %d in hand at the stop, and none of those dropped", acked, clicks, handlers)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" {
		t.Errorf("the clicks in hand at the stop: %s %+v", got.State, got.Resolution)
	}
	e.until("the connection closed once the acks went", func() bool { return e.fake.Connections() == 0 })
}
