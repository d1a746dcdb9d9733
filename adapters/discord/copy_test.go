package discord

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestHTTPCopyOfAClickIsToldItMayHaveCounted: a proxy in front of the
// interactions endpoint that retries sends Discord's one request twice,
// and Discord gets the answer to the copy alone (the proxy gave up on the
// first). The copy acts on nothing, as its first copy was taken in hand,
// but its clicker is told, privately, that the click may or may not have
// counted and how to find out (card.TimedOutNote): what became of the
// first copy is not the copy's to know. Before, the copy was answered
// with a bare acknowledgement (a deferred update), so the clicker saw
// nothing at all, whether the click had counted or been lost.
func TestHTTPCopyOfAClickIsToldItMayHaveCounted(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(decisionInput())
	m := r.card(q.ID, nil)
	click := r.fake.Click(alice, m.ID, r.button(m, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1}).CustomID)
	if resp := r.post(click); resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("the first copy: %d %q, want the card updated", resp.Type, resp.Content())
	}
	before := r.events(q.ID)
	resp := r.post(click)
	if resp.Type != discordfake.ResponseMessage || resp.Flags()&discordfake.FlagEphemeral == 0 || resp.Content() != card.TimedOutNote {
		t.Fatalf("the copy: type %d, flags %d, %q; want a private note that it may have counted", resp.Type, resp.Flags(), resp.Content())
	}
	if after := r.events(q.ID); len(after) != len(before) {
		t.Fatalf("the copy reached core: events %v, then %v", before, after)
	}
	if got := r.question(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" {
		t.Fatalf("after the copy: %s %+v", got.State, got.Resolution)
	}
}

// hangUpStore is a store whose first commit once armed writes, says so
// (committed), and answers only once its context has ended, with
// success: a write that went through as the request it came in went
// away.
type hangUpStore struct {
	core.Store
	armed     atomic.Bool
	committed chan struct{}
}

func (s *hangUpStore) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	q, err := s.Store.Commit(ctx, c)
	if err == nil && s.armed.CompareAndSwap(true, false) {
		close(s.committed)
		<-ctx.Done()
	}
	return q, err
}

// TestHTTPFirstCopyHungUpOnKeepsTheHeldUpdate: when the requester (a
// retrying proxy that gave up on this copy) hangs up while the click is
// recorded, the card updated in the response reached nobody, though the
// first write into the closed connection does not fail. The card's held
// update stays due and edits the card after its hold, so that the card
// shows what its copy's note (copyNote) says it will. Before, the
// response counted as delivered, the held update was dropped, and the
// card went on showing the question open, its buttons live.
func TestHTTPFirstCopyHungUpOnKeepsTheHeldUpdate(t *testing.T) {
	sim := core.NewSimClock(time.Now())
	st := &hangUpStore{committed: make(chan struct{})}
	r := newRig(t, rigOptions{clock: sim, wrap: func(s core.Store) core.Store { st.Store = s; return st }})
	// The endpoint again, on a server that says when a request's
	// handling has ended.
	mux := http.NewServeMux()
	r.a.Mount(mux)
	handled := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mux.ServeHTTP(w, req)
		handled <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	q := r.ask(decisionInput())
	m := r.card(q.ID, nil)
	r.drained()
	st.armed.Store(true)
	click := r.fake.Click(alice, m.ID, r.button(m, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1}).CustomID)
	ctx, hangUp := context.WithCancel(t.Context())
	go func() {
		_, _, _ = r.fake.PostWith(ctx, &http.Client{}, srv.URL+InteractionsPath, click, discordfake.Signed)
	}()
	wait := func(c <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatal(what)
		}
	}
	wait(st.committed, "the click was never recorded")
	hangUp()
	wait(handled, "the click's handling never ended")
	if got := r.question(q.ID); got.State != core.StateAnswered {
		t.Fatalf("after the click: %s", got.State)
	}
	r.heldUpdateEdits(sim, m.ID, "a response to a requester that hung up")
}
