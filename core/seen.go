package core

import (
	"context"
	"errors"
	"time"
)

// OnceState is what a claim on a key seen once found (Values.ClaimOnce).
type OnceState int

const (
	// OnceClaimed: the key was free (or lapsed, or the caller's own): the
	// caller holds it now, and handles the event.
	OnceClaimed OnceState = iota + 1
	// OnceHeld: another holder has the event in hand and has neither
	// confirmed nor released it; its claim lapses if that holder died.
	OnceHeld
	// OnceDone: the event was handled (confirmed, or marked by Once).
	OnceDone
)

func (s OnceState) String() string {
	switch s {
	case OnceClaimed:
		return "claimed"
	case OnceHeld:
		return "held"
	case OnceDone:
		return "done"
	}
	return "unknown"
}

// Sighting is a door's claim on one inbound platform event (a Telegram
// update, a Slack event, a Teams activity), which Sight takes before the
// event is handled. A platform delivers an event again when it heard no
// success (a webhook answered with an error or not at all, a poller that
// stored no offset past it), so the mark that drops a repeat must not
// outlive a handling that never finished: marked seen before its
// handling, an event whose handler died (a crash, a deploy's kill) or
// failed on its store was dropped when it came again, a person's click or
// reply lost. The claim is short (hold) until the handling ends: Handled
// then confirms it for the full ttl, and Unhandled, for a handling that
// failed and is to be done again, releases it so that the redelivery is
// handled. A claim whose holder died lapses after hold, and the event's
// next delivery is handled then. A door that must hear of such a death
// soon takes a short hold and renews it while the handling runs (Renew).
type Sighting struct {
	// State is what the sight found: OnceClaimed (handle the event, then
	// call Handled or Unhandled), OnceHeld (another handling has it in
	// hand: handle nothing, drop nothing, and have the platform deliver
	// it again later where it will), or OnceDone (a repeat: drop it).
	State OnceState

	s           *Service
	key, holder string
	hold, ttl   time.Duration
}

// Sight claims the inbound event key names (its platform and id) for
// hold, which outlasts the event's handling (its holder's budget). If
// the store cannot say, the event counts as new, as FirstSeen's does:
// losing a person's click is worse than handling it twice, and the
// chokepoint makes a repeated click harmless.
func (s *Service) Sight(ctx context.Context, key string, hold, ttl time.Duration) Sighting {
	g := Sighting{s: s, key: "seen:" + key, holder: string(NewID(0)), hold: hold, ttl: ttl}
	st, err := s.store.ClaimOnce(ctx, g.key, g.holder, hold)
	if err != nil {
		st = OnceClaimed
	}
	g.State = st
	return g
}

// First reports whether the event is this holder's to handle.
func (g Sighting) First() bool { return g.State == OnceClaimed }

// Renew moves the end of the claim to hold from now while its handling
// runs, so that a short hold outlasts a long handling: a holder that
// dies renews no more, and its claim lapses a hold later rather than
// after the handling's whole budget. It reports what the claim is now:
// OnceClaimed while it is still this holder's (renewed, or taken again
// after it lapsed with nobody else on it), OnceHeld once it lapsed and
// another handling took the event, OnceDone once it was confirmed.
// Either of those is for good: the event may be handled beside this
// handling, and the chokepoint records one answer of the two; this
// holder's Handled and Unhandled then leave the key alone. An error is
// the store not saying: the claim lasts until its hold passes, and a
// renewal after it may keep it yet. A renewal must end before Unhandled
// is called, or it would take the released key again. A sighting that
// holds nothing (not First, or a door's that claims nothing) reports
// its state and asks nothing of the store.
func (g Sighting) Renew(ctx context.Context) (OnceState, error) {
	if g.s == nil || !g.First() {
		return g.State, nil
	}
	return g.s.store.ClaimOnce(ctx, g.key, g.holder, g.hold)
}

// Handled confirms the event as seen for the sighting's ttl, once its
// handling is done for good: answered, refused, or told why not. It
// runs on a context of its own (Settle), as the handling may have spent
// ctx. A confirmation that fails leaves the claim to lapse, after which
// a redelivery would be handled again, which the chokepoint makes
// harmless.
func (g Sighting) Handled(ctx context.Context) {
	if g.s == nil || !g.First() {
		return
	}
	sctx, cancel := Settle(ctx)
	defer cancel()
	_ = g.s.store.ConfirmOnce(sctx, g.key, g.holder, g.ttl)
}

// Unhandled releases the claim of a handling that failed before it was
// done (HandleAgain), so that the platform's redelivery of the event is
// handled. A release that fails leaves the claim to lapse after its hold.
func (g Sighting) Unhandled(ctx context.Context) {
	if g.s == nil || !g.First() {
		return
	}
	sctx, cancel := Settle(ctx)
	defer cancel()
	_ = g.s.store.ReleaseOnce(sctx, g.key, g.holder)
}

// HandleAgain reports whether err, what handling an inbound event came
// to, is the bridge's failure rather than an answer: the store failed or
// was cut short (internal), where a refusal (forbidden, closed, not
// found, invalid) is final. Such an event is worth handling again when
// its platform delivers it again (Sighting.Unhandled); a change that may
// have landed is then told the truth by the chokepoint.
func HandleAgain(err error) bool {
	var closed *ClosedError
	return err != nil && ErrorCode(err) == CodeInternal && !errors.As(err, &closed)
}
