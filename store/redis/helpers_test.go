package redis_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// question is a valid open clarification in the given shard.
func question(shard int, run core.RunID, created time.Time) *core.Question {
	return &core.Question{
		ID: core.NewID(shard), Kind: core.KindClarification, Agent: "agent-a", RunID: run,
		Text: "Which region?", Reversibility: core.Reversible, Route: "ops",
		CreatedAt: created, Deadline: created.Add(time.Hour), Timeout: core.Duration(time.Hour),
		OnTimeout: core.OnTimeoutDeny, State: core.StateOpen,
	}
}

func formQuestion(shard int, run core.RunID, created time.Time) *core.Question {
	q := question(shard, run, created)
	q.Kind = core.KindForm
	q.Items = []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
	}
	return q
}

func event(q *core.Question, kind core.EventKind, at time.Time) core.Event {
	return core.Event{QuestionID: q.ID, RunID: q.RunID, At: at, Kind: kind, Surface: core.SurfaceSystem}
}

func post(q *core.Question, s core.Surface, room string) core.Delivery {
	return core.Delivery{Key: string(q.ID) + ":post:" + string(s) + ":" + room, Kind: core.DeliverPost, Surface: s,
		Room: room, QuestionID: q.ID, CreatedAt: q.CreatedAt}
}

func decider(id string) core.Decider {
	return core.Decider{Surface: core.SurfaceAPI, ID: id, Name: "Operator " + id}
}

// answer is a transition that closes q as answered by who.
func answer(q *core.Question, who string, at time.Time) core.Transition {
	return core.Transition{
		QuestionID: q.ID,
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: decider(who), At: at, Answer: "from " + who},
		Event:      event(q, core.EventAnswered, at),
		Now:        at,
	}
}

func mustCreate(t testing.TB, s core.Store, q *core.Question, out ...core.Delivery) {
	t.Helper()
	if err := s.Create(t.Context(), q, event(q, core.EventAsked, q.CreatedAt), out); err != nil {
		t.Fatalf("create %s: %v", q.ID, err)
	}
}

func mustGet(t testing.TB, s core.Store, id core.QuestionID) *core.Question {
	t.Helper()
	q, err := s.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return q
}

// kinds lists the kinds of q's events in the log.
func kinds(t testing.TB, s core.Store, id core.QuestionID) []core.EventKind {
	t.Helper()
	evs, err := s.Events(t.Context(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.EventKind
	for _, e := range evs {
		if e.QuestionID == id {
			out = append(out, e.Kind)
		}
	}
	return out
}

// drain claims and acks everything available on a surface.
func drain(t testing.TB, s core.Store, surface core.Surface) []core.Delivery {
	t.Helper()
	var out []core.Delivery
	for {
		ds, err := s.Claim(t.Context(), surface, "drain", 100, time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return out
		}
		for _, d := range ds {
			if err := s.Ack(t.Context(), surface, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, ds...)
	}
}

// withoutCheckpoints is evs less the checkpoints purges record for the
// audit chain.
func withoutCheckpoints(evs []core.Event) []core.Event {
	var out []core.Event
	for _, e := range evs {
		if e.Kind != core.EventCheckpoint {
			out = append(out, e)
		}
	}
	return out
}
