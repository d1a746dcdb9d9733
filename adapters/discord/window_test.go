package discord

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// wallClock is the adapter's and the fake Discord's clock in the tests of
// Discord's three seconds: real time plus what the test says was spent,
// so a slow store costs seconds on it without the test waiting for them.
type wallClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *wallClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *wallClock) spend(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// slowStore is a store whose interaction dedupe (Once) and whose first
// commit, once armed, take the given time on the clock. It keeps how much
// of its context's deadline that commit was given (-1 for none). With
// outlast, that commit writes and then answers only once its context has
// ended, with the context's error: a write whose reply came too late.
type slowStore struct {
	core.Store
	clock          *wallClock
	dedupe, commit time.Duration
	outlast        bool

	mu        sync.Mutex
	armed     bool
	committed bool
	left      time.Duration
}

func (s *slowStore) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

func (s *slowStore) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	slow := s.armed && strings.HasPrefix(key, "seen:discord:interaction:")
	s.mu.Unlock()
	if slow {
		s.clock.spend(s.dedupe)
	}
	return s.Store.Once(ctx, key, ttl)
}

func (s *slowStore) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	s.mu.Lock()
	slow := s.armed && !s.committed
	if slow {
		s.committed, s.left = true, -1
		if dl, ok := ctx.Deadline(); ok {
			s.left = time.Until(dl)
		}
	}
	s.mu.Unlock()
	if slow {
		s.clock.spend(s.commit)
	}
	q, err := s.Store.Commit(ctx, c)
	if slow && s.outlast && err == nil {
		<-ctx.Done()
		return nil, core.Internal("slow store", ctx.Err())
	}
	return q, err
}

// commitLeft is how much time the armed commit's context had left, and
// whether that commit ran at all.
func (s *slowStore) commitLeft() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.left, s.committed
}

// windowRig is a rig whose adapter and fake Discord share clock, on a
// store that spends dedupe on each interaction's dedupe and commit on the
// first commit after arming; the store's own clock is a SimClock.
func windowRig(t *testing.T, gateway bool, dedupe, commit time.Duration) (*rig, *slowStore, *core.SimClock) {
	t.Helper()
	clock := &wallClock{}
	slow := &slowStore{clock: clock, dedupe: dedupe, commit: commit}
	sim := core.NewSimClock(time.Now())
	r := newRig(t, rigOptions{gateway: gateway, clock: sim, now: clock.now, wrap: func(st core.Store) core.Store {
		slow.Store = st
		return slow
	}})
	r.fake.SetClock(clock.now)
	if gateway && !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() > 0 }) {
		t.Fatal("the gateway never connected")
	}
	return r, slow, sim
}

// armedClick asks a decision, waits for its card with nothing else due,
// arms slow, and returns the card and alice's click on its second option.
func armedClick(r *rig, slow *slowStore) (*core.Question, discordfake.Message, discordfake.Interaction) {
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	r.drained()
	slow.arm()
	b := r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1})
	return q, card, r.fake.Click(alice, card.ID, b.CustomID)
}

// gatewayClick clicks a fresh decision's card through the gateway of a
// windowRig spending dedupe and commit on the click, and returns
// Discord's one response to it.
func gatewayClick(t *testing.T, dedupe, commit time.Duration) (*rig, *slowStore, *core.Question, discordfake.Response) {
	t.Helper()
	r, slow, _ := windowRig(t, true, dedupe, commit)
	q, _, in := armedClick(r, slow)
	if err := r.fake.Dispatch(in); err != nil {
		t.Fatal(err)
	}
	if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(in.ID)) == 1 }) {
		t.Fatalf("no response reached Discord within its window; the question is %s", r.question(q.ID).State)
	}
	return r, slow, q, r.fake.Responses(in.ID)[0]
}

// httpClick posts a click on a fresh decision's card to a windowRig
// spending dedupe and commit on the click, and wants the card updated in
// the response.
func httpClick(t *testing.T, dedupe, commit time.Duration) (*rig, *core.SimClock, *core.Question, discordfake.Message) {
	t.Helper()
	r, slow, sim := windowRig(t, false, dedupe, commit)
	q, card, in := armedClick(r, slow)
	if resp := r.post(in); resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("response %d %q", resp.Type, resp.Content())
	}
	return r, sim, q, card
}

// heldUpdateEdits wants the card's held update still waiting after a
// response too late to count (described by late), and editing the card
// once sim has passed the hold.
func (r *rig) heldUpdateEdits(sim *core.SimClock, cardID, late string) {
	r.t.Helper()
	if n := r.outbox(); n != 1 || r.patches(cardID) != 0 {
		r.t.Fatalf("after %s: outbox %d, %d REST edits; want the held update waiting", late, n, r.patches(cardID))
	}
	sim.Advance(core.ShownHold)
	if !r.fake.WaitFor(10*time.Second, func() bool { return r.patches(cardID) == 1 }) {
		r.t.Fatal("the held update never edited the card")
	}
	r.drained()
}

// TestGatewayDedupeCountsAgainstTheWindow: Discord's three seconds run
// from when the click arrived, so the time its dedupe (a store write)
// takes comes out of the answer's budget. When the dedupe alone spent the
// budget, nothing is recorded and the clicker is told in time to try
// again. Before, the answer got a fresh 2.5 s after the dedupe: it was
// recorded, and the response went out past the window, refused with
// 10062, so the clicker saw "This interaction failed" for a click that
// counted.
func TestGatewayDedupeCountsAgainstTheWindow(t *testing.T) {
	r, slow, q, resp := gatewayClick(t, answerBudget+100*time.Millisecond, time.Second)
	if resp.Type != discordfake.ResponseMessage || !strings.Contains(resp.Content(), "try again") {
		t.Fatalf("response %d %q, want a private note to try again", resp.Type, resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateOpen {
		t.Fatalf("a click whose response could not be in time was recorded: %s %+v", got.State, got.Resolution)
	}
	if _, ran := slow.commitLeft(); ran {
		t.Fatal("the answer was taken after the budget was spent")
	}
}

// TestGatewayAnswerGetsWhatIsLeft: when the dedupe took a second, the
// answer's store work is bounded by what is left of the budget counted
// from the click's arrival, not by a fresh budget of its own; the click
// counts and the card is updated in the response, in time.
func TestGatewayAnswerGetsWhatIsLeft(t *testing.T) {
	r, slow, q, resp := gatewayClick(t, time.Second, 0)
	if resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("response %d %q, want the card updated", resp.Type, resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" {
		t.Fatalf("after the click: %s %+v", got.State, got.Resolution)
	}
	left, ran := slow.commitLeft()
	if !ran || left < 0 || left > answerBudget-time.Second {
		t.Fatalf("the answer's commit had %v left (ran %v); want at most %v, what the dedupe left", left, ran, answerBudget-time.Second)
	}
}

// TestHTTPResponsePastTheMarginKeepsTheHeldUpdate: an HTTP response that
// goes out within three seconds of the handler starting, but later than
// the margin the trip to Discord needs, does not drop the card's held
// update: Discord may have given up on it, and the card must not be left
// showing the question open. Here the dedupe takes a second and the
// answer's commit 1.6 s more, so the response goes out 2.6 s in. Before,
// anything under three seconds counted as delivered and the update was
// dropped.
func TestHTTPResponsePastTheMarginKeepsTheHeldUpdate(t *testing.T) {
	r, sim, q, card := httpClick(t, time.Second, 1600*time.Millisecond)
	if got := r.question(q.ID); got.State != core.StateAnswered {
		t.Fatalf("after the click: %s", got.State)
	}
	r.heldUpdateEdits(sim, card.ID, "a response past the margin")
	if m, _ := r.fake.Message(card.ID); !strings.Contains(m.Content, "Answered by Alice") || len(m.Buttons()) != 0 {
		t.Fatalf("card after the hold: %q, %d buttons", m.Content, len(m.Buttons()))
	}
}

// TestGatewayAnswerOutlastingTheWindowMayHaveCounted: an answer whose
// store write outlasts what is left of the budget may be recorded all the
// same (the write was sent; its reply came late), so the clicker is told
// it may or may not have counted, not that it could not be recorded.
// Before, the note read "could not record that just now; please try
// again" for an answer the card then showed recorded.
func TestGatewayAnswerOutlastingTheWindowMayHaveCounted(t *testing.T) {
	r, slow, _ := windowRig(t, true, answerBudget-300*time.Millisecond, 0)
	slow.outlast = true
	q, _, in := armedClick(r, slow)
	if err := r.fake.Dispatch(in); err != nil {
		t.Fatal(err)
	}
	if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(in.ID)) == 1 }) {
		t.Fatal("no response reached Discord")
	}
	resp := r.fake.Responses(in.ID)[0]
	if resp.Type != discordfake.ResponseMessage || resp.Content() != card.TimedOutNote {
		t.Fatalf("response %d %q, want the note that it may have counted", resp.Type, resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateAnswered {
		t.Fatalf("the answer the store wrote: %s", got.State)
	}
}
