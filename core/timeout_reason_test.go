package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAPartlyAnsweredFormTimesOutWithAnHonestReason: a form one of whose
// items was answered records, for the agent and the log, that nobody
// answered the rest, as its card says, not that nobody answered.
func TestAPartlyAnsweredFormTimesOutWithAnHonestReason(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC))
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock})
	ctx := t.Context()
	opts := []core.FormOption{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindForm, Agent: "ag", RunID: "r1", Text: "Pick", Reversibility: core.Reversible,
		Timeout: time.Minute, Items: []core.FormItem{{ID: "region", Question: "Region?", Options: opts}, {ID: "size", Question: "Size?", Options: opts}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice"},
		Items: []core.ItemInput{{ItemID: "region", OptionID: "a"}}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if _, err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(ctx, q.ID)
	if err != nil || got.State != core.StateTimedOut {
		t.Fatalf("after the deadline: %v, %v", got, err)
	}
	const want = "nobody answered the rest before the deadline"
	if got.Resolution.Reason != want || !strings.HasSuffix(card.OutcomeLine(got), ": "+want) {
		t.Errorf("recorded reason %q, card %q; want both to say %q", got.Resolution.Reason, card.OutcomeLine(got), want)
	}
	// The items listed are those answered: one of one answered, of the
	// form's two (before, "Form item 1 of 1" read as the whole form).
	r, err := core.ResumeOf(got)
	if err != nil || !strings.Contains(r.Text, "Answered form item 1 of 1:") {
		t.Errorf("the resume of the half-answered form: %v\n%s", err, r.Text)
	}
}

// racyGet is a store whose next Get runs between after it reads, as
// another replica's act would land between a reader's read and its close.
type racyGet struct {
	core.Store
	between func()
}

func (s *racyGet) Get(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	q, err := s.Store.Get(ctx, id)
	if f := s.between; f != nil {
		s.between = nil
		f()
	}
	return q, err
}

// TestATimeoutCountsTheVotesItCloses: a vote that lands between the
// ticker's read and its close is in the recorded reason's count, as it is
// on the card, since the reason is worked out from the question the close
// is computed from.
func TestATimeoutCountsTheVotesItCloses(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC))
	st := &racyGet{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{Routes: quorumRoutes(2, 2), Clock: clock})
	ctx := t.Context()
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?", Timeout: time.Minute,
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	st.between = func() {
		if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice"}, OptionID: core.ApproveOption}); err != nil {
			t.Errorf("vote: %v", err)
		}
	}
	if _, err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(ctx, q.ID)
	if err != nil || got.State != core.StateTimedOut || len(got.Votes) != 1 {
		t.Fatalf("after the deadline: %+v, %v", got, err)
	}
	if want := core.TimeoutReasonOf(got); got.Resolution.Reason != want || !strings.Contains(want, "1 of 2 approvals") {
		t.Errorf("recorded reason %q; the question it closed says %q", got.Resolution.Reason, want)
	}
}

// TestAVoteForAnyOptionIdIsRecorded: a vote's event payload is JSON
// whatever runes its option id has; Go's %q wrote some (tag characters,
// as in flag emoji) in an escape JSON refuses, and both stores refused
// the vote.
func TestAVoteForAnyOptionIdIsRecorded(t *testing.T) {
	for name, open := range coretest.Stores {
		t.Run(name, func(t *testing.T) {
			svc := coretest.Service(t, open(t), coretest.Options{Routes: quorumRoutes(2, 2)})
			ctx := t.Context()
			odd := "pg\U000E0041"
			q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindDecision, Agent: "ag", RunID: "r1", Text: "DB?", Reversibility: core.Reversible,
				Options: []core.Option{{ID: odd, Title: "Postgres", Writeup: "w", Recommended: true}, {ID: "my", Title: "MySQL", Writeup: "w"}}})
			if err != nil {
				t.Fatalf("ask: %v", err)
			}
			if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice"}, OptionID: odd}); err != nil {
				t.Fatalf("vote: %v", err)
			}
			evs, err := svc.QuestionEvents(ctx, q.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			var choice struct{ Choice string }
			for _, ev := range evs {
				if ev.Kind == core.EventVoted {
					if err := json.Unmarshal(ev.Payload, &choice); err != nil {
						t.Fatal(err)
					}
				}
			}
			if choice.Choice != odd {
				t.Errorf("the vote event's choice is %q, want %q", choice.Choice, odd)
			}
		})
	}
}
