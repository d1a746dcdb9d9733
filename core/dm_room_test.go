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
