package teams_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// claimStall is a store whose first claim of a Teams activity, once
// armed, is taken and then never handed back to its handling: the
// replica that took it died holding it, as a kill -9 leaves it.
type claimStall struct {
	core.Store
	armed            atomic.Bool
	entered, release chan struct{}
}

func (s *claimStall) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	st, err := s.Store.ClaimOnce(ctx, key, holder, hold)
	if st == core.OnceClaimed && strings.HasPrefix(key, "seen:teams:activity:") && s.armed.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.release
	}
	return st, err
}

// TestCopyOfAnActivityInHandIsSentAgain: a copy of a click or a reply
// that comes while another handling has the activity in hand (the Bot
// Connector sends it again after a connection that broke, to another
// replica) is answered 503, so that the connector sends it again later:
// by then the first copy's claim is confirmed (the copy is a repeat) or,
// as here, has lapsed with the replica that died holding it, and the
// copy is handled. Before, the copy was answered 200: the connector had
// no reason to send it again, and a click or reply whose replica died
// was lost with nothing said (an invoke's clicker was told only that it
// may or may not have counted).
func TestCopyOfAnActivityInHandIsSentAgain(t *testing.T) {
	approval := core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)}
	clarification := core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible}
	for _, tc := range []struct {
		name string
		ask  core.AskInput
		act  func(e *env, m teamsfake.Message) map[string]any
		// handled checks what the copy handled after the lapse did.
		handled func(e *env, q *core.Question, body []byte)
	}{{
		name: "an Action.Execute click",
		ask:  approval,
		act: func(e *env, m teamsfake.Message) map[string]any {
			return e.fake.ExecuteActivity(alice, m, teams.Verb, action(e.t, m, card.LabelApprove))
		},
		handled: func(e *env, q *core.Question, body []byte) {
			if note, err := teamsfake.InvokeNote(body); err != nil || note != "Recorded: Approved" {
				e.t.Errorf("the copy handled was told %q (%v)", note, err)
			}
		},
	}, {
		name: "an Action.Submit click",
		ask:  approval,
		act: func(e *env, m teamsfake.Message) map[string]any {
			return e.fake.SubmitActivity(alice, m, action(e.t, m, card.LabelApprove))
		},
		handled: func(e *env, q *core.Question, _ []byte) {
			if !e.toldPrivately(alice, "Recorded: Approved") {
				e.t.Error("the clicker was not told the copy handled counted")
			}
		},
	}, {
		name: "a thread reply",
		ask:  clarification,
		act: func(e *env, m teamsfake.Message) map[string]any {
			return e.fake.ReplyActivity(alice, m.Conversation, "eu-west-1")
		},
		handled: func(e *env, q *core.Question, _ []byte) {
			if got := e.get(q.ID); got.Resolution == nil || got.Resolution.Answer != "eu-west-1" {
				e.t.Errorf("the reply's copy handled recorded %+v", got.Resolution)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clock := core.NewSimClock(time.Now())
			stall := &claimStall{entered: make(chan struct{}), release: make(chan struct{})}
			e := newEnvOn(t, func(st core.Store) core.Store { stall.Store = st; return stall }, nil, clock)
			q := e.ask(tc.ask)
			act := tc.act(e, e.card(q.ID, nil))

			stall.armed.Store(true)
			first := make(chan struct{})
			go func() { _, _, _ = e.fake.Deliver(act, ""); close(first) }()
			select {
			case <-stall.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the first copy never claimed the activity")
			}
			t.Cleanup(func() { close(stall.release); <-first })

			status, body, err := e.fake.Deliver(act, "")
			if err != nil || status != http.StatusServiceUnavailable {
				t.Fatalf("a copy while the first is in hand: %d %v %s; want 503, for the connector to send it again", status, err, body)
			}
			if got := e.get(q.ID); got.State != core.StateOpen {
				t.Fatalf("the copy in hand acted: %s", got.State)
			}

			clock.Advance(15 * time.Second) // the dead replica's claim lapses
			body = e.deliver(act)
			if got := e.get(q.ID); got.State != core.StateAnswered {
				t.Fatalf("the copy after the claim lapsed: %s", got.State)
			}
			tc.handled(e, q, body)
		})
	}
}

// TestCopyOfAnEditInHandIsSentAgain: the copy of an edit of a recorded
// answer that comes while another handling has the edit in hand is
// answered 503, as a click's is; the copy after the dead replica's claim
// lapsed tells the writer that the answer stands. Before, the copy was
// answered 200 and the writer, whose replica died, was told nothing.
func TestCopyOfAnEditInHandIsSentAgain(t *testing.T) {
	clock := core.NewSimClock(time.Now())
	stall := &claimStall{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnvOn(t, func(st core.Store) core.Store { stall.Store = st; return stall }, nil, clock)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	reply := e.fake.ReplyActivity(alice, m.Conversation, "eu-west-1")
	e.deliver(reply)
	if got := e.get(q.ID); got.State != core.StateAnswered {
		t.Fatalf("the reply: %s", got.State)
	}
	edit := e.fake.EditActivity(alice, m.Conversation, reply["id"].(string), "us-east-1")

	stall.armed.Store(true)
	first := make(chan struct{})
	go func() { _, _, _ = e.fake.Deliver(edit, ""); close(first) }()
	select {
	case <-stall.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first copy never claimed the edit")
	}
	t.Cleanup(func() { close(stall.release); <-first })
	if status, body, err := e.fake.Deliver(edit, ""); err != nil || status != http.StatusServiceUnavailable {
		t.Fatalf("a copy while the first is in hand: %d %v %s; want 503", status, err, body)
	}
	clock.Advance(15 * time.Second) // the dead replica's claim lapses
	e.deliver(edit)
	if !e.toldNow(alice, card.EditedAnswerNote) {
		t.Fatalf("the writer of the edited answer was told nothing (%d notes in their chat)", e.notesIn(teamsfake.PersonalChat(alice.ID)))
	}
}
