package teams_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// What the outbox is told of the Bot Connector's answers: a wait, a
// failed attempt, a refusal for good, or an outcome unknown.

// TestErrorsTellTheOutbox: Teams' throttling is a wait, a refusal of the
// request is permanent, a passing failure a failed attempt. Before, a
// refusal other than 400, 401, 403 or 404 (a 413 for a message over
// Teams' size) was retried as if nothing were wrong with it, until the
// outbox gave up.
func TestErrorsTellTheOutbox(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	e.card(q.ID, nil) // the token is fetched by now
	ref := core.MessageRef{Surface: core.SurfaceTeams, Room: channel, Kind: core.DeliverPost}
	for _, c := range []struct {
		status int
		want   func(error) bool
	}{
		{http.StatusTooManyRequests, func(err error) bool { var ra *core.RetryAfter; return errors.As(err, &ra) && ra.After == time.Second }},
		{http.StatusForbidden, func(err error) bool { var p *core.Permanent; return errors.As(err, &p) }},
		// Too large, as Teams answers a message over its size: the same
		// card sent again is refused again.
		{http.StatusRequestEntityTooLarge, func(err error) bool { var p *core.Permanent; return errors.As(err, &p) }},
		// A timeout of the request alone: nothing posted, worth a retry.
		{http.StatusRequestTimeout, retriedAsAFailedAttempt},
		// Teams' "precondition failed" (concurrent operations on the
		// conversation): nothing posted, retried "with exponential
		// backoff", so each is a failed attempt, which the outbox waits
		// longer after each time. Before, it was a rate limit of a
		// second: sent again every second, uncounted, for a day.
		{http.StatusPreconditionFailed, retriedAsAFailedAttempt},
		// A 5xx may come after the thread was made: the outcome is
		// unknown, so the retry's card says it may be a repeat.
		{http.StatusInternalServerError, func(err error) bool { return err != nil && !told(err) }},
		{http.StatusGatewayTimeout, func(err error) bool { return err != nil && !told(err) }},
	} {
		e.fake.FailNext(c.status)
		_, err := e.a.Post(t.Context(), e.get(q.ID), ref)
		if !c.want(err) {
			t.Errorf("%d: %v (%T)", c.status, err, err)
		}
	}
}

// TestCardNotSentIsNotAPossibleRepeat: a post that failed before its
// card reached Teams says so, so that its retry's card is not marked as
// a possible repeat: here, a personal chat that could not be opened
// (Teams answered 5xx to creating it; the card was never sent). Before,
// the error read as of unknown outcome, and the card that followed said
// an earlier copy might be above it.
func TestCardNotSentIsNotAPossibleRepeat(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	e.card(q.ID, nil) // the token is fetched by now
	before := len(e.fake.Messages())
	e.fake.FailNext(http.StatusBadGateway)
	_, err := e.a.Post(t.Context(), e.get(q.ID), core.MessageRef{Surface: core.SurfaceTeams, Room: core.DMRoom(aliceAAD), Kind: core.DeliverPost})
	if err == nil || !told(err) {
		t.Fatalf("a card whose personal chat could not be opened: %v (%T), not reported as not sent", err, err)
	}
	if n := len(e.fake.Messages()); n != before {
		t.Fatalf("%d messages posted", n-before)
	}
}

// retriedAsAFailedAttempt reports whether err tells the outbox that
// nothing was posted and to retry it as a failed attempt: not a rate
// limit, which the outbox does not count, nor a refusal for good.
func retriedAsAFailedAttempt(err error) bool {
	var n *core.NotSent
	var ra *core.RetryAfter
	var p *core.Permanent
	return errors.As(err, &n) && !errors.As(err, &ra) && !errors.As(err, &p)
}

// told reports whether err tells the outbox the platform did not act
// (core's not-sent errors).
func told(err error) bool {
	var n *core.NotSent
	var ra *core.RetryAfter
	var p *core.Permanent
	return errors.As(err, &n) || errors.As(err, &ra) || errors.As(err, &p)
}

// TestBudgets: a delivery spends from its room's budget and the bot's.
func TestBudgets(t *testing.T) {
	e := newEnv(t)
	got := e.a.Budgets(core.Delivery{Kind: core.DeliverUpdate, Message: &core.MessageRef{Surface: core.SurfaceTeams, Room: channel, ID: "1"}})
	if len(got) != 2 || got[0].Key != "teams:all" || got[1].Key != "teams:conv:"+channel || got[1].Limit.Burst != 7 {
		t.Fatalf("budgets %+v", got)
	}
}
