package core_test

import (
	"context"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestHasActedCountsThePerson: an account has acted on a question when
// it did, or when the person it belongs to did from any surface; an
// account of someone else, or of nobody configured, has not. Without a
// Service (a courier built without one) only the account itself counts.
func TestHasActedCountsThePerson(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{
		People: map[string]core.Person{
			"carol": {IDs: ids("slack", "UCAROL", "email", "carol@example.test")},
			"dave":  {IDs: ids("slack", "UDAVE", "email", "dave@example.test")},
		},
		Routes: map[string]core.Route{"ops": {People: []string{"person:carol", "person:dave"}, Quorum: 2}}})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Route: "ops", Tool: "deploy",
		Arguments: []byte(`{}`), Agent: "bot", RunID: "r1", ToolCallID: "c1", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceSlack, ID: "UCAROL"},
		OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	if q, err = svc.Get(t.Context(), q.ID); err != nil || !q.Open() {
		t.Fatalf("after carol's vote: %v, %+v", err, q)
	}
	var none *core.Service
	for _, c := range []struct {
		svc     *core.Service
		surface core.Surface
		id      string
		want    bool
	}{
		{svc, core.SurfaceSlack, "UCAROL", true},
		{svc, core.SurfaceEmail, "carol@example.test", true}, // the person voted, from Slack
		{svc, core.SurfaceEmail, "dave@example.test", false},
		{svc, core.SurfaceSlack, "UDAVE", false},
		{svc, core.SurfaceEmail, "someone@example.test", false},
		{none, core.SurfaceSlack, "UCAROL", true},
		{none, core.SurfaceEmail, "carol@example.test", false},
	} {
		if got := c.svc.HasActed(q, c.surface, c.id); got != c.want {
			t.Errorf("HasActed(%s %s, service %v) = %v, want %v", c.surface, c.id, c.svc != nil, got, c.want)
		}
	}
}

// remindRecorder is a courier that is handed its reminders' deliveries.
type remindRecorder struct {
	rooms []string
	got   []core.Delivery
}

func (*remindRecorder) Surface() core.Surface { return core.SurfaceEmail }
func (*remindRecorder) Post(_ context.Context, _ *core.Question, m core.MessageRef) (core.MessageRef, error) {
	return m, nil
}
func (*remindRecorder) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (r *remindRecorder) Remind(_ context.Context, _ *core.Question, room string) error {
	r.rooms = append(r.rooms, room)
	return nil
}
func (*remindRecorder) Digest(context.Context, core.Digest, string) error { return nil }
func (r *remindRecorder) RemindDelivery(_ context.Context, _ *core.Question, d core.Delivery) error {
	r.got = append(r.got, d)
	return nil
}

// TestDeliverOneHandsAReminderItsDelivery: a courier that takes a
// reminder's delivery (core.DeliveryReminder) is handed it, key and all,
// rather than its room alone.
func TestDeliverOneHandsAReminderItsDelivery(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Text: "Which?", Agent: "a", RunID: "r",
		Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	d := core.Delivery{Kind: core.DeliverRemind, Key: string(q.ID) + ":remind1:email:alice@example.test",
		Surface: core.SurfaceEmail, Room: "alice@example.test", QuestionID: q.ID}
	c := &remindRecorder{}
	if err := svc.DeliverOne(t.Context(), c, d, nil); err != nil {
		t.Fatal(err)
	}
	if len(c.got) != 1 || c.got[0].Key != d.Key || c.got[0].Room != d.Room || len(c.rooms) != 0 {
		t.Fatalf("handed %+v, reminded rooms %v: want the delivery alone", c.got, c.rooms)
	}
}
