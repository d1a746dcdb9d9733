package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// discordEditor is what the couriers here share: they edit Discord
// cards, and remind and digest nothing.
type discordEditor struct{}

func (discordEditor) Surface() core.Surface                                { return core.SurfaceDiscord }
func (discordEditor) Remind(context.Context, *core.Question, string) error { return nil }
func (discordEditor) Digest(context.Context, core.Digest, string) error    { return nil }

// slowEditor is a Discord channel reduced to what its cards show: each
// card's message id maps to the state and version it was last rendered
// from. Its first edit is slow: it renders, signals entered, and lands
// only once the test releases it.
type slowEditor struct {
	discordEditor
	mu      sync.Mutex
	shows   map[string]shown
	edits   int
	entered chan struct{}
	release chan struct{}
}

type shown struct {
	state   core.State
	version int64
}

func (c *slowEditor) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	card.ID = "m1"
	c.show(card.ID, q)
	return card, nil
}

func (c *slowEditor) Update(_ context.Context, q *core.Question, card core.MessageRef) error {
	rendered := *q // as read before the call
	c.mu.Lock()
	c.edits++
	first := c.edits == 1
	c.mu.Unlock()
	if first {
		close(c.entered)
		<-c.release
	}
	c.show(card.ID, &rendered)
	return nil
}

func (c *slowEditor) show(id string, q *core.Question) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shows[id] = shown{state: q.State, version: q.Version}
}

// TestAnOlderEditLandingLastIsRepaired: a card edit rendered from an
// older version of the question that reaches the platform after a newer
// state was shown is followed by an edit of the question as it now
// stands. The audit's case on Discord: a form item answered elsewhere
// queues an edit, which reads the form still open and is slow on its way;
// meanwhile the last item is clicked on the card itself, the click's
// response shows the closed card, and the held edit of that close is
// cancelled since the question is still at the version shown; the slow
// edit then lands. Before, the card was left showing the form open with
// live buttons, and nothing was queued to put it right (held.go: "never
// a card left showing an old state").
func TestAnOlderEditLandingLastIsRepaired(t *testing.T) {
	ctx := t.Context()
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceDiscord, ID: "D1"}},
		Deciders: map[core.Surface][]string{core.SurfaceDiscord: {"U1"}, core.SurfaceAPI: {"*"}},
	}}})
	c := &slowEditor{shows: map[string]shown{}, entered: make(chan struct{}), release: make(chan struct{})}
	opts := []core.FormOption{{ID: "o1", Label: "yes"}, {ID: "o2", Label: "no"}}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindForm, Agent: "a", RunID: "r", Text: "Two things", Reversibility: core.Reversible,
		Route: "ops", Items: []core.FormItem{{ID: "q1", Question: "One?", Options: opts}, {ID: "q2", Question: "Two?", Options: opts}}})
	if err != nil {
		t.Fatal(err)
	}
	claim := func() []core.Delivery {
		t.Helper()
		ds, err := st.Claim(ctx, core.SurfaceDiscord, "c1", 100, time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	posts := claim()
	if len(posts) != 1 || posts[0].Kind != core.DeliverPost {
		t.Fatalf("the ask's deliveries: %+v", posts)
	}
	if err := svc.DeliverOne(ctx, c, posts[0], nil); err != nil {
		t.Fatalf("post: %v", err)
	}

	// An item answered elsewhere: the card's edit (v4, say) is claimed
	// and sent, and is slow on its way.
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"},
		Items: []core.ItemInput{{ItemID: "q1", OptionID: "o1"}}}); err != nil {
		t.Fatal(err)
	}
	edits := claim()
	if len(edits) != 1 || edits[0].Kind != core.DeliverUpdate {
		t.Fatalf("the item's deliveries: %+v", edits)
	}
	sent := make(chan error, 1)
	go func() { sent <- svc.DeliverOne(ctx, c, edits[0], nil) }()
	select {
	case <-c.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the edit never started")
	}

	// The last item clicked on the card itself: the click's response
	// shows the closed card, and the close's held edit is cancelled.
	o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceDiscord, ID: "U1"},
		Items: []core.ItemInput{{ItemID: "q2", OptionID: "o2"}}, Shown: "m1"})
	if err != nil || !o.Closed || o.Held == nil {
		t.Fatalf("the click that closes the form: %+v, %v; want it closed, its card's edit held", o, err)
	}
	c.show("m1", o.Question) // the interaction's response
	if err := svc.Delivered(ctx, o.Held); err != nil {
		t.Fatal(err)
	}

	// The slow edit lands.
	close(c.release)
	select {
	case err := <-sent:
		if err != nil {
			t.Fatalf("the slow edit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the slow edit never returned")
	}
	c.mu.Lock()
	got := c.shows["m1"]
	c.mu.Unlock()
	if got.state != core.StateAnswered || got.version != o.Question.Version {
		t.Fatalf("the card shows the question %s at version %d; want it answered, at version %d", got.state, got.version, o.Question.Version)
	}
}

// busyEditor is a card whose every edit the question outruns: each edit,
// once landed, sees another card recorded (the question moves on).
type busyEditor struct {
	discordEditor
	svc   *core.Service
	edits int
}

func (c *busyEditor) Post(_ context.Context, _ *core.Question, card core.MessageRef) (core.MessageRef, error) {
	card.ID = "m1"
	return card, nil
}

func (c *busyEditor) Update(ctx context.Context, q *core.Question, _ core.MessageRef) error {
	c.edits++
	id := "m-" + string(rune('a'+c.edits))
	return c.svc.RecordMessage(ctx, q.ID, core.MessageRef{Surface: core.SurfaceDiscord, Room: "D2", ID: id, Delivery: "other:" + id, Kind: core.DeliverPost})
}

// TestAnEditBehindABusyQuestionIsHandedBack: an update whose card the
// question outruns edit after edit edits it a bounded number of times,
// then hands itself back (core.NotYet, no attempt) to edit again later,
// rather than holding its room's lane for as long as the question moves.
func TestAnEditBehindABusyQuestionIsHandedBack(t *testing.T) {
	ctx := t.Context()
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceDiscord, ID: "D1"}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
	}}})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	c := &busyEditor{svc: svc}
	ds, err := st.Claim(ctx, core.SurfaceDiscord, "c1", 100, time.Hour, 0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("the ask's deliveries: %+v, %v", ds, err)
	}
	if err := svc.DeliverOne(ctx, c, ds[0], nil); err != nil {
		t.Fatal(err)
	}
	card := core.MessageRef{Surface: core.SurfaceDiscord, Room: "D1", ID: "m1", Delivery: ds[0].Key, Kind: core.DeliverPost}
	edit := core.Delivery{Key: "edit", Kind: core.DeliverUpdate, Surface: core.SurfaceDiscord, Room: "D1", QuestionID: q.ID, Message: &card}
	err = svc.DeliverOne(ctx, c, edit, nil)
	var ny *core.NotYet
	if !errors.As(err, &ny) || ny.After <= 0 {
		t.Fatalf("the edit behind a busy question ended with %v; want it handed back for later", err)
	}
	if c.edits < 2 || c.edits > 5 {
		t.Fatalf("%d edits; want the card edited again, a bounded number of times", c.edits)
	}
}
