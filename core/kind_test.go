package core

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every shape has a whole home: one added to shapes without its value in
// homes, or with a rule left out, would be refused at the ask, the click,
// the answer and the close instead of taken unchecked. Every kind an
// asker names is a shape.
func TestEveryKindHasAHome(t *testing.T) {
	for _, sh := range shapes {
		k, ok := homes[sh]
		if !ok {
			t.Errorf("shape %q has no home", sh)
			continue
		}
		if k.ask == nil || k.button == nil || k.answer == nil || k.next == nil || k.resume == nil {
			t.Errorf("shape %q's home lacks a rule: %+v", sh, k)
		}
	}
	if len(homes) != len(shapes) {
		t.Errorf("%d homes for %d shapes", len(homes), len(shapes))
	}
	for _, kd := range kinds {
		if _, ok := homes[Shape(kd)]; !ok {
			t.Errorf("kind %q is no shape", kd)
		}
	}
	// A kind with no home changes nothing at any door.
	s := nextService(t)
	q := seed("riddle")
	if _, err := Next(q, Transition{QuestionID: q.ID, Now: nextNow, Resolution: &Resolution{State: StateAnswered}}); ErrorCode(err) != CodeInvalid {
		t.Errorf("the close of a kind with no home: %v, want invalid", err)
	}
	if _, err := s.answerBuild(AnswerInput{QuestionID: q.ID, Decider: apiAda, Text: "x"})(q, nextNow); ErrorCode(err) != CodeInvalid {
		t.Errorf("an answer to a kind with no home: %v, want invalid", err)
	}
	if _, err := AnswerFor(q, Ref{QuestionID: q.ID, Item: -1, Action: RefText}, apiAda, "x"); ErrorCode(err) != CodeInvalid {
		t.Errorf("a click on a kind with no home: %v, want invalid", err)
	}
}

// How each kind reads an answer into its transition (kind.answer and the
// features its home takes): a close, a vote under a quorum, or parts;
// and the answer fields that are other kinds' refused, changing nothing.
// A new kind adds its seed and rows here; the test fails until it has a
// row that changes its question and one that is refused.
func TestAnswerTransitionByKind(t *testing.T) {
	s := nextService(t)
	seeds := map[Shape]func(mod ...func(*Question)) *Question{
		ShapeClarification: func(mod ...func(*Question)) *Question { return seed(KindClarification, mod...) },
		ShapeDecision:      func(mod ...func(*Question)) *Question { return seed(KindDecision, mod...) },
		ShapeApproval:      func(mod ...func(*Question)) *Question { return seed(KindApproval, mod...) },
		ShapeBatch: func(mod ...func(*Question)) *Question {
			return seed(KindApproval, append([]func(*Question){batch}, mod...)...)
		},
		ShapeForm: func(mod ...func(*Question)) *Question { return seed(KindForm, mod...) },
	}
	args := json.RawMessage(`{"path":"/tmp/b","mode":"w"}`)
	standing := &StandingRequest{Scope: StandingRun}
	calls := []CallDecision{{ToolCallID: "c1", OptionID: ApproveOption}}
	items := []ItemInput{{ItemID: "day", OptionID: "mon"}}
	const (
		onlyBatch    = "only a batch of tool calls takes calls"
		onlyForm     = "only a form takes item answers"
		onlyApproval = "only an approval takes edited arguments or a standing approval"
		callByCall   = "a batch is answered call by call"
		itemByItem   = "a form is answered item by item"
	)
	tests := []struct {
		shape Shape
		name  string
		mod   []func(*Question)
		in    AnswerInput
		// want is what the transition does: "close", "vote", "items" or
		// "calls" (parts, named so in the item event); "" for a refusal
		// whose message holds wantErr.
		want, wantErr string
	}{
		{shape: ShapeClarification, name: "text closes it", in: AnswerInput{Text: "eu-west-1"}, want: "close"},
		{shape: ShapeClarification, name: "an option", in: AnswerInput{Text: "x", OptionID: "pg"}, wantErr: "not an option"},
		{shape: ShapeClarification, name: "calls", in: AnswerInput{Text: "x", Calls: calls}, wantErr: onlyBatch},
		{shape: ShapeClarification, name: "items", in: AnswerInput{Items: items}, wantErr: onlyForm},
		{shape: ShapeClarification, name: "arguments", in: AnswerInput{Text: "x", Arguments: args}, wantErr: onlyApproval},
		{shape: ShapeClarification, name: "a standing approval", in: AnswerInput{Text: "x", Standing: standing}, wantErr: onlyApproval},

		{shape: ShapeDecision, name: "an option closes it", in: AnswerInput{OptionID: "pg"}, want: "close"},
		{shape: ShapeDecision, name: "under a quorum an option is a vote", mod: []func(*Question){quorumOn("two")}, in: AnswerInput{OptionID: "pg"}, want: "vote"},
		{shape: ShapeDecision, name: "no option", in: AnswerInput{Text: "pg"}, wantErr: "choosing an option"},
		{shape: ShapeDecision, name: "calls", in: AnswerInput{OptionID: "pg", Calls: calls}, wantErr: onlyBatch},
		{shape: ShapeDecision, name: "items", in: AnswerInput{OptionID: "pg", Items: items}, wantErr: onlyForm},
		{shape: ShapeDecision, name: "arguments", in: AnswerInput{OptionID: "pg", Arguments: args}, wantErr: onlyApproval},

		{shape: ShapeApproval, name: "approve closes it", in: AnswerInput{OptionID: ApproveOption}, want: "close"},
		{shape: ShapeApproval, name: "an edit closes it", in: AnswerInput{OptionID: ApproveOption, Arguments: args}, want: "close"},
		{shape: ShapeApproval, name: "a standing approval closes it", in: AnswerInput{OptionID: ApproveOption, Standing: standing}, want: "close"},
		{shape: ShapeApproval, name: "under a quorum a deny is a vote", mod: []func(*Question){quorumOn("two")}, in: AnswerInput{OptionID: DenyOption}, want: "vote"},
		{shape: ShapeApproval, name: "another option", in: AnswerInput{OptionID: "maybe"}, wantErr: "is answered with"},
		{shape: ShapeApproval, name: "calls", in: AnswerInput{OptionID: ApproveOption, Calls: calls}, wantErr: onlyBatch},
		{shape: ShapeApproval, name: "items", in: AnswerInput{OptionID: ApproveOption, Items: items}, wantErr: onlyForm},

		{shape: ShapeBatch, name: "a call is a part", in: AnswerInput{Calls: calls}, want: "calls"},
		{shape: ShapeBatch, name: "approve all decides the calls", in: AnswerInput{OptionID: ApproveOption}, want: "calls"},
		{shape: ShapeBatch, name: "items", in: AnswerInput{OptionID: ApproveOption, Items: items}, wantErr: callByCall},
		{shape: ShapeBatch, name: "arguments of the whole", in: AnswerInput{OptionID: ApproveOption, Arguments: args}, wantErr: callByCall},
		{shape: ShapeBatch, name: "a standing approval of the whole", in: AnswerInput{OptionID: ApproveOption, Standing: standing}, wantErr: callByCall},

		{shape: ShapeForm, name: "an item is a part", in: AnswerInput{Items: items}, want: "items"},
		{shape: ShapeForm, name: "text of the whole", in: AnswerInput{Text: "x"}, wantErr: itemByItem},
		{shape: ShapeForm, name: "calls", in: AnswerInput{Items: items, Calls: calls}, wantErr: onlyBatch},
		{shape: ShapeForm, name: "arguments", in: AnswerInput{Items: items, Arguments: args}, wantErr: onlyApproval},
	}
	changes, refusals := map[Shape]bool{}, map[Shape]bool{}
	for _, tc := range tests {
		t.Run(string(tc.shape)+": "+tc.name, func(t *testing.T) {
			q := seeds[tc.shape](tc.mod...)
			if q.Shape() != tc.shape {
				t.Fatalf("seed is a %s, want a %s", q.Shape(), tc.shape)
			}
			in := tc.in
			in.QuestionID, in.Decider = q.ID, s.identify(apiAda).Decider
			tr, err := s.answerBuild(in)(q, nextNow)
			if tc.want == "" {
				refusals[tc.shape] = true
				if ErrorCode(err) != CodeInvalid || !strings.Contains(ErrorMessage(err), tc.wantErr) {
					t.Fatalf("err %v, want invalid saying %q", err, tc.wantErr)
				}
				return
			}
			changes[tc.shape] = true
			if err != nil {
				t.Fatal(err)
			}
			got := "close"
			switch {
			case tr.Vote != nil:
				got = "vote"
			case len(tr.Items) > 0:
				var p map[string][]string
				if err := json.Unmarshal(tr.ItemEvent.Payload, &p); err != nil || len(p) != 1 {
					t.Fatalf("item event payload %s: %v", tr.ItemEvent.Payload, err)
				}
				for key := range p {
					got = key
				}
			}
			if got != tc.want {
				t.Fatalf("the transition is a %s, want a %s: %+v", got, tc.want, tr)
			}
			if tr.Resolution == nil || tr.Resolution.State != StateAnswered || tr.Resolution.Decider.ID != "ada" {
				t.Errorf("resolution %+v", tr.Resolution)
			}
			// What the kind built is what its rule then applies.
			if _, err := Next(q, completeAnswer(tr, q)); err != nil {
				t.Errorf("Next refuses what the kind built: %v", err)
			}
		})
	}
	for _, sh := range shapes {
		if !changes[sh] || !refusals[sh] {
			t.Errorf("shape %q has no row that changes it or none that is refused", sh)
		}
	}
}

// completeAnswer is tr as the chokepoint hands it to Next.
func completeAnswer(tr Transition, q *Question) Transition {
	tr.QuestionID, tr.Now = q.ID, nextNow
	return tr
}
