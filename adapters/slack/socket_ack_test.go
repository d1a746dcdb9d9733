package slack_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestSocketClickAckedOnceRecorded: a click over Socket Mode is
// acknowledged only once its answer is in the store. Before, it was
// acknowledged on arrival and handled after: a replica that died in
// between (a deploy's kill) lost the click, and Slack, which sends an
// acknowledged envelope once and shows its clicker no error, told no one.
func TestSocketClickAckedOnceRecorded(t *testing.T) {
	// The ack budget outlasts every wait below: only the answer lets
	// the click's ack go.
	e := newEnvWith(t, true, func(o *slack.Options) { o.AckBudget = 10 * wait })
	e.until("a socket mode connection", func() bool { return e.fake.Connections() > 0 })
	q := e.ask(decision())
	card := e.card(q.ID)

	release := e.fake.Hold("usergroups.users.list") // the click reads the route's group
	defer release()
	clk, err := e.fake.SendEnvelope("interactive", slackfake.ClickPayload(alice, card, button(t, card, core.RefOption, -1, 1)), wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the click's handling to wait on Slack", func() bool { return e.fake.Calls("usergroups.users.list") > 0 })
	// Acks go out on the one connection in the order they are sent: the
	// later envelope's ack in hand, the click's would be too, had it
	// been sent on arrival.
	later, err := e.fake.SendEnvelope("slash_commands", []byte(`{"command":"/x"}`), wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the later envelope's ack", func() bool { return e.fake.Acked(later) })
	if e.fake.Acked(clk) {
		t.Fatal("the click was acknowledged before its answer was recorded")
	}
	release()
	e.until("the click's ack", func() bool { return e.fake.Acked(clk) })
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" {
		t.Fatalf("the click was acknowledged with its question %s %+v", got.State, got.Resolution)
	}
	if note := e.note(alice, 0); !strings.Contains(note, "DynamoDB") {
		t.Errorf("the clicker was told %q", note)
	}
}

// TestSocketEventRetryIsHandled: Socket Mode keeps the promise the
// Events endpoint keeps with its 503. A thread reply whose handling
// failed on the store is left unacknowledged, its claim released and its
// writer told nothing, and Slack's retry of it is recorded; one whose
// handling is still in hand (the replica died with it) is not
// acknowledged either, a retry meeting its claim is left for the next,
// and the one after the claim lapsed is recorded. Before, every event was
// acknowledged on arrival and its failure told as final, so Slack sent
// none again: the reply was lost with the replica, or its writer asked to
// write it again.
func TestSocketEventRetryIsHandled(t *testing.T) {
	for name, fail := range map[string]error{
		"dead handler":  nil,
		"store failure": core.Internal("get", errors.New("the store is failing over")),
	} {
		t.Run(name, func(t *testing.T) {
			ahead := core.NewSimClock(time.Time{})
			now := func() time.Time { return time.Now().Add(ahead.Now().Sub(time.Time{})) }
			st := &claims{StallStore: newDeafStall(coretest.OpenStoreOn(t, now)), seen: make(chan string, 16)}
			e := newSocketEnvOnStore(t, st, func(o *slack.Options) { o.AckBudget = 10 * wait })
			t.Cleanup(st.Free) // before the env's, which stops the adapter
			q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
			card := e.card(q.ID)

			st.Arm(q.ID, fail)
			body, _ := e.fake.ReplyEvent(e.fake.AddReply(card.Channel, card.TS, alice.ID, "eu-west-1"))
			first, err := e.fake.SendEnvelope("events_api", body, wait)
			if err != nil {
				t.Fatal(err)
			}
			st.want(t, "claimed")
			<-st.Entered()
			if fail != nil {
				st.want(t, "released")
			} else {
				later, err := e.fake.SendEnvelope("slash_commands", []byte(`{"command":"/x"}`), wait)
				if err != nil {
					t.Fatal(err)
				}
				e.until("the later envelope's ack", func() bool { return e.fake.Acked(later) })
				retry, err := e.fake.SendRetry("events_api", body, 1, wait)
				if err != nil {
					t.Fatal(err)
				}
				st.want(t, "held")
				if e.fake.Acked(retry) {
					t.Error("a retry met by another handling's claim was acknowledged: Slack sends it no more")
				}
				ahead.Advance(time.Minute) // Slack's pause before its next try; the claim lapses
			}
			if e.fake.Acked(first) {
				t.Fatal("an event whose handling did not end was acknowledged: Slack sends it no more")
			}
			retry, err := e.fake.SendRetry("events_api", body, 2, wait)
			if err != nil {
				t.Fatal(err)
			}
			st.want(t, "claimed")
			st.want(t, "confirmed")
			e.until("the retry's ack", func() bool { return e.fake.Acked(retry) })
			if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
				t.Fatalf("the reply: %s %+v", got.State, got.Resolution)
			}
			if note := e.note(alice, 0); !strings.HasPrefix(note, "Recorded") {
				t.Errorf("the replier's first note is %q", note)
			}
		})
	}
}

// TestSocketEventLastRetryFailureIsTold: a reply whose handling fails on
// the store at Slack's last retry is acknowledged and its writer told to
// write it again, as no retry follows.
func TestSocketEventLastRetryFailureIsTold(t *testing.T) {
	st := &claims{StallStore: newDeafStall(coretest.OpenStore(t)), seen: make(chan string, 16)}
	e := newSocketEnvOnStore(t, st, func(o *slack.Options) { o.AckBudget = 10 * wait })
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	card := e.card(q.ID)
	st.Arm(q.ID, core.Internal("get", errors.New("the store is failing over")))
	body, _ := e.fake.ReplyEvent(e.fake.AddReply(card.Channel, card.TS, alice.ID, "eu-west-1"))
	last, err := e.fake.SendRetry("events_api", body, 3, wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the last retry's ack", func() bool { return e.fake.Acked(last) })
	if note := e.note(alice, 0); !strings.Contains(note, "try again") {
		t.Errorf("the replier was told %q", note)
	}
}

// TestSocketEventAckedAtTheDeadline: an event whose handling runs past
// the ack budget is acknowledged then, within Slack's 3 s (so Slack
// neither retries it at once nor counts it failed), and its handling
// goes on to record it.
func TestSocketEventAckedAtTheDeadline(t *testing.T) {
	st := &claims{StallStore: newDeafStall(coretest.OpenStore(t)), seen: make(chan string, 16)}
	e := newSocketEnvOnStore(t, st, func(o *slack.Options) { o.AckBudget = 200 * time.Millisecond })
	t.Cleanup(st.Free)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	card := e.card(q.ID)
	st.Arm(q.ID, nil)
	body, _ := e.fake.ReplyEvent(e.fake.AddReply(card.Channel, card.TS, alice.ID, "eu-west-1"))
	env, err := e.fake.SendEnvelope("events_api", body, wait)
	if err != nil {
		t.Fatal(err)
	}
	<-st.Entered()
	if !e.fake.WaitFor(slackAckWindow, func() bool { return e.fake.Acked(env) }) {
		t.Fatalf("an event whose handling runs long was not acknowledged within %s", slackAckWindow)
	}
	st.Free()
	e.until("the reply's answer", func() bool { return e.get(q.ID).State == core.StateAnswered })
}

// claims is a StallStore that reports, in order, what became of the
// inbound claims taken on it: "claimed", "held" or "done" for each
// ClaimOnce, then "confirmed" or "released".
type claims struct {
	*coretest.StallStore
	seen chan string
}

func (c *claims) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	s, err := c.StallStore.ClaimOnce(ctx, key, holder, hold)
	if err == nil {
		c.seen <- s.String()
	}
	return s, err
}

func (c *claims) ConfirmOnce(ctx context.Context, key, holder string, ttl time.Duration) error {
	err := c.StallStore.ConfirmOnce(ctx, key, holder, ttl)
	c.seen <- "confirmed"
	return err
}

func (c *claims) ReleaseOnce(ctx context.Context, key, holder string) error {
	err := c.StallStore.ReleaseOnce(ctx, key, holder)
	c.seen <- "released"
	return err
}

// want fails t unless the next thing seen of a claim is what.
func (c *claims) want(t *testing.T, what string) {
	t.Helper()
	select {
	case got := <-c.seen:
		if got != what {
			t.Fatalf("the claim was %s, want %s", got, what)
		}
	case <-time.After(wait):
		t.Fatalf("the claim was not %s within %s", what, wait)
	}
}

// newSocketEnvOnStore is newEnvOnStore on Socket Mode alone, its options
// changed by set.
func newSocketEnvOnStore(t *testing.T, st core.Store, set func(*slack.Options)) *env {
	t.Helper()
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {alice.ID}}},
	}})
	fake := slackfake.New()
	fake.AddUser(alice)
	o := slack.Options{BotToken: "xoxb-test", AppToken: "xapp-test",
		APIURL: strings.TrimSuffix(fake.APIURL(), "/"), PingInterval: 5 * time.Second}
	set(&o)
	a, err := slack.New(svc, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	wg.Go(func() { _ = loops.Deliver(ctx, svc, a, loops.DeliverOptions{Block: 20 * time.Millisecond}) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		fake.Close()
	})
	e := &env{t: t, fake: fake, svc: svc, a: a}
	e.until("auth.test's answer", e.a.KnowsItself)
	e.until("a socket mode connection", func() bool { return fake.Connections() > 0 })
	return e
}
