package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register("RemindersAtIntervalCallOnWhoHasNotActed", testReminders)
	register("DMsToPeopleWhoAskForThem", testDMs)
	register("BootDigestsPerPersonNotPerRoomForPeopleRoutes", testBootPerPerson)
}

// remind runs one reminder pass.
func (e *env) remind() int {
	e.t.Helper()
	n, err := e.svc.Remind(e.t.Context())
	if err != nil {
		e.t.Fatalf("remind: %v", err)
	}
	return n
}

// kindsIn keeps the deliveries of one kind, as "surface room" pairs.
func kindsIn(ds []core.Delivery, k core.DeliveryKind) []string {
	var out []string
	for _, d := range ds {
		if d.Kind == k {
			out = append(out, string(d.Surface)+" "+d.Room)
		}
	}
	return out
}

func mentionIDs(c card.Card) []string {
	var out []string
	for _, m := range c.Mentions {
		out = append(out, m.ID)
	}
	return out
}

func testReminders(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := form()
	in.Route = "nag"
	q := e.ask(in)
	other := e.ask(decision("nag")) // closed before its first reminder
	e.claimAll(core.SurfaceSlack, "c")
	e.claimAll(core.SurfaceTelegram, "c")
	if _, err := e.svc.Decline(t.Context(), other.ID, aliceOn(core.SurfaceSlack)); err != nil {
		t.Fatal(err)
	}
	e.claimAll(core.SurfaceSlack, "c")
	e.claimAll(core.SurfaceTelegram, "c")

	e.clock.Advance(59 * time.Minute)
	if n := e.remind(); n != 0 {
		t.Fatalf("%d reminders before the first interval", n)
	}
	// The first interval: two replicas run the pass at once, and one
	// reminder goes out, in the room and to Bob's DM.
	e.clock.Advance(time.Minute)
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i, svc := range []*core.Service{e.svc, e.service()} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := svc.Remind(t.Context())
			if err != nil {
				t.Errorf("remind: %v", err)
			}
			counts[i] = n
		}()
	}
	wg.Wait()
	if counts[0]+counts[1] != 1 {
		t.Fatalf("reminders %v, want exactly one between two replicas", counts)
	}
	if got := kindsIn(e.claimAll(core.SurfaceSlack, "c"), core.DeliverRemind); !cmp.Equal(got, []string{"slack C3"}) {
		t.Fatalf("slack reminders %v", got)
	}
	if got := kindsIn(e.claimAll(core.SurfaceTelegram, "c"), core.DeliverRemind); !cmp.Equal(got, []string{"telegram " + core.DMRoom("2002")}) {
		t.Fatalf("telegram reminders %v, want Bob's DM", got)
	}
	got := e.get(q.ID)
	if ids := mentionIDs(card.Reminder(e.svc, got, core.SurfaceSlack, "C3")); !cmp.Equal(ids, []string{"U-alice", "U-bob"}) {
		t.Fatalf("the first reminder calls on %v", ids)
	}
	// Alice answers one item: she has acted, and the next reminder calls
	// on Bob alone, on each surface by his account there.
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: aliceOn(core.SurfaceTelegram),
		Items: []core.ItemInput{{ItemID: "day", OptionID: "mon"}}}); err != nil {
		t.Fatal(err)
	}
	e.claimAll(core.SurfaceSlack, "c")
	e.clock.Advance(30 * time.Minute)
	if n := e.remind(); n != 0 {
		t.Fatalf("%d reminders between intervals", n)
	}
	e.clock.Advance(30 * time.Minute)
	if n := e.remind(); n != 1 {
		t.Fatalf("%d reminders at the second interval, want 1", n)
	}
	got = e.get(q.ID)
	if ids := mentionIDs(card.Reminder(e.svc, got, core.SurfaceSlack, "C3")); !cmp.Equal(ids, []string{"U-bob"}) {
		t.Fatalf("the second reminder calls on %v, want Bob alone", ids)
	}
	if ids := mentionIDs(card.Reminder(e.svc, got, core.SurfaceTelegram, "-1")); !cmp.Equal(ids, []string{"2002"}) {
		t.Fatalf("on telegram the reminder calls on %v", ids)
	}
	// The cap is two.
	e.clock.Advance(5 * time.Hour)
	if n := e.remind(); n != 0 {
		t.Fatalf("%d reminders past the cap", n)
	}
	var reminded int
	for _, ev := range e.events(q.ID) {
		if ev.Kind == core.EventReminded {
			reminded++
		}
	}
	if reminded != 2 {
		t.Fatalf("%d reminded events, want 2", reminded)
	}
	for _, ev := range e.events(other.ID) {
		if ev.Kind == core.EventReminded {
			t.Fatalf("a closed question was reminded: %+v", ev)
		}
	}
}

func testDMs(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("nag"))
	// The card goes to the room, and to Bob's DM on his preferred surface.
	if got := kindsIn(e.claimAll(core.SurfaceSlack, "c"), core.DeliverPost); !cmp.Equal(got, []string{"slack C3"}) {
		t.Fatalf("slack posts %v", got)
	}
	if got := kindsIn(e.claimAll(core.SurfaceTelegram, "c"), core.DeliverPost); !cmp.Equal(got, []string{"telegram " + core.DMRoom("2002")}) {
		t.Fatalf("telegram posts %v, want Bob's DM", got)
	}
	// Both cards are recorded; Bob's click in his DM closes the question
	// and both copies get their edit.
	for _, ref := range []core.MessageRef{
		{Surface: core.SurfaceSlack, Room: "C3", ID: "1.1", Delivery: string(q.ID) + ":post:slack:C3"},
		{Surface: core.SurfaceTelegram, Room: core.DMRoom("2002"), ID: "77", Delivery: string(q.ID) + ":post:dm:bob"},
	} {
		if err := e.svc.RecordMessage(t.Context(), q.ID, ref); err != nil {
			t.Fatal(err)
		}
	}
	bob := core.Decider{Surface: core.SurfaceTelegram, ID: "2002", Name: "bobby"}
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: bob, OptionID: "pg"}); err != nil {
		t.Fatalf("bob's answer from his DM: %v", err)
	}
	if got := kindsIn(e.claimAll(core.SurfaceSlack, "c"), core.DeliverUpdate); len(got) != 1 {
		t.Fatalf("slack updates %v, want the room card's", got)
	}
	if got := kindsIn(e.claimAll(core.SurfaceTelegram, "c"), core.DeliverUpdate); len(got) != 1 {
		t.Fatalf("telegram updates %v, want the DM card's", got)
	}
}

func testBootPerPerson(t *testing.T, h Harness) {
	e := newEnv(t, h)
	if _, err := e.svc.Boot(t.Context()); err != nil {
		t.Fatal(err)
	}
	nag, ops := e.ask(decision("nag")), e.ask(decision("ops"))
	for _, sf := range core.ChatSurfaces {
		e.claimAll(sf, "c")
	}
	e.clock.Advance(2 * time.Hour)
	e.restart()
	if _, err := e.svc.Boot(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Bob, who takes DMs, gets one digest in his DM, of what is open for
	// him across every route; nag's room gets none; ops (accounts only)
	// keeps its digests per room.
	var bobs []core.Delivery
	for _, d := range e.claimAll(core.SurfaceTelegram, "c") {
		switch {
		case d.Kind != core.DeliverDigest:
		case d.Person == "bob" && d.Room == core.DMRoom("2002"):
			bobs = append(bobs, d)
		case d.Person != "" || d.Room != "-1001":
			t.Fatalf("telegram digest %+v: want Bob's DM and ops's room alone", d)
		}
	}
	if len(bobs) != 1 {
		t.Fatalf("%d digests for bob, want 1", len(bobs))
	}
	for _, d := range e.claimAll(core.SurfaceSlack, "c") {
		if d.Kind == core.DeliverDigest && d.Room != "C1" {
			t.Fatalf("slack digest %+v: only ops's room gets one", d)
		}
	}
	dg, err := e.svc.Digest(t.Context(), core.DigestQuery{From: bobs[0].Since, To: bobs[0].CreatedAt, Person: bobs[0].Person})
	if err != nil {
		t.Fatal(err)
	}
	if len(dg.Open) != 1 || dg.Open[0].ID != nag.ID {
		t.Fatalf("bob's digest holds %d open, want %s alone (not %s)", len(dg.Open), nag.ID, ops.ID)
	}
}
