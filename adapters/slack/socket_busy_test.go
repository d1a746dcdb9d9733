package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// slackAckWindow is how long Slack waits for a Socket Mode envelope's
// acknowledgement before it shows the clicker an error (and, for an
// event, sends it again).
const slackAckWindow = 3 * time.Second

// shortAckBudget sets an ack budget well inside slackAckWindow: a click
// or event whose handling waits is acknowledged then (heldAck).
func shortAckBudget(o *slack.Options) { o.AckBudget = time.Second }

// TestSocketAcksWhileEveryHandlerWaits: with every handler slot held by
// clicks whose handling waits (Slack slow to list a user group, as it
// would be on a slow store), envelopes that arrive meanwhile are still
// acknowledged within Slack's 3 s, and once the wait ends every click is
// answered: the question closes once, and the clicker hears of every click. Before,
// the read loop waited for a free slot, so from the 18th envelope on
// nothing was acknowledged until a handler finished (up to 10 s): the
// clicker saw Slack's error for a click that later counted. Each click's
// ack waits for its answer no longer than the ack budget (heldAck), here
// a short one, so that a loaded machine's delays cannot pass for the
// adapter's.
func TestSocketAcksWhileEveryHandlerWaits(t *testing.T) {
	e := newEnvWith(t, true, shortAckBudget)
	e.until("a socket mode connection", func() bool { return e.fake.Connections() > 0 })
	q := e.ask(decision())
	card := e.card(q.ID)
	b := button(t, card, core.RefOption, -1, 1)

	release := e.fake.Hold("usergroups.users.list") // every click reads the route's group
	defer release()
	const busy = 40 // more than the handlers that may run at once
	var envs []string
	for range busy {
		env, err := e.fake.SendEnvelope("interactive", slackfake.ClickPayload(alice, card, b), wait)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	last := envs[len(envs)-1]
	if !e.fake.WaitFor(slackAckWindow, func() bool { return e.fake.Acked(last) }) {
		t.Fatalf("envelope %d of %d not acknowledged within %s while handlers wait on Slack", busy, busy, slackAckWindow)
	}
	release()
	e.until("every click handled", func() bool { return e.notesTo(alice) == busy })
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" {
		t.Fatalf("after the clicks: %s %+v", got.State, got.Resolution)
	}
}

// TestSocketStopsWhileHandlersWait: stopped while every handler slot is
// held and envelopes wait behind them, the adapter's Run returns once
// the held work ends. Before, the read loop went on taking the envelopes
// it had buffered after the client stopped, and acknowledged each with
// no bound: with nothing left to send acks, the 21st blocked the loop,
// and Run (and the program's shutdown) waited for good.
func TestSocketStopsWhileHandlersWait(t *testing.T) {
	e, stop := socketOnly(t)
	q := e.ask(decision())
	m, err := e.a.Post(t.Context(), q, core.MessageRef{Room: room, Kind: core.DeliverPost})
	if err != nil {
		t.Fatal(err)
	}
	card, _ := e.fake.Message(m.Room, m.ID)
	b := button(t, card, core.RefOption, -1, 1)

	release := e.fake.Hold("usergroups.users.list")
	defer release()
	for range 60 {
		if _, err := e.fake.SendEnvelope("interactive", slackfake.ClickPayload(alice, card, b), wait); err != nil {
			t.Fatal(err)
		}
	}
	e.until("the handlers to wait on Slack", func() bool { return e.fake.Calls("usergroups.users.list") >= 16 })
	stop(release)
}

// TestSocketSubmitWithNoFreeHandlerIsToldToRetry: an edit modal submitted
// while every handler slot stays held is acknowledged within Slack's 3 s
// with the modal's error (try again), and nothing is recorded: its
// answer rides on its ack, which Slack drops once late. Before, the
// read loop waited for a free slot and the submission was not even read.
func TestSocketSubmitWithNoFreeHandlerIsToldToRetry(t *testing.T) {
	e := newEnvWith(t, true, func(o *slack.Options) { o.AckBudget = 500 * time.Millisecond })
	e.until("a socket mode connection", func() bool { return e.fake.Connections() > 0 })
	call, view := e.editable()
	d := e.ask(decision())
	dcard := e.card(d.ID)
	b := button(t, dcard, core.RefOption, -1, 1)

	release := e.fake.Hold("usergroups.users.list")
	defer release()
	for range 20 {
		if _, err := e.fake.SendEnvelope("interactive", slackfake.ClickPayload(alice, dcard, b), wait); err != nil {
			t.Fatal(err)
		}
	}
	e.until("every handler slot held", func() bool { return e.fake.Calls("usergroups.users.list") >= 16 })
	sub, err := e.fake.SendEnvelope("interactive", slackfake.SubmitPayload(alice, view, map[string]string{"arguments": `{"q":"select 1"}`}), wait)
	if err != nil {
		t.Fatal(err)
	}
	if !e.fake.WaitFor(slackAckWindow, func() bool { return e.fake.Acked(sub) }) {
		t.Fatalf("the submission was not acknowledged within %s", slackAckWindow)
	}
	var resp struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(e.fake.AckPayload(sub), &resp); err != nil || resp.Action != "errors" || !strings.Contains(resp.Errors["arguments"], "try again") {
		t.Fatalf("the submission was acknowledged with %s (%v)", e.fake.AckPayload(sub), err)
	}
	release()
	e.until("the clicks' answer", func() bool { return e.get(d.ID).State == core.StateAnswered })
	if got := e.get(call.ID); got.State != core.StateOpen {
		t.Fatalf("a submission told to try again was recorded: %s %+v", got.State, got.Resolution)
	}
}

// socketOnly is the adapter on Socket Mode alone, its Run started; stop
// stops it, calls then, and fails the test unless Run returns.
func socketOnly(t *testing.T) (e *env, stop func(then func())) {
	t.Helper()
	return socketOnlyWith(t, nil)
}

// socketOnlyWith is socketOnly with the adapter's options changed by set
// first (nil changes nothing).
func socketOnlyWith(t *testing.T, set func(*slack.Options)) (e *env, stop func(then func())) {
	t.Helper()
	svc, _ := coretest.Open(t, coretest.Options{Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {alice.ID, "role:" + group}}},
	}})
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	fake.AddUser(alice)
	fake.SetGroup(group, bob.ID)
	o := slack.Options{BotToken: "xoxb-test", AppToken: "xapp-test",
		APIURL: strings.TrimSuffix(fake.APIURL(), "/"), PingInterval: 5 * time.Second}
	if set != nil {
		set(&o)
	}
	a, err := slack.New(svc, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ran := make(chan struct{})
	go func() { _ = a.Run(ctx); close(ran) }()
	e = &env{t: t, fake: fake, svc: svc, a: a}
	e.until("a socket mode connection", func() bool { return fake.Connections() > 0 })
	return e, func(then func()) {
		t.Helper()
		cancel()
		then()
		select {
		case <-ran:
		case <-time.After(wait):
			t.Fatal("Run did not return after it was stopped")
		}
	}
}

// TestSocketLossKeepsAcknowledgedWork: clicks acknowledged while every
// handler waits are still handled when the Socket Mode connection is
// lost for good meanwhile (its app token refused on reconnect): Slack
// sends an acknowledged envelope once, so work dropped with the
// connection would be clicks that counted nowhere, their clickers told
// nothing. The work outlives the connection, as the adapter does.
func TestSocketLossKeepsAcknowledgedWork(t *testing.T) {
	e := newEnvWith(t, true, shortAckBudget)
	e.until("a socket mode connection", func() bool { return e.fake.Connections() > 0 })
	q := e.ask(decision())
	card := e.card(q.ID)
	b := button(t, card, core.RefOption, -1, 1)

	release := e.fake.Hold("usergroups.users.list")
	defer release()
	const busy = 40
	var last string
	for range busy {
		env, err := e.fake.SendEnvelope("interactive", slackfake.ClickPayload(alice, card, b), wait)
		if err != nil {
			t.Fatal(err)
		}
		last = env
	}
	if !e.fake.WaitFor(slackAckWindow, func() bool { return e.fake.Acked(last) }) {
		t.Fatal("the clicks were not acknowledged")
	}
	opened := e.fake.Calls("apps.connections.open")
	e.fake.FailNext("apps.connections.open", slackfake.Failure{Error: "token_revoked"})
	e.fake.Disconnect()
	// The refused reconnect ends the connection's run; the adapter opens
	// another after its pause.
	e.until("a connection after the refused one", func() bool {
		return e.fake.Calls("apps.connections.open") >= opened+2 && e.fake.Connections() > 0
	})
	release()
	e.until("every acknowledged click handled", func() bool { return e.notesTo(alice) == busy })
}
