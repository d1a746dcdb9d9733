package slack_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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

// newDeafStall is a StallStore whose stalled read ignores its context,
// as the replica that died reading never hears of it.
func newDeafStall(st core.Store) *coretest.StallStore {
	s := coretest.NewStallStore(st)
	s.Deaf = true
	return s
}

// newEnvOnStore is newEnv (HTTP only) with the service over st.
func newEnvOnStore(t *testing.T, st core.Store) *env {
	t.Helper()
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {alice.ID}}},
	}})
	fake := slackfake.New()
	fake.AddUser(alice)
	a, err := slack.New(svc, slack.Options{BotToken: "xoxb-test", SigningSecret: secret,
		APIURL: strings.TrimSuffix(fake.APIURL(), "/")})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	wg.Go(func() { _ = loops.Deliver(ctx, svc, a, loops.DeliverOptions{Block: 20 * time.Millisecond}) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		srv.Close()
		fake.Close()
	})
	e := &env{t: t, fake: fake, svc: svc, a: a, srv: srv}
	e.until("auth.test's answer", e.a.KnowsItself)
	return e
}

// TestEventsRetryIsHandled: Slack sends an event again that it got no
// 2xx for (at once, a minute later, five minutes later). A thread reply
// whose handling died with its replica (killed between marking the event
// and recording the answer) is answered 503 while the dead one's claim
// lasts, and is recorded at Slack's next retry, once the claim has
// lapsed; one whose handling failed on the store is answered 503,
// unrecorded and untold, and recorded at the retry. Before, the event was
// marked seen before it was handled, and every retry was answered 200
// and dropped: the reply was lost, its writer told nothing, or told to
// write it again.
func TestEventsRetryIsHandled(t *testing.T) {
	for name, fail := range map[string]error{
		"dead replica":  nil,
		"store failure": core.Internal("get", errors.New("the store is failing over")),
	} {
		t.Run(name, func(t *testing.T) {
			ahead := core.NewSimClock(time.Time{})
			now := func() time.Time { return time.Now().Add(ahead.Now().Sub(time.Time{})) }
			st := newDeafStall(coretest.OpenStoreOn(t, now))
			e := newEnvOnStore(t, st)
			t.Cleanup(st.Free) // before the env's, which closes the server
			q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
			card := e.card(q.ID)

			st.Arm(q.ID, fail)
			body, _ := e.fake.ReplyEvent(e.fake.AddReply(card.Channel, card.TS, alice.ID, "eu-west-1"))
			send := func(retry int) int {
				req := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body)
				req.RetryNum = retry
				status, resp, err := req.Send(context.Background())
				if err != nil {
					t.Errorf("retry %d: %v", retry, err)
				}
				if status != http.StatusOK && status != http.StatusServiceUnavailable {
					t.Errorf("retry %d answered %d %q", retry, status, resp)
				}
				return status
			}
			first := make(chan int, 1)
			go func() { first <- send(0) }()
			<-st.Entered()
			if fail != nil {
				if status := <-first; status == http.StatusOK {
					t.Error("an event whose handling failed was answered 200: Slack sends it no more")
				}
			} else {
				t.Cleanup(func() { st.Free(); <-first })
			}
			for retry := 1; ; retry++ {
				if send(retry) == http.StatusOK {
					break
				}
				if retry == 3 {
					t.Fatal("Slack's last retry was refused")
				}
				ahead.Advance(time.Minute) // Slack's pause before its next try
			}
			e.until("the reply's answer", func() bool { return !e.get(q.ID).Open() })
			if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
				t.Fatalf("the reply: %s %+v", got.State, got.Resolution)
			}
			if note := e.note(alice, 0); !strings.HasPrefix(note, "Recorded") {
				t.Errorf("the replier's first note is %q", note)
			}
		})
	}
}

// TestEventsLastRetryFailureIsTold: a reply whose handling fails on the
// store at Slack's last retry is answered 200 and its writer told to
// write it again, as no retry follows.
func TestEventsLastRetryFailureIsTold(t *testing.T) {
	st := newDeafStall(coretest.OpenStore(t))
	e := newEnvOnStore(t, st)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	card := e.card(q.ID)
	st.Arm(q.ID, core.Internal("get", errors.New("the store is failing over")))
	body, _ := e.fake.ReplyEvent(e.fake.AddReply(card.Channel, card.TS, alice.ID, "eu-west-1"))
	req := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body)
	req.RetryNum = 3
	if status, resp, err := req.Send(t.Context()); err != nil || status != http.StatusOK {
		t.Fatalf("the last retry answered %d %q: %v", status, resp, err)
	}
	if note := e.note(alice, 0); !strings.Contains(note, "try again") {
		t.Errorf("the replier was told %q", note)
	}
}
