package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// The update of the card a caller's own response shows (a Discord click
// answered by editing its card) is core's to delay (core/held.go): these
// are behaviours of the close, run by core on the embedded store. What a
// store promises of a delayed delivery is cases_later.go's.
func init() {
	registerDomain("HeldUpdateFallsDueAfterItsHold", testHeldFallsDue)
	registerDomain("HeldUpdateDroppedByKey", testHeldDropped)
	registerDomain("HeldUpdateOfAChangedQuestionIsNotDropped", testHeldChanged)
}

// newClockedEnv is newEnv on a store whose outbox keeps time by the
// env's simulated clock.
func newClockedEnv(t *testing.T, h Harness) *env {
	t.Helper()
	if h.Clocked == nil {
		t.Fatal("the harness cannot open a store on a simulated clock (Harness.Clocked)")
	}
	clock := core.NewSimClock(epoch)
	e := &env{t: t, h: h, store: h.Clocked(t, clock.Now), clock: clock}
	e.svc = e.service()
	t.Cleanup(func() { e.store.Close() })
	return e
}

// The two cards of a question on route ops, as recorded.
const (
	slackCard    = "1712345678.000100"
	telegramCard = "4242"
)

// askWithCards asks q on route ops (Slack and Telegram), drains its posts
// and records a card on each surface.
func (e *env) askWithCards(in core.AskInput) *core.Question {
	e.t.Helper()
	q := e.ask(in)
	e.claimAll(core.SurfaceSlack, "poster")
	e.claimAll(core.SurfaceTelegram, "poster")
	for _, ref := range []core.MessageRef{
		{Surface: core.SurfaceSlack, Room: "C1", ID: slackCard, Delivery: string(q.ID) + ":post:slack"},
		{Surface: core.SurfaceTelegram, Room: "-1001", ID: telegramCard, Delivery: string(q.ID) + ":post:telegram"},
	} {
		if err := e.svc.RecordMessage(e.t.Context(), q.ID, ref); err != nil {
			e.t.Fatal(err)
		}
	}
	return q
}

// answerShown answers decision q from Slack, the response showing the
// Slack card, and returns the held update.
func (e *env) answerShown(q *core.Question) *core.Pending {
	e.t.Helper()
	o, err := e.svc.Answer(e.t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: "pg", Shown: slackCard,
		Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Uma"}})
	if err != nil {
		e.t.Fatal(err)
	}
	h := o.Held
	if h == nil || h.QuestionID != q.ID || h.Surface != core.SurfaceSlack || h.Key == "" || h.IfVersion == nil || *h.IfVersion != o.Question.Version {
		e.t.Fatalf("held update %+v", h)
	}
	return h
}

// updates claims and acks what surface's outbox has for now, and fails
// unless it is one update per card named, in any order.
func (e *env) updates(surface core.Surface, cards ...string) []core.Delivery {
	e.t.Helper()
	ds := e.claimAll(surface, "editor")
	want := map[string]bool{}
	for _, c := range cards {
		want[c] = true
	}
	for _, d := range ds {
		if d.Kind != core.DeliverUpdate || d.Message == nil || !want[d.Message.ID] {
			e.t.Fatalf("%s: unexpected delivery %+v (want updates of %v)", surface, d, cards)
		}
		delete(want, d.Message.ID)
	}
	if len(ds) != len(cards) {
		e.t.Fatalf("%s: %d deliveries, want updates of %v", surface, len(ds), cards)
	}
	return ds
}

// testHeldFallsDue: the update of the card a response shows is held: not
// claimable before its hold has passed on the store's clock, claimable
// once it has, while the question's other card is updated at once. A drop
// after a claim took it is a no-op.
func testHeldFallsDue(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	q := e.askWithCards(decision("ops"))
	held := e.answerShown(q)
	e.updates(core.SurfaceTelegram, telegramCard)
	e.updates(core.SurfaceSlack)
	e.clock.Advance(core.ShownHold - time.Millisecond)
	e.updates(core.SurfaceSlack)

	e.clock.Advance(time.Millisecond)
	ds, err := e.store.Claim(t.Context(), core.SurfaceSlack, "editor", 10, time.Hour, 0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("claim once the hold passed: %+v, %v", ds, err)
	}
	d := ds[0]
	if d.Key != held.Key || d.Kind != core.DeliverUpdate || d.QuestionID != q.ID || d.Message == nil ||
		d.Message.ID != slackCard || d.Message.Room != "C1" || d.Attempts != 1 {
		t.Fatalf("held update as claimed: %+v", d)
	}
	if dropped, err := e.store.Cancel(t.Context(), *held); err != nil || dropped {
		t.Fatalf("drop of a claimed update: %v, %v; want a no-op", dropped, err)
	}
	if err := e.store.Ack(t.Context(), core.SurfaceSlack, d.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	e.updates(core.SurfaceSlack)
}

// testHeldDropped: once the response carried the card, the held update
// is dropped by its key and never falls due; the other card's update is
// untouched. Dropping again, or an unknown key, is a no-op.
func testHeldDropped(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	q := e.askWithCards(decision("ops"))
	held := e.answerShown(q)
	if dropped, err := e.store.Cancel(t.Context(), *held); err != nil || !dropped {
		t.Fatalf("drop: %v, %v", dropped, err)
	}
	e.clock.Advance(time.Hour)
	e.updates(core.SurfaceSlack)
	e.updates(core.SurfaceTelegram, telegramCard)
	if dropped, err := e.store.Cancel(t.Context(), *held); err != nil || dropped {
		t.Fatalf("second drop: %v, %v; want a no-op", dropped, err)
	}
	unknown := *held
	unknown.Key += "-unknown"
	if dropped, err := e.store.Cancel(t.Context(), unknown); err != nil || dropped {
		t.Fatalf("drop of an unknown key: %v, %v; want a no-op", dropped, err)
	}
	unknown.QuestionID = core.NewID(0)
	if dropped, err := e.store.Cancel(t.Context(), unknown); err != nil || dropped {
		t.Fatalf("drop for an unknown question: %v, %v; want a no-op", dropped, err)
	}
	// Service.Delivered does the same for a caller, and takes nil.
	if err := e.svc.Delivered(t.Context(), held); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Delivered(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	// A card the question does not have holds nothing: its answer's
	// updates go out as usual.
	other := e.askWithCards(decision("ops"))
	o, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: other.ID, OptionID: "pg", Shown: "no-such-card",
		Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1"}})
	if err != nil || o.Held != nil {
		t.Fatalf("answer shown on an unrecorded card: held %+v, %v", o.Held, err)
	}
	e.updates(core.SurfaceSlack, slackCard)
	e.updates(core.SurfaceTelegram, telegramCard)
}

// testHeldChanged: a form item answered on the Slack card holds that
// card's update; another item answered before the response is delivered
// changes the question again, and its edit may have reached the card
// first, so the drop leaves the held update to run and put it right.
func testHeldChanged(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	q := e.askWithCards(form())
	o, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Shown: slackCard,
		Items:   []core.ItemInput{{ItemID: "day", OptionID: "fri"}},
		Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1"}})
	if err != nil || o.Held == nil || o.Closed {
		t.Fatalf("first item: %+v, %v", o, err)
	}
	e.updates(core.SurfaceTelegram, telegramCard)
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"),
		Items: []core.ItemInput{{ItemID: "notes", OptionID: "short"}}}); err != nil {
		t.Fatal(err)
	}
	if dropped, err := e.store.Cancel(t.Context(), *o.Held); err != nil || dropped {
		t.Fatalf("drop after a later change: %v, %v; want the update left to run", dropped, err)
	}
	// The later change's own updates go out at once; the held one once
	// its hold has passed.
	e.updates(core.SurfaceSlack, slackCard)
	e.updates(core.SurfaceTelegram, telegramCard)
	e.clock.Advance(core.ShownHold)
	if ds := e.updates(core.SurfaceSlack, slackCard); ds[0].Key != o.Held.Key {
		t.Fatalf("the held update did not run: %+v", ds[0])
	}
}
