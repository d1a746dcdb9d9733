package core

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The close's rules, every kind and feature, as one table over the pure
// transition: what an attempt asks (answerBuild, or the transition a
// close without an answer builds) applied to a question by Next. A new
// kind or feature adds its rows here; no store is involved.

var nextNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// nextService is a Service with no store: only what builds transitions
// (routes, people, the actor key) is used.
func nextService(t *testing.T) *Service {
	t.Helper()
	people := map[string]Person{
		"alice": {DisplayName: "Alice", IDs: map[Surface][]string{SurfaceSlack: {"U-alice"}, SurfaceAPI: {"alice"}}},
		"bob":   {DisplayName: "Bob", IDs: map[Surface][]string{SurfaceTelegram: {"2002"}, SurfaceAPI: {"bob"}}},
		"carol": {DisplayName: "Carol", IDs: map[Surface][]string{SurfaceDiscord: {"1003"}}},
	}
	cfg := Config{ActorKey: []byte("next-test"), People: people, Routes: map[string]Route{
		"ops":       {Deciders: map[Surface][]string{SurfaceAPI: {"*"}, SurfaceSlack: {"*"}}},
		"two":       {People: []string{"person:alice", "person:bob", "person:carol"}, Quorum: 2},
		"two-count": {People: []string{"person:alice", "person:bob", "person:carol"}, Quorum: 2, Deny: DenyCount},
	}}
	s, err := New(nil, cfg, NewSimClock(nextNow))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	slackCard    = MessageRef{Surface: SurfaceSlack, Room: "C1", ID: "1700.1", Delivery: "post-slack", Kind: DeliverPost}
	telegramCard = MessageRef{Surface: SurfaceTelegram, Room: "-100", ID: "42", Delivery: "post-telegram", Kind: DeliverPost}
	apiAda       = Decider{Surface: SurfaceAPI, ID: "ada", Name: "Ada", Roles: []string{"ops"}}
)

// seed is an open question of kind k with two cards, at version 3.
func seed(k Kind, mod ...func(*Question)) *Question {
	q := &Question{ID: NewID(0), Kind: k, Agent: "agent-a", RunID: "run-1", Text: "Go?", Route: "ops",
		Reversibility: Reversible, State: StateOpen, CreatedAt: nextNow.Add(-time.Hour), Deadline: nextNow.Add(time.Hour),
		Messages: []MessageRef{slackCard, telegramCard}, Version: 3}
	switch k {
	case KindDecision:
		q.Options = []Option{{ID: "pg", Title: "Postgres", Writeup: "boring", Recommended: true}, {ID: "ddb", Title: "Dynamo", Writeup: "fast"}}
	case KindApproval:
		q.Call = toolCall(`{"path":"/tmp/a","mode":"w"}`)
		q.Call.Editable = &Editable{Keys: []string{"path"}}
		q.Call.Standing = &StandingOffer{Hours: 8}
	case KindForm:
		q.Items = []FormItem{
			{ID: "day", Question: "Which day?", Options: []FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
			{ID: "notes", Question: "Notes?", Options: []FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
		}
	}
	for _, m := range mod {
		m(q)
	}
	return q
}

func toolCall(args string) *ToolCall {
	sum, _, err := HashArguments(json.RawMessage(args))
	if err != nil {
		panic(err)
	}
	return &ToolCall{Tool: "write_file", Arguments: json.RawMessage(args), ArgumentsSHA256: sum}
}

// batch makes q a batch of two calls.
func batch(q *Question) {
	q.Call = nil
	q.Calls = []BatchCall{{ToolCallID: "c1", ToolCall: *toolCall(`{"path":"/a"}`)}, {ToolCallID: "c2", ToolCall: *toolCall(`{"path":"/b"}`)}}
}

func quorumOn(route string) func(*Question) {
	return func(q *Question) { q.Route, q.Quorum = route, 2 }
}

func answered(item, option string, by Decider) func(*Question) {
	return func(q *Question) {
		q.Answers = append(q.Answers, ItemAnswer{ItemID: item, OptionID: option, Decider: publicDecider(by), At: nextNow.Add(-time.Minute)})
	}
}

func voted(key, choice string, by Decider) func(*Question) {
	return func(q *Question) {
		q.Votes = append(q.Votes, Vote{Key: key, Choice: choice, Decider: publicDecider(by), At: nextNow.Add(-time.Minute)})
	}
}

func closedBy(state State) func(*Question) {
	return func(q *Question) {
		q.State = state
		q.Resolution = &Resolution{State: state, ClosedBy: CloserPerson, Decider: Decider{Surface: SurfaceAPI, ID: "zed"}, At: nextNow.Add(-time.Minute)}
	}
}

var (
	slackAlice = Decider{Surface: SurfaceSlack, ID: "U-alice", Name: "alice on slack"}
	apiBob     = Decider{Surface: SurfaceAPI, ID: "bob", Name: "bob"}
	discCarol  = Decider{Surface: SurfaceDiscord, ID: "1003", Name: "carol"}
)

func TestNext(t *testing.T) {
	s := nextService(t)
	answer := func(in AnswerInput) func(q *Question) (Transition, error) {
		return func(q *Question) (Transition, error) {
			in.QuestionID = q.ID
			in.Decider = s.identify(in.Decider).Decider
			return s.answerBuild(in)(q, nextNow)
		}
	}
	given := func(t Transition) func(q *Question) (Transition, error) {
		return func(q *Question) (Transition, error) {
			t.QuestionID, t.Now = q.ID, nextNow
			return t, nil
		}
	}
	system := func(state State, by Closer, reason string) func(q *Question) (Transition, error) {
		return func(q *Question) (Transition, error) { return s.systemClose(state, by, System, reason)(q, nextNow) }
	}
	yes := true
	tests := []struct {
		name  string
		q     *Question
		build func(q *Question) (Transition, error)
		hold  string // the card (message id) the caller's response shows
		// wantCode is the refusal's code; "" for a change.
		wantCode Code
		// wantState is the state after; wantEvent the one event's kind.
		wantState State
		wantEvent EventKind
		check     func(t *testing.T, before *Question, c Change)
	}{
		{name: "clarification: the text closes it", q: seed(KindClarification),
			build: answer(AnswerInput{Decider: apiAda, Text: "eu-west-1"}), wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				r := c.Question.Resolution
				if r.Answer != "eu-west-1" || r.ClosedBy != CloserPerson || r.Decider.ID != "ada" || r.Decider.Roles != nil || !r.At.Equal(nextNow) {
					t.Errorf("resolution %+v", r)
				}
			}},
		{name: "clarification: a blank answer is invalid", q: seed(KindClarification),
			build: answer(AnswerInput{Decider: apiAda, Text: "  "}), wantCode: CodeInvalid},
		{name: "clarification: an option is invalid", q: seed(KindClarification),
			build: answer(AnswerInput{Decider: apiAda, Text: "x", OptionID: "pg"}), wantCode: CodeInvalid},
		{name: "decision: the option's write-up, the note as reason", q: seed(KindDecision),
			build: answer(AnswerInput{Decider: apiAda, OptionID: "ddb", Text: " speed matters "}), wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if r := c.Question.Resolution; r.OptionID != "ddb" || r.Answer != "fast" || r.Reason != "speed matters" {
					t.Errorf("resolution %+v", r)
				}
			}},
		{name: "decision: an unknown option is invalid", q: seed(KindDecision),
			build: answer(AnswerInput{Decider: apiAda, OptionID: "mongo"}), wantCode: CodeInvalid},
		{name: "approval: approve echoes the hash", q: seed(KindApproval),
			build: answer(AnswerInput{Decider: apiAda, OptionID: ApproveOption, Text: "ok"}), wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, b *Question, c Change) {
				r := c.Question.Resolution
				if r.Approved == nil || !*r.Approved || r.Reason != "ok" || r.ArgumentsSHA256 != b.Call.ArgumentsSHA256 || r.Edit != nil {
					t.Errorf("resolution %+v", r)
				}
			}},
		{name: "approval: deny", q: seed(KindApproval),
			build: answer(AnswerInput{Decider: apiAda, OptionID: DenyOption, Text: "no"}), wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if r := c.Question.Resolution; r.Approved == nil || *r.Approved || r.Reason != "no" {
					t.Errorf("resolution %+v", r)
				}
			}},
		{name: "approval: another option is invalid", q: seed(KindApproval),
			build: answer(AnswerInput{Decider: apiAda, OptionID: "maybe"}), wantCode: CodeInvalid},
		{name: "edit: approved with the edited arguments", q: seed(KindApproval),
			build:     answer(AnswerInput{Decider: apiAda, OptionID: ApproveOption, Arguments: json.RawMessage(`{"path":"/tmp/b","mode":"w"}`)}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, b *Question, c Change) {
				e := c.Question.Resolution.Edit
				if e == nil || e.AskedArgumentsSHA256 != b.Call.ArgumentsSHA256 || e.ArgumentsSHA256 == b.Call.ArgumentsSHA256 ||
					len(e.Changes) != 1 || e.Changes[0].Key != "path" {
					t.Errorf("edit %+v", e)
				}
			}},
		{name: "edit: a key that is not editable is invalid", q: seed(KindApproval),
			build:    answer(AnswerInput{Decider: apiAda, OptionID: ApproveOption, Arguments: json.RawMessage(`{"path":"/tmp/a","mode":"r"}`)}),
			wantCode: CodeInvalid},
		{name: "edit: with deny is invalid", q: seed(KindApproval),
			build:    answer(AnswerInput{Decider: apiAda, OptionID: DenyOption, Arguments: json.RawMessage(`{"path":"/tmp/b","mode":"w"}`)}),
			wantCode: CodeInvalid},
		{name: "standing approval: asked with an approve, the close is the approve's", q: seed(KindApproval),
			build:     answer(AnswerInput{Decider: apiAda, OptionID: ApproveOption, Standing: &StandingRequest{Scope: StandingRun}}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if r := c.Question.Resolution; r.ClosedBy != CloserPerson || r.Standing != nil || r.Grants == nil || r.Grants.Scope != StandingRun {
					t.Errorf("resolution %+v; want the person's close recording the standing approval it grants", r)
				}
			}},
		{name: "standing approval: with a deny is invalid", q: seed(KindApproval),
			build: answer(AnswerInput{Decider: apiAda, OptionID: DenyOption, Standing: &StandingRequest{Scope: StandingRun}}), wantCode: CodeInvalid},
		{name: "standing approval: one that covers the call closes it at the ask", q: seed(KindApproval),
			build: given(Transition{Resolution: &Resolution{State: StateAnswered, ClosedBy: CloserStanding, Approved: &yes,
				Decider:  Decider{Surface: SurfaceAPI, ID: "ada", Name: "standing approval st-1"},
				Standing: &StandingUse{ID: "st-1", GrantedBy: Decider{Surface: SurfaceAPI, ID: "ada"}}}}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if r := c.Question.Resolution; r.ClosedBy != CloserStanding || r.Standing == nil || r.Standing.ID != "st-1" || !r.At.Equal(nextNow) {
					t.Errorf("resolution %+v", r)
				}
				if e := c.Events[0]; e.QuestionID != c.Question.ID || e.RunID != "run-1" || !e.At.Equal(nextNow) {
					t.Errorf("the event is not completed: %+v", e)
				}
			}},
		{name: "form: an item leaves it open", q: seed(KindForm),
			build:     answer(AnswerInput{Decider: apiAda, Items: []ItemInput{{ItemID: "notes", Text: "keep it short"}}}),
			wantState: StateOpen, wantEvent: EventItemAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if len(c.Question.Answers) != 1 || c.Question.Resolution != nil || c.Question.Answers[0].Decider.Roles != nil {
					t.Errorf("after one item: %+v, %+v", c.Question.Answers, c.Question.Resolution)
				}
				if p := string(c.Events[0].Payload); p != `{"items":["notes"]}` {
					t.Errorf("item event payload %s", p)
				}
			}},
		{name: "form: the last item closes it, in parts", q: seed(KindForm, answered("notes", "short", apiBob)),
			build:     answer(AnswerInput{Decider: apiAda, Items: []ItemInput{{ItemID: "day", OptionID: "fri"}}}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				a := c.Question.Answers
				if len(a) != 2 || a[0].ItemID != "day" || a[1].ItemID != "notes" || a[1].Decider.ID != "bob" {
					t.Errorf("answers not in item order, each with its decider: %+v", a)
				}
				if r := c.Question.Resolution; r.ClosedBy != CloserParts || r.Decider.ID != "ada" {
					t.Errorf("resolution %+v", r)
				}
			}},
		{name: "form: all items at once close it", q: seed(KindForm),
			build:     answer(AnswerInput{Decider: apiAda, Items: []ItemInput{{ItemID: "notes", OptionID: "long"}, {ItemID: "day", OptionID: "mon"}}}),
			wantState: StateAnswered, wantEvent: EventAnswered},
		{name: "form: an answered item is a conflict", q: seed(KindForm, answered("day", "mon", apiBob)),
			build: answer(AnswerInput{Decider: apiAda, Items: []ItemInput{{ItemID: "day", OptionID: "fri"}}}), wantCode: CodeConflict},
		{name: "form: an item answered twice in one answer is invalid", q: seed(KindForm),
			build: answer(AnswerInput{Decider: apiAda, Items: []ItemInput{{ItemID: "day", OptionID: "fri"}, {ItemID: "day", OptionID: "mon"}}}), wantCode: CodeInvalid},
		{name: "form: an unknown option is invalid", q: seed(KindForm),
			build: answer(AnswerInput{Decider: apiAda, Items: []ItemInput{{ItemID: "day", OptionID: "sun"}}}), wantCode: CodeInvalid},
		{name: "form: a transition answering an answered part is a conflict", q: seed(KindForm, answered("day", "mon", apiBob)),
			build: given(Transition{Items: []ItemAnswer{{ItemID: "day", OptionID: "fri", Decider: apiAda}},
				Resolution: &Resolution{State: StateAnswered, Decider: apiAda}}), wantCode: CodeConflict},
		{name: "form: a transition naming one part twice is a conflict", q: seed(KindForm),
			build: given(Transition{Items: []ItemAnswer{{ItemID: "day", OptionID: "fri"}, {ItemID: "day", OptionID: "mon"}},
				Resolution: &Resolution{State: StateAnswered, Decider: apiAda}}), wantCode: CodeConflict},
		{name: "batch: one call leaves it open", q: seed(KindApproval, batch),
			build:     answer(AnswerInput{Decider: apiAda, Calls: []CallDecision{{ToolCallID: "c2", OptionID: DenyOption, Reason: "no"}}}),
			wantState: StateOpen, wantEvent: EventItemAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if a := c.Question.Answers; len(a) != 1 || a[0].ItemID != "c2" || a[0].OptionID != DenyOption || a[0].Text != "no" {
					t.Errorf("answers %+v", a)
				}
				if p := string(c.Events[0].Payload); p != `{"calls":["c2"]}` {
					t.Errorf("item event payload %s", p)
				}
			}},
		{name: "batch: approve all takes the calls still undecided and closes it", q: seed(KindApproval, batch, answered("c1", DenyOption, apiBob)),
			build:     answer(AnswerInput{Decider: apiAda, OptionID: ApproveOption}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				a := c.Question.Answers
				if len(a) != 2 || a[0].OptionID != DenyOption || a[0].Decider.ID != "bob" || a[1].OptionID != ApproveOption || a[1].Decider.ID != "ada" {
					t.Errorf("answers %+v", a)
				}
				if c.Question.Resolution.ClosedBy != CloserParts {
					t.Errorf("resolution %+v", c.Question.Resolution)
				}
			}},
		{name: "batch: a decided call is a conflict", q: seed(KindApproval, batch, answered("c1", DenyOption, apiBob)),
			build: answer(AnswerInput{Decider: apiAda, Calls: []CallDecision{{ToolCallID: "c1", OptionID: ApproveOption}}}), wantCode: CodeConflict},
		{name: "batch: approve all with every call decided is a conflict", q: seed(KindApproval, batch, answered("c1", DenyOption, apiBob), answered("c2", DenyOption, apiBob)),
			build: answer(AnswerInput{Decider: apiAda, OptionID: ApproveOption}), wantCode: CodeConflict},
		{name: "batch: an edited call keeps its edit", q: seed(KindApproval, batch, func(q *Question) { q.Calls[0].Editable = &Editable{All: true} }),
			build:     answer(AnswerInput{Decider: apiAda, Calls: []CallDecision{{ToolCallID: "c1", OptionID: ApproveOption, Arguments: json.RawMessage(`{"path":"/z"}`)}}}),
			wantState: StateOpen, wantEvent: EventItemAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if a := c.Question.Answers; len(a) != 1 || a[0].Edit == nil || len(a[0].Edit.Changes) != 1 {
					t.Errorf("answers %+v", a)
				}
			}},
		{name: "batch: standing approvals cover its calls at the ask", q: seed(KindApproval, batch),
			build: given(Transition{Items: []ItemAnswer{
				{ItemID: "c1", OptionID: ApproveOption, Standing: &StandingUse{ID: "st-1"}},
				{ItemID: "c2", OptionID: ApproveOption, Standing: &StandingUse{ID: "st-2"}}},
				Resolution: &Resolution{State: StateAnswered, ClosedBy: CloserParts}}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if a := c.Question.Answers; len(a) != 2 || a[0].Standing == nil || a[1].Standing.ID != "st-2" || !a[0].At.Equal(nextNow) {
					t.Errorf("answers %+v", a)
				}
			}},
		{name: "quorum: the first approval is a vote", q: seed(KindApproval, quorumOn("two")),
			build:     answer(AnswerInput{Decider: slackAlice, OptionID: ApproveOption, Text: "fine"}),
			wantState: StateOpen, wantEvent: EventVoted,
			check: func(t *testing.T, _ *Question, c Change) {
				v := c.Question.Votes
				if len(v) != 1 || v[0].Key != "person:alice" || v[0].Text != "fine" || v[0].Decider.Roles != nil {
					t.Errorf("votes %+v", v)
				}
				if p := string(c.Events[0].Payload); p != `{"choice":"approve","needed":2}` {
					t.Errorf("vote event payload %s", p)
				}
			}},
		{name: "quorum: the approval that reaches it closes it", q: seed(KindApproval, quorumOn("two"), voted("person:alice", ApproveOption, slackAlice)),
			build:     answer(AnswerInput{Decider: apiBob, OptionID: ApproveOption, Text: "yes"}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				r := c.Question.Resolution
				if r.ClosedBy != CloserQuorum || r.Approved == nil || !*r.Approved || r.Reason != "" || len(c.Question.Votes) != 2 {
					t.Errorf("resolution %+v, votes %d", r, len(c.Question.Votes))
				}
			}},
		{name: "quorum: votes for another choice do not add up", q: seed(KindDecision, quorumOn("two"), voted("person:alice", "pg", slackAlice)),
			build:     answer(AnswerInput{Decider: apiBob, OptionID: "ddb"}),
			wantState: StateOpen, wantEvent: EventVoted},
		{name: "quorum: a decision closes at its quorum", q: seed(KindDecision, quorumOn("two"), voted("person:alice", "pg", slackAlice)),
			build:     answer(AnswerInput{Decider: apiBob, OptionID: "pg"}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if r := c.Question.Resolution; r.OptionID != "pg" || r.Answer != "boring" || r.ClosedBy != CloserQuorum {
					t.Errorf("resolution %+v", r)
				}
			}},
		{name: "quorum: one deny vetoes", q: seed(KindApproval, quorumOn("two"), voted("person:alice", ApproveOption, slackAlice)),
			build:     answer(AnswerInput{Decider: discCarol, OptionID: DenyOption, Text: "no"}),
			wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				if r := c.Question.Resolution; r.Approved == nil || *r.Approved {
					t.Errorf("resolution %+v, want denied", r)
				}
			}},
		{name: "quorum: counted denies close only when approval cannot reach it", q: seed(KindApproval, quorumOn("two-count")),
			build:     answer(AnswerInput{Decider: discCarol, OptionID: DenyOption}),
			wantState: StateOpen, wantEvent: EventVoted},
		{name: "quorum: the second counted deny closes it denied", q: seed(KindApproval, quorumOn("two-count"), voted("person:carol", DenyOption, discCarol)),
			build:     answer(AnswerInput{Decider: apiBob, OptionID: DenyOption}),
			wantState: StateAnswered, wantEvent: EventAnswered},
		{name: "quorum: a person's second vote is already counted", q: seed(KindApproval, quorumOn("two"), voted("person:alice", ApproveOption, slackAlice)),
			build: answer(AnswerInput{Decider: Decider{Surface: SurfaceAPI, ID: "alice"}, OptionID: ApproveOption}), wantCode: CodeConflict},
		{name: "quorum: a token's console vote keyed before VoteKey keyed both doors alike is its API vote", q: seed(KindApproval, quorumOn("two"), voted("console:bob", ApproveOption, Decider{Surface: SurfaceConsole, ID: "bob"})),
			build: answer(AnswerInput{Decider: apiBob, OptionID: ApproveOption}), wantCode: CodeConflict},
		{name: "quorum: a transition with a counted voter is already counted", q: seed(KindApproval, quorumOn("two"), voted("person:alice", ApproveOption, slackAlice)),
			build: given(Transition{Vote: &Vote{Key: "person:alice", Choice: ApproveOption}, Needed: 2,
				Resolution: &Resolution{State: StateAnswered}}), wantCode: CodeConflict},
		{name: "decline", q: seed(KindDecision),
			build: func(q *Question) (Transition, error) {
				return s.systemClose(StateDeclined, CloserDecline, apiAda, DeclineReason)(q, nextNow)
			},
			wantState: StateDeclined, wantEvent: EventDeclined},
		{name: "timeout", q: seed(KindClarification), build: system(StateTimedOut, CloserTimeout, TimeoutReason),
			wantState: StateTimedOut, wantEvent: EventTimedOut,
			check: func(t *testing.T, _ *Question, c Change) {
				if r := c.Question.Resolution; r.ClosedBy != CloserTimeout || r.Reason != TimeoutReason || c.Events[0].Reason != TimeoutReason {
					t.Errorf("resolution %+v, event %+v", r, c.Events[0])
				}
			}},
		{name: "expiry of a half-answered form", q: seed(KindForm, answered("day", "mon", apiBob)), build: system(StateExpired, CloserExpiry, ExpiredReason),
			wantState: StateExpired, wantEvent: EventExpired},
		{name: "a closed question refuses, naming its close", q: seed(KindClarification, closedBy(StateAnswered)),
			build: given(Transition{Resolution: &Resolution{State: StateAnswered, Decider: apiAda}}), wantCode: CodeConflict},
		{name: "a resolution into an open state is invalid", q: seed(KindClarification),
			build: given(Transition{Resolution: &Resolution{State: StateOpen}}), wantCode: CodeInvalid},
		{name: "a transition that records nothing is invalid", q: seed(KindClarification),
			build: given(Transition{}), wantCode: CodeInvalid},
		{name: "held card: the response's card's update is delayed, the other not", q: seed(KindDecision), hold: slackCard.ID,
			build: answer(AnswerInput{Decider: apiAda, OptionID: "pg"}), wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				delays := map[string]time.Duration{}
				for _, d := range c.Updates {
					delays[d.Message.ID] = d.Delay
				}
				if len(c.Updates) != 2 || delays[slackCard.ID] != ShownHold || delays[telegramCard.ID] != 0 {
					t.Fatalf("updates %+v; want the slack card's delayed by ShownHold, the telegram card's not", c.Updates)
				}
				h := heldOf(c)
				if h == nil || h.Surface != SurfaceSlack || h.QuestionID != c.Question.ID || h.IfVersion == nil || *h.IfVersion != c.Question.Version ||
					h.Key != UpdateKey(c.Question.ID, c.Question.Version, 0) {
					t.Errorf("held %+v", h)
				}
			}},
		{name: "held card: a card the question lacks holds nothing", q: seed(KindDecision), hold: "no-such-card",
			build: answer(AnswerInput{Decider: apiAda, OptionID: "pg"}), wantState: StateAnswered, wantEvent: EventAnswered,
			check: func(t *testing.T, _ *Question, c Change) {
				for _, d := range c.Updates {
					if d.Delay != 0 {
						t.Errorf("update %+v delayed; want nothing held", d)
					}
				}
				if h := heldOf(c); h != nil || len(c.Updates) != 2 {
					t.Errorf("held %+v, %d updates; want nothing held, both cards updated", h, len(c.Updates))
				}
			}},
		{name: "held card: a vote holds it too", q: seed(KindApproval, quorumOn("two")), hold: slackCard.ID,
			build: answer(AnswerInput{Decider: slackAlice, OptionID: ApproveOption}), wantState: StateOpen, wantEvent: EventVoted,
			check: func(t *testing.T, _ *Question, c Change) {
				if h := heldOf(c); h == nil || len(c.Updates) != 2 || h.Key != c.Updates[0].Key || c.Updates[1].Delay != 0 {
					t.Errorf("held %+v, updates %+v", h, c.Updates)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(t, tt.q)
			tr, err := tt.build(tt.q)
			if err == nil {
				tr.QuestionID, tr.Now = tt.q.ID, nextNow // as the chokepoint's try does
				if tt.hold != "" {
					tr.Shown = &ShownCard{Surface: SurfaceSlack, MessageID: tt.hold}
				}
				var c Change
				c, err = Next(tt.q, tr)
				if err == nil {
					checkChange(t, before, c, tt.wantState, tt.wantEvent)
					if tt.check != nil {
						tt.check(t, before, c)
					}
				}
			}
			if got := ErrorCode(err); got != tt.wantCode {
				t.Fatalf("error %v (code %q), want code %q", err, got, tt.wantCode)
			}
			if !reflect.DeepEqual(before, tt.q) {
				t.Fatalf("Next changed the question it was given:\n%+v\nwas\n%+v", tt.q, before)
			}
		})
	}
}

// checkChange asserts what every change holds, whatever its kind: the
// version moves on by one, the question it came from is kept, one event
// of the question, and one update per card (the held one delayed), each
// keyed by the new version.
func checkChange(t *testing.T, before *Question, c Change, state State, event EventKind) {
	t.Helper()
	n := c.Question
	if c.From() != before.Version || n.Version != before.Version+1 || n.ID != before.ID {
		t.Errorf("version %d from %d; want %d from %d", n.Version, c.From(), before.Version+1, before.Version)
	}
	if n.State != state || c.Closes() != state.Closed() {
		t.Errorf("state %s (closes %v), want %s", n.State, c.Closes(), state)
	}
	if state.Closed() && (n.Resolution == nil || n.Resolution.State != state) {
		t.Errorf("resolution %+v, want one in state %s", n.Resolution, state)
	}
	if len(c.Events) != 1 || c.Events[0].Kind != event || c.Events[0].QuestionID != n.ID || c.Events[0].RunID != n.RunID || c.Events[0].At.IsZero() {
		t.Errorf("events %+v, want one %s of the question", c.Events, event)
	}
	if len(c.Updates) != len(n.Messages) {
		t.Errorf("%d updates for %d cards", len(c.Updates), len(n.Messages))
	}
	for _, d := range c.Updates {
		if d.Kind != DeliverUpdate || d.QuestionID != n.ID || d.Message == nil || !d.CreatedAt.Equal(nextNow) ||
			!strings.HasPrefix(d.Key, string(n.ID)+"/update/4/") || d.Surface != d.Message.Surface {
			t.Errorf("update %+v", d)
		}
	}
	if !reflect.DeepEqual(n.Messages, before.Messages) || !n.Deadline.Equal(before.Deadline) || n.Renotified != before.Renotified {
		t.Errorf("a change moved the cards, deadline or renotices")
	}
}

func deepCopy(t *testing.T, q *Question) *Question {
	t.Helper()
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	var c Question
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	c.Version = q.Version
	return &c
}

// TestNextClosedNamesTheClose: the refusal of a closed question carries
// the question, so the loser is told who closed it.
func TestNextClosedNamesTheClose(t *testing.T) {
	q := seed(KindClarification, closedBy(StateAnswered))
	_, err := Next(q, Transition{QuestionID: q.ID, Now: nextNow, Resolution: &Resolution{State: StateAnswered}})
	var closed *ClosedError
	if !errors.As(err, &closed) || closed.Question != q || !errors.Is(err, ErrClosed) {
		t.Fatalf("%v, want a ClosedError with the question", err)
	}
}
