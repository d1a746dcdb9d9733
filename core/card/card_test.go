package card_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

var cardT0 = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

func cardQ(kind core.Kind) *core.Question {
	q := &core.Question{ID: core.NewID(0), Kind: kind, Agent: "bot", RunID: "run-1", Text: "What now?", Context: "Some context.",
		Reversibility: core.HardToReverse, CreatedAt: cardT0, Deadline: cardT0.Add(time.Hour), State: core.StateOpen}
	switch kind {
	case core.KindDecision:
		q.Options = []core.Option{{ID: "a", Title: "A", Writeup: "wa", Recommended: true}, {ID: "b", Title: "B", Writeup: "wb"}}
	case core.KindApproval:
		q.Call = &core.ToolCall{Tool: "sql", Arguments: json.RawMessage(`{"q":"drop"}`), ArgumentsSHA256: strings.Repeat("ab", 32)}
	case core.KindForm:
		q.Items = []core.FormItem{
			{ID: "i1", Question: "Day?", Options: []core.FormOption{{ID: "mon", Label: "Mon", Recommended: true}, {ID: "fri", Label: "Fri"}}},
			{ID: "i2", Question: "Tone?", Options: []core.FormOption{{ID: "s", Label: "Short"}, {ID: "l", Label: "Long"}}},
		}
	}
	return q
}

// allActions are a card's buttons in the order a renderer draws them.
func allActions(c card.Card) []card.Action {
	var out []card.Action
	for _, s := range c.Sections {
		out = append(out, s.Actions...)
	}
	return append(out, c.Actions...)
}

func labels(as []card.Action) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Label)
	}
	return out
}

// TestCardActionsByKind pins the one set of buttons each kind gets on
// every platform, and that every button's ref is one the chokepoint takes.
func TestCardActionsByKind(t *testing.T) {
	for _, c := range []struct {
		kind core.Kind
		want []string
	}{
		{core.KindClarification, []string{card.LabelAnswer, card.LabelDecline}},
		{core.KindDecision, []string{"1. A (Recommended)", "2. B", card.LabelDecline}},
		{core.KindApproval, []string{card.LabelApprove, card.LabelDeny, card.LabelDecline}},
		{core.KindForm, []string{"1. Mon (Recommended)", "1. Fri", "1. Something else", "2. Short", "2. Long", "2. Something else", card.LabelDecline}},
	} {
		q := cardQ(c.kind)
		view := card.New(q, core.MessageRef{Kind: core.DeliverPost})
		as := allActions(view)
		if got := labels(as); !slices.Equal(got, c.want) {
			t.Errorf("%s: actions %q, want %q", c.kind, got, c.want)
		}
		for _, a := range as {
			if a.Ref.Encode() == "" {
				t.Errorf("%s: %q carries a ref that does not encode", c.kind, a.Label)
			}
			if a.Ref.Action == core.RefDecline {
				continue
			}
			if _, err := core.AnswerFor(q, a.Ref, core.Decider{Surface: core.SurfaceAPI, ID: "x"}, "text"); err != nil {
				t.Errorf("%s: %q is not an answer to its question: %v", c.kind, a.Label, err)
			}
			if a.Keep != "" && !strings.HasSuffix(a.Label, a.Keep) {
				t.Errorf("%q does not end with what a cut keeps (%q)", a.Label, a.Keep)
			}
		}
	}
	// Only free text and a deny's reason collect text first.
	appr := allActions(card.New(cardQ(core.KindApproval), core.MessageRef{}))
	if appr[1].Input != card.InputOptional || appr[0].Input != card.InputNone || appr[1].Style != card.StyleDanger {
		t.Fatalf("approval actions %+v", appr)
	}
}

// TestCardMarkersSurviveEdits: what a card was posted as is read from its
// recorded MessageRef, so every edit, open or closed, keeps the markers.
func TestCardMarkersSurviveEdits(t *testing.T) {
	q := cardQ(core.KindDecision)
	m := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1.2", Kind: core.DeliverEscalate, Repeat: true}
	want := []card.Marker{card.MarkerHardToReverse, card.MarkerEscalated, card.MarkerRepeat}
	if got := card.New(q, m).Markers; !slices.Equal(got, want) {
		t.Fatalf("open card markers %v, want %v", got, want)
	}
	q.State = core.StateAnswered
	q.Resolution = &core.Resolution{State: core.StateAnswered, Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Alice"},
		At: cardT0.Add(time.Minute), OptionID: "b"}
	closed := card.New(q, m)
	if !slices.Equal(closed.Markers, want) {
		t.Fatalf("closed card markers %v, want %v", closed.Markers, want)
	}
	if len(allActions(closed)) != 0 || closed.Outcome == nil || closed.Outcome.Choice != "B" || closed.Outcome.By != "Alice" ||
		closed.Outcome.Surface != core.SurfaceSlack || !closed.Meta.Deadline.IsZero() {
		t.Fatalf("closed card %+v", closed)
	}
	// Cards recorded before MessageRef had a kind.
	old := &core.Question{ID: q.ID, Reversibility: "", State: core.StateOpen}
	old.Normalize()
	if got := card.New(old, core.MessageRef{Delivery: string(q.ID) + ":escalate:slack:C1"}); got.As != core.DeliverEscalate {
		t.Fatalf("an old escalated card reads as %s", got.As)
	}
	if got := card.New(old, core.MessageRef{Delivery: string(q.ID) + ":post:slack:C2"}); got.As != core.DeliverPost ||
		!slices.Equal(got.Markers, []card.Marker{card.MarkerUnclassified}) {
		t.Fatalf("an old unclassified card reads as %s %v", got.As, got.Markers)
	}
}

func TestCardFormProgressAndReminder(t *testing.T) {
	q := cardQ(core.KindForm)
	q.Answers = []core.ItemAnswer{{ItemID: "i1", Text: "Tuesday", Decider: core.Decider{Surface: core.SurfaceTelegram, ID: "1", Name: "Bob"}, At: cardT0}}
	q.Messages = []core.MessageRef{{Surface: core.SurfaceTelegram, Room: "-1", ID: "7"}, {Surface: core.SurfaceSlack, Room: "-1", ID: "8"}}
	c := card.New(q, q.Messages[0])
	if c.Progress == nil || c.Progress.String() != "Answered 1/2" {
		t.Fatalf("progress %+v", c.Progress)
	}
	item := c.Sections[1]
	if item.Answer == nil || item.Answer.Text != "Tuesday" || !item.Answer.Own || item.Answer.By != "Bob" || len(item.Actions) != 0 {
		t.Fatalf("answered item %+v", item)
	}
	r := card.NewReminder(q, core.SurfaceTelegram, "-1")
	if r.As != core.DeliverRemind || r.Markers[0] != card.MarkerReminder || r.ReplyTo == nil || r.ReplyTo.ID != "7" || len(allActions(r)) != 0 {
		t.Fatalf("reminder %+v", r)
	}
	if r := card.NewReminder(q, core.SurfaceDiscord, "-1"); r.ReplyTo != nil {
		t.Fatalf("a reminder in a room without the card replies to %+v", r.ReplyTo)
	}
}

// TestRecordedNote: one wording for what counted, whatever the surface.
func TestRecordedNote(t *testing.T) {
	dec, form := cardQ(core.KindDecision), cardQ(core.KindForm)
	form.Answers = []core.ItemAnswer{{ItemID: "i1", OptionID: "fri"}}
	ref := func(q *core.Question, a core.RefAction, item, opt int) core.Ref {
		return core.Ref{QuestionID: q.ID, Action: a, Item: item, Option: opt}
	}
	for _, c := range []struct {
		q    *core.Question
		r    core.Ref
		want string
	}{
		{dec, ref(dec, core.RefOption, -1, 1), "Recorded: B"},
		{dec, ref(dec, core.RefApprove, -1, 0), "Recorded: Approved"},
		{dec, ref(dec, core.RefDeny, -1, 0), "Recorded: Denied"},
		{dec, ref(dec, core.RefDecline, -1, 0), "Recorded: you declined. The agent will proceed on its own judgement."},
		{cardQ(core.KindApproval), ref(dec, core.RefDecline, -1, 0), "Recorded: you declined. The agent makes no call that was not approved."},
		{form, ref(form, core.RefOption, 0, 1), "Recorded (Answered 1/2): Day? → Fri"},
		{form, ref(form, core.RefText, 0, 0), "Recorded (Answered 1/2): your own answer to Day?"},
		{cardQ(core.KindClarification), ref(dec, core.RefText, -1, 0), "Recorded: your answer"},
	} {
		if got := card.RecordedNote(c.q, c.r); got != c.want {
			t.Errorf("RecordedNote(%c) = %q, want %q", c.r.Action, got, c.want)
		}
	}
}

// TestQuorumApprovalOffersNoEdit: an editable approval offers "Edit and
// approve", unless it needs a quorum, where a vote takes no edit.
func TestQuorumApprovalOffersNoEdit(t *testing.T) {
	q := cardQ(core.KindApproval)
	q.Call.Editable = &core.Editable{Keys: []string{"q"}}
	has := func(q *core.Question) bool {
		for _, s := range card.New(q, core.MessageRef{}).Sections {
			for _, a := range s.Actions {
				if a.Label == card.LabelEditApprove {
					return true
				}
			}
		}
		return false
	}
	if !has(q) {
		t.Fatal("an editable approval offers no edit")
	}
	q.Quorum = 2
	if has(q) {
		t.Fatal("an approval that needs two people offers an edit")
	}
}

// TestClosedFormKeepsItsAnswers: a form that closes before every item is
// answered (a timeout, a cancel, a decline, its run ending) still shows
// the answers given, by whom: the agent resumes with them, and the card
// is where the people who gave them look. Before, a closed unfinished
// form showed only its outcome line.
func TestClosedFormKeepsItsAnswers(t *testing.T) {
	for _, state := range []core.State{core.StateTimedOut, core.StateCancelled, core.StateDeclined, core.StateExpired} {
		q := cardQ(core.KindForm)
		q.Answers = []core.ItemAnswer{{ItemID: "i2", OptionID: "l", Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Alice"}, At: cardT0}}
		q.State = state
		q.Resolution = &core.Resolution{State: state, At: cardT0.Add(time.Hour)}
		c := card.New(q, core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1"})
		if c.Outcome == nil || !strings.Contains(c.Outcome.Choice, "Tone?: Long") || c.Outcome.Label == "" {
			t.Fatalf("%s: outcome %+v; want the answer given before the close", state, c.Outcome)
		}
		if len(allActions(c)) != 0 {
			t.Fatalf("%s: a closed form has buttons: %v", state, labels(allActions(c)))
		}
	}
}
