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

// appendFails is a store whose event log takes nothing more: every
// Append fails, as a store going away between two calls would have it.
type appendFails struct{ core.Store }

func (appendFails) Append(context.Context, core.Event) (core.Event, error) {
	return core.Event{}, errors.New("store went away")
}

// heard counts the events the observer hears went unrecorded.
type heard struct {
	mu         sync.Mutex
	unrecorded map[core.EventKind]int
}

func (h *heard) Unrecorded(k core.EventKind) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unrecorded[k]++
}
func (*heard) Asked(*core.Question)                          {}
func (*heard) Refused(string, string)                        {}
func (*heard) Resolved(string, time.Duration)                {}
func (*heard) Closed(*core.Question)                         {}
func (*heard) Delivered(core.Surface, string, time.Duration) {}
func (*heard) Woke(time.Duration)                            {}
func (*heard) Parked(int)                                    {}

// TestUnrecordedEventIsHeard: a refusal whose event the store fails to
// append is still the refusal the person is told (not an internal
// error), and the observer hears that its event is missing, where the
// failure was dropped unheard before.
func TestUnrecordedEventIsHeard(t *testing.T) {
	svc := coretest.Service(t, appendFails{coretest.OpenStore(t)}, coretest.Options{Routes: map[string]core.Route{
		"default": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}}}})
	h := &heard{unrecorded: map[core.EventKind]int{}}
	svc.SetObserver(h)
	q, err := svc.Ask(t.Context(), validDecision())
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "mallory"}, OptionID: "x"})
	if core.ErrorCode(err) != core.CodeForbidden {
		t.Fatalf("mallory's answer: %v; want forbidden", err)
	}
	if h.unrecorded[core.EventRefused] != 1 || len(h.unrecorded) != 1 {
		t.Fatalf("heard unrecorded: %v; want the one refusal", h.unrecorded)
	}
}
