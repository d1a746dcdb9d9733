package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// digestSender is a Slack courier that posts digests, failing the first
// with fail: posted says the platform posted that one anyway (its
// answer was lost), as a timeout may hide.
type digestSender struct {
	posted int
	fail   error
	sent   bool // whether the failed send was posted all the same
}

func (*digestSender) Surface() core.Surface { return core.SurfaceSlack }
func (*digestSender) Post(_ context.Context, _ *core.Question, m core.MessageRef) (core.MessageRef, error) {
	m.ID = "m1"
	return m, nil
}
func (*digestSender) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (*digestSender) Remind(context.Context, *core.Question, string) error          { return nil }
func (c *digestSender) Digest(context.Context, core.Digest, string) error {
	if err := c.fail; err != nil {
		c.fail = nil
		if c.sent {
			c.posted++
		}
		return err
	}
	c.posted++
	return nil
}

// awayDigest is the "while you were away" digest a service on cfg
// queues for Slack after two hours down with one question open, and
// the service.
func awayDigest(t *testing.T, cfg core.Config) (*core.Service, core.Delivery) {
	ctx := t.Context()
	st := coretest.OpenStore(t)
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(st, cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour)
	if rep, err := svc.Boot(ctx); err != nil || rep.Down == 0 {
		t.Fatalf("the boot after the downtime: %+v, %v", rep, err)
	}
	ds, err := st.Claim(ctx, core.SurfaceSlack, "c", 100, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Kind == core.DeliverDigest {
			return svc, d
		}
	}
	t.Fatalf("no digest queued among %+v", ds)
	return nil, core.Delivery{}
}

// roomDigests is a route whose digest goes to Slack room C1.
func roomDigests() core.Config {
	return reloadConfig(map[string]core.Route{"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
		Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}}}})
}

// personDigests is a route whose people get their digest as a direct
// message: carol, on Slack as U7.
func personDigests() core.Config {
	return core.Config{ActorKey: []byte("k"),
		Routes: map[string]core.Route{"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
			People: []string{"person:carol"}}},
		People: map[string]core.Person{"carol": {IDs: ids("slack", "U7"), DM: true}}}
}

// digestsAgain are the log's records of a digest posted again after an
// attempt that may have posted it.
func digestsAgain(t *testing.T, svc *core.Service) []core.Event {
	t.Helper()
	evs, err := svc.Events(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.Event
	for _, ev := range evs {
		p := string(ev.Payload)
		if ev.QuestionID == "" && strings.Contains(p, `"kind":"digest"`) && strings.Contains(p, `"repeat":true`) {
			out = append(out, ev)
		}
	}
	return out
}

// TestADigestSentAgainAfterAnUnknownOutcomeIsFlagged: a digest whose
// send ended with no answer from the platform (a timeout: it may have
// posted) is sent again at the retry, at least once, and the log says
// that this one may repeat an earlier copy in the room (law 4: never
// silently twice). Before, the claim was given back on any error and the
// retry went out as if it were the first; the person's digest's record
// names neither the person nor their account.
func TestADigestSentAgainAfterAnUnknownOutcomeIsFlagged(t *testing.T) {
	for name, cfg := range map[string]core.Config{"room": roomDigests(), "person": personDigests()} {
		t.Run(name, func(t *testing.T) {
			svc, d := awayDigest(t, cfg)
			c := &digestSender{fail: errors.New("context deadline exceeded"), sent: true}
			if err := svc.DeliverOne(t.Context(), c, d, nil); err == nil {
				t.Fatal("the send that timed out reported sent")
			}
			if err := svc.DeliverOne(t.Context(), c, d, nil); err != nil {
				t.Fatalf("the retry: %v", err)
			}
			got := digestsAgain(t, svc)
			if c.posted != 2 || len(got) != 1 {
				t.Fatalf("%d digests posted, %d flagged as posted again; want 2, the second flagged", c.posted, len(got))
			}
			ev := got[0]
			if ev.Kind != core.EventNotified || ev.Surface != core.SurfaceSlack || !strings.Contains(ev.Reason, "again") {
				t.Errorf("the repeat's event: kind %q, surface %q, reason %q", ev.Kind, ev.Surface, ev.Reason)
			}
			if p := string(ev.Payload); strings.Contains(p, "carol") {
				t.Errorf("the repeat's event names the person: %s", p)
			}
			// A copy of the same digest queued again (a later start's)
			// finds it posted.
			if err := svc.DeliverOne(t.Context(), c, d, nil); err != nil || c.posted != 2 {
				t.Errorf("the digest once posted was posted again: %d posted, %v", c.posted, err)
			}
		})
	}
}

// TestADigestNotSentIsNotFlagged: a digest the platform refused, or
// whose send budget said wait, was surely not posted, so its retry, the
// only copy in the room, is not flagged as a possible repeat.
func TestADigestNotSentIsNotFlagged(t *testing.T) {
	wait := func(context.Context) time.Duration { return time.Second }
	for name, try := range map[string]struct {
		fail error
		gate func(context.Context) time.Duration
	}{
		"refused":    {fail: &core.NotSent{Err: errors.New("channel_not_found")}},
		"rate limit": {fail: &core.RetryAfter{After: time.Second, Err: errors.New("429")}},
		"gate wait":  {gate: wait},
	} {
		t.Run(name, func(t *testing.T) {
			svc, d := awayDigest(t, roomDigests())
			c := &digestSender{fail: try.fail}
			if err := svc.DeliverOne(t.Context(), c, d, try.gate); err == nil {
				t.Fatal("the attempt that sent nothing reported sent")
			}
			if err := svc.DeliverOne(t.Context(), c, d, nil); err != nil {
				t.Fatalf("the retry: %v", err)
			}
			if got := digestsAgain(t, svc); c.posted != 1 || len(got) != 0 {
				t.Fatalf("%d digests posted, %d flagged as posted again; want one, unflagged", c.posted, len(got))
			}
		})
	}
}
