package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("CloseEnqueuesItsWebhook", testCloseWebhook)
	register("CallbackOffTheAllowListStoresNothing", testCallbackRefused)
}

const hookPrefix = "https://hooks.example.test/askbridge/"

// webhookEnv is an env whose service allows callbacks under hookPrefix,
// with a route that names one for all its questions.
func webhookEnv(t *testing.T, h Harness) *env {
	e := newEnv(t, h)
	e.callbacks = core.CallbackPrefixes{hookPrefix}
	e.extra = map[string]core.Route{"hooked": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
		CallbackURL: hookPrefix + "route"}}
	e.svc = e.service()
	return e
}

// testCloseWebhook: every way a question closes (answer, decline, cancel,
// timeout, the end of its run) enqueues its webhook in the close's own
// atomic write, on the webhook outbox, under the key that stays its event
// id; a route's callback serves the questions that name none; a question
// without a callback enqueues none; and a repeated close adds nothing.
func testCloseWebhook(t *testing.T, h Harness) {
	e := webhookEnv(t, h)
	ctx := t.Context()
	own := func(run core.RunID) core.AskInput {
		in := clarification(run)
		in.CallbackURL = hookPrefix + "agent?run=" + string(run)
		return in
	}
	closes := []struct {
		name  string
		in    core.AskInput
		close func(q *core.Question)
		url   string
		state core.State
	}{
		{"answered", own("r-answer"), func(q *core.Question) {
			if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), Text: "eu-west-1"}); err != nil {
				t.Fatal(err)
			}
		}, hookPrefix + "agent?run=r-answer", core.StateAnswered},
		{"declined", own("r-decline"), func(q *core.Question) {
			if _, err := e.svc.Decline(ctx, q.ID, apiDecider("op")); err != nil {
				t.Fatal(err)
			}
		}, hookPrefix + "agent?run=r-decline", core.StateDeclined},
		{"cancelled", own("r-cancel"), func(q *core.Question) {
			if _, err := e.svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: agentDecider("agent-a")}); err != nil {
				t.Fatal(err)
			}
		}, hookPrefix + "agent?run=r-cancel", core.StateCancelled},
		{"expired", own("r-expire"), func(q *core.Question) {
			if _, err := e.svc.EndRun(ctx, core.Run{Agent: "agent-a", ID: "r-expire"}); err != nil {
				t.Fatal(err)
			}
		}, hookPrefix + "agent?run=r-expire", core.StateExpired},
		{"route's callback, timed out", func() core.AskInput {
			in := clarification("r-timeout")
			in.Route, in.Timeout = "hooked", time.Minute
			return in
		}(), func(q *core.Question) {
			e.clock.Advance(2 * time.Minute)
			if _, err := e.svc.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}, hookPrefix + "route", core.StateTimedOut},
	}
	for _, c := range closes {
		t.Run(c.name, func(t *testing.T) {
			q := e.ask(c.in)
			if got := e.get(q.ID).CallbackURL; got != c.url {
				t.Fatalf("stored callback %q, want %q", got, c.url)
			}
			if ds := e.claimAll(core.SurfaceWebhook, "w"); len(ds) != 0 {
				t.Fatalf("webhook enqueued while open: %+v", ds)
			}
			c.close(q)
			if st := e.get(q.ID).State; st != c.state {
				t.Fatalf("state %s, want %s", st, c.state)
			}
			ds := e.claimAll(core.SurfaceWebhook, "w")
			for i := range ds {
				ds[i].ID, ds[i].Attempts = "", 0
			}
			want := []core.Delivery{{Key: core.WebhookKey(q.ID), Kind: core.DeliverWebhook, Surface: core.SurfaceWebhook,
				Room: c.url, QuestionID: q.ID, Route: e.get(q.ID).Route, CreatedAt: e.clock.Now().UTC().Truncate(time.Millisecond)}}
			if diff := cmp.Diff(want, ds); diff != "" {
				t.Fatalf("webhook deliveries (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("none without a callback", func(t *testing.T) {
		q := e.ask(clarification("r-plain"))
		if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), Text: "x"}); err != nil {
			t.Fatal(err)
		}
		if ds := e.claimAll(core.SurfaceWebhook, "w"); len(ds) != 0 {
			t.Fatalf("a question without a callback enqueued %+v", ds)
		}
	})
}

// testCallbackRefused: a callback URL off the allow list (another host, a
// host that only starts the same, a path that only starts the same, not
// http) is refused at the ask with an error naming callback_url, and
// nothing is stored: no question, no event, no delivery.
func testCallbackRefused(t *testing.T, h Harness) {
	e := webhookEnv(t, h)
	for _, url := range []string{
		"https://elsewhere.example.test/askbridge/x",
		"https://hooks.example.test.evil.test/askbridge/x",
		"https://hooks.example.test/askbridge-other/x",
		"http://hooks.example.test/askbridge/x",
		"https://user:pw@hooks.example.test/askbridge/x",
		"ftp://hooks.example.test/askbridge/x",
		"not a url",
	} {
		in := clarification("r-refused")
		in.CallbackURL = url
		_, err := e.svc.Ask(t.Context(), in)
		if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "callback_url") {
			t.Errorf("%s: err %v, want invalid naming callback_url", url, err)
		}
	}
	open, _, err := e.store.ListOpen(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := e.store.Events(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 0 || len(evs) != 0 {
		t.Fatalf("a refused ask stored %d questions and %d events", len(open), len(evs))
	}
	for _, sf := range core.OutboxSurfaces {
		if ds := e.claimAll(sf, "w"); len(ds) != 0 {
			t.Fatalf("a refused ask enqueued %+v", ds)
		}
	}
}
