package core_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestPassesAreObservedForWhatTheyWere: each pass through the chokepoint
// is one askbridge_resolve_duration_seconds result, and a refusal
// (askbridge_refusals_total) only when a person's answer was turned
// away, for the reason README's metrics table gives. Before, an agent
// withdrawing a question a person had answered counted as an answer
// refused as closed; a second vote, a form item or a call decided first
// counted as invalid input; and a question changing too fast to take an
// answer counted as invalid input too.
func TestPassesAreObservedForWhatTheyWere(t *testing.T) {
	ada := core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "Bob"}
	u1 := core.Decider{Surface: core.SurfaceSlack, ID: "U1"}
	quorum := map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1", "U2", "U3"}, core.SurfaceAPI: {"*"}},
		Quorum:   2,
	}}
	clarification := core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-1", Text: "Which region?", Reversibility: core.Reversible}
	approval := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: "toolu_1", Text: "Deploy?",
		Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`), Reversibility: core.HardToReverse}
	fetch := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: "toolu_1", Text: "Fetch?",
		Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`), Reversibility: core.Reversible}
	form := core.AskInput{Kind: core.KindForm, Agent: "agent-a", RunID: "run-1", Text: "Plan the release", Reversibility: core.Reversible,
		Items: []core.FormItem{
			{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
			{ID: "size", Question: "How big?", Options: []core.FormOption{{ID: "small", Label: "Small"}, {ID: "big", Label: "Big"}}},
		}}
	answer := func(svc *core.Service, q core.QuestionID, d core.Decider, option string) error {
		_, err := svc.Answer(context.Background(), core.AnswerInput{QuestionID: q, Decider: d, OptionID: option})
		return err
	}

	for _, tt := range []struct {
		name string
		// routes for the service; nil is coretest's default (anyone on the API).
		routes map[string]core.Route
		// ruled: the default route's ruledRules decide fetch and writing
		// /b, and the first commit fails, so a question they decided is
		// left parked open (ruled_test.go).
		ruled bool
		// lose: how many commits the store refuses as stale.
		lose int
		// setup acts unobserved, and returns the act observed.
		setup   func(t *testing.T, svc *core.Service) func() error
		result  string
		refusal string // door/reason; "" for no refusal
		// says is what the act's error says, to pin which of the
		// chokepoint's conflicts it is (observe.go tells them apart so).
		says string
	}{
		{name: "a person answers", setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, clarification)
			return func() error { return answerWith(svc, q, ada, "eu") }
		}, result: core.ResolveClosed},
		{name: "a person answers after another did", setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, clarification)
			noErr(t, answerWith(svc, q, ada, "eu"))
			return func() error { return answerWith(svc, q, bob, "us") }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed},
		{name: "a person answers after the run ended", setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, clarification)
			if _, err := svc.EndRun(context.Background(), core.Run{Agent: "agent-a", ID: "run-1"}); err != nil {
				t.Fatal(err)
			}
			return func() error { return answerWith(svc, q, ada, "eu") }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedExpired},
		{name: "the agent withdraws a question a person answered", setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, clarification)
			noErr(t, answerWith(svc, q, ada, "eu"))
			return func() error {
				_, err := svc.Cancel(context.Background(), core.CancelInput{QuestionID: q, Owner: "agent-a",
					By: core.Decider{Surface: core.SurfaceAgent, ID: "agent-a"}})
				return err
			}
		}, result: core.ResolveLost},
		{name: "a person votes twice", routes: quorum, setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, approval)
			noErr(t, answer(svc, q, u1, core.ApproveOption))
			return func() error { return answer(svc, q, u1, core.ApproveOption) }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed, says: core.AlreadyCountedMessage},
		{name: "a person answers a form item another answered", setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, form)
			noErr(t, answerFormItem(svc, q, ada, "day", "mon"))
			return func() error { return answerFormItem(svc, q, bob, "day", "fri") }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed, says: "was already answered at"},
		{name: "a person decides a call another decided", setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, batchAsk())
			noErr(t, decideCallAs(svc, q, bob, "c1", core.DenyOption))
			return func() error { return decideCallAs(svc, q, ada, "c1", core.ApproveOption) }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed, says: "was already decided at"},
		{name: "a person decides a call a policy rule decided", ruled: true, setup: func(t *testing.T, svc *core.Service) func() error {
			q := parkedNotClosed(t, svc, batchAsk()) // c2 writes /b, which a rule denies
			return func() error { return decideCallAs(svc, q, ada, "c2", core.ApproveOption) }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed, says: "no person decides it"},
		{name: "a person approves a call a policy rule decided", ruled: true, setup: func(t *testing.T, svc *core.Service) func() error {
			q := parkedNotClosed(t, svc, fetch) // a rule denies fetch
			return func() error { return answer(svc, q, ada, core.ApproveOption) }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed, says: "no person decides it"},
		{name: "a person declines a call a policy rule decided", ruled: true, setup: func(t *testing.T, svc *core.Service) func() error {
			q := parkedNotClosed(t, svc, fetch)
			return func() error { _, err := svc.Decline(context.Background(), q, ada); return err }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed, says: "no person decides it"},
		{name: "a person approves all of a batch whose calls are all decided", ruled: true, setup: func(t *testing.T, svc *core.Service) func() error {
			q := parkedNotClosed(t, svc, batchAsk())
			noErr(t, answer(svc, q, ada, core.ApproveOption)) // c1; c2 is the rule's
			return func() error { return answer(svc, q, bob, core.ApproveOption) }
		}, result: core.ResolveLost, refusal: "answer/" + core.RefusedClosed, says: "is decided already"},
		{name: "a person declines a question that needs several", routes: quorum, setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, approval)
			return func() error { _, err := svc.Decline(context.Background(), q, u1); return err }
		}, result: core.ResolveInvalid, refusal: "answer/" + core.RefusedInvalid, says: "needs 2 people to agree"},
		{name: "a person picks no option of the question's", routes: quorum, setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, approval)
			return func() error { return answer(svc, q, u1, "maybe") }
		}, result: core.ResolveInvalid, refusal: "answer/" + core.RefusedInvalid},
		{name: "a person the route does not name answers", routes: quorum, setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, approval)
			return func() error {
				return answer(svc, q, core.Decider{Surface: core.SurfaceSlack, ID: "U9"}, core.ApproveOption)
			}
		}, result: core.ResolveRefused, refusal: "answer/" + core.RefusedForbidden},
		{name: "a question changes too fast to take an answer", lose: 1000, setup: func(t *testing.T, svc *core.Service) func() error {
			q := askedID(t, svc, clarification)
			return func() error { return answerWith(svc, q, ada, "eu") }
		}, result: core.ResolveError, says: "is changing too fast to take this"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &triedStore{Store: coretest.OpenStore(t)}
			var svc *core.Service
			if tt.ruled {
				fail := &failingCommits{Store: st}
				var err error
				if svc, err = core.New(fail, ruledConfig(ruledRules...), nil); err != nil {
					t.Fatal(err)
				}
				fail.fail.Store(1)
			} else {
				svc = coretest.Service(t, st, coretest.Options{Routes: tt.routes})
			}
			act := tt.setup(t, svc)
			obs := &passes{resolved: map[string]int{}, refused: map[string]int{}}
			svc.SetObserver(obs)
			st.mu.Lock()
			st.lose = tt.lose
			st.mu.Unlock()
			err := act()
			if (err == nil) != (tt.result == core.ResolveClosed || tt.result == core.ResolveRecorded) || !strings.Contains(core.ErrorMessage(err), tt.says) {
				t.Fatalf("the act: %v; want an error saying %q", err, tt.says)
			}
			wantRefused := map[string]int{}
			if tt.refusal != "" {
				wantRefused[tt.refusal] = 1
			}
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if !maps.Equal(obs.resolved, map[string]int{tt.result: 1}) || !maps.Equal(obs.refused, wantRefused) {
				t.Errorf("%v: observed passes %v and refusals %v; want one %q pass and refusals %v", err, obs.resolved, obs.refused, tt.result, wantRefused)
			}
		})
	}
}

func askedID(t *testing.T, svc *core.Service, in core.AskInput) core.QuestionID {
	t.Helper()
	q, err := svc.Ask(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return q.ID
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func answerWith(svc *core.Service, q core.QuestionID, d core.Decider, text string) error {
	_, err := svc.Answer(context.Background(), core.AnswerInput{QuestionID: q, Decider: d, Text: text})
	return err
}

func answerFormItem(svc *core.Service, q core.QuestionID, d core.Decider, item, option string) error {
	_, err := svc.Answer(context.Background(), core.AnswerInput{QuestionID: q, Decider: d, Items: []core.ItemInput{{ItemID: item, OptionID: option}}})
	return err
}

func decideCallAs(svc *core.Service, q core.QuestionID, d core.Decider, call, option string) error {
	_, err := svc.Answer(context.Background(), core.AnswerInput{QuestionID: q, Decider: d, Calls: []core.CallDecision{{ToolCallID: call, OptionID: option}}})
	return err
}
