package core_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// A person who asked for direct messages, on a route whose room is their
// own account (an email route mailing carol's address), gets the card
// once, from the room, and so does each reminder; a person whose account
// is not a room still gets theirs.
func TestDirectMessageNotSentTwiceToARoomThatIsThePerson(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	svc, err := core.New(st, core.Config{ActorKey: []byte("k"),
		Routes: map[string]core.Route{"ops": {
			Rooms:       []core.Room{{Surface: core.SurfaceEmail, ID: "carol@example.com"}},
			People:      []string{"person:carol", "person:dan"},
			RemindEvery: time.Hour,
		}},
		People: map[string]core.Person{
			"carol": {IDs: ids("email", "carol@example.com"), DM: true},
			"dan":   {IDs: ids("email", "dan@example.com"), DM: true},
		}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("Remind = %d, %v", n, err)
	}
	ds, err := st.Claim(ctx, core.SurfaceEmail, "check", 100, time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	to := map[string]int{}
	for _, d := range ds {
		to[d.Room]++
	}
	want := map[string]int{"carol@example.com": 2, core.DMRoom("dan@example.com"): 2}
	if len(to) != len(want) || to["carol@example.com"] != 2 || to[core.DMRoom("dan@example.com")] != 2 {
		t.Fatalf("mails by room %v, want %v (a post and a reminder each)", to, want)
	}
}

// TestDirectMessagesGoWhereThePersonMayAnswer: a person's direct message
// goes to a surface the route lets them answer on (their preferred one
// when it does, else one that does), and a reminder's goes only to those
// who have not acted yet. Before, bob, listed on the route by his Slack
// account, was sent his card on Telegram, where every button refused
// him; and carol, who had answered her item, was still reminded.
func TestDirectMessagesGoWhereThePersonMayAnswer(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	bothIDs := func(slack, telegram string) map[core.Surface][]string {
		return map[core.Surface][]string{core.SurfaceSlack: {slack}, core.SurfaceTelegram: {telegram}}
	}
	svc, err := core.New(st, core.Config{ActorKey: []byte("k"),
		Routes: map[string]core.Route{"ops": {
			Deciders:    map[core.Surface][]string{core.SurfaceSlack: {"U-bob"}},
			People:      []string{"person:carol"},
			RemindEvery: time.Hour,
		}},
		People: map[string]core.Person{
			"bob":   {IDs: bothIDs("U-bob", "2002"), DM: true, Prefer: core.SurfaceTelegram},
			"carol": {IDs: bothIDs("U-carol", "2003"), DM: true, Prefer: core.SurfaceTelegram},
		}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	opts := []core.FormOption{{ID: "o1", Label: "yes"}, {ID: "o2", Label: "no"}}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindForm, Agent: "a", RunID: "r", Text: "Two things", Reversibility: core.Reversible, Route: "ops",
		Items: []core.FormItem{{ID: "q1", Question: "One?", Options: opts}, {ID: "q2", Question: "Two?", Options: opts}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceTelegram, ID: "2003"},
		Items: []core.ItemInput{{ItemID: "q1", OptionID: "o1"}}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if _, err := svc.Remind(ctx); err != nil {
		t.Fatal(err)
	}
	to := map[string][]string{}
	for _, sf := range []core.Surface{core.SurfaceSlack, core.SurfaceTelegram} {
		ds, err := st.Claim(ctx, sf, "check", 100, time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			to[d.Room] = append(to[d.Room], string(d.Kind))
		}
	}
	if got := to[core.DMRoom("2002")]; len(got) != 0 {
		t.Errorf("bob was messaged on Telegram, where the route does not let him answer: %v", got)
	}
	if got := to[core.DMRoom("U-bob")]; len(got) != 2 {
		t.Errorf("bob's messages on Slack: %v, want the post and a reminder", got)
	}
	if got := to[core.DMRoom("2003")]; len(got) != 1 || got[0] != string(core.DeliverPost) {
		t.Errorf("carol's messages on Telegram: %v, want the post alone (she has answered since)", got)
	}
}
