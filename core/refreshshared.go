package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Which configuration the cards are drawn under is the replicas' shared
// knowledge, kept in the store's Values, so that the sweep after a change
// (refresh.go) runs once across them, and also after a start whose
// configuration differs from the one before the stop:
//
//   - cardsKey holds the digest of the configuration the cards are to
//     show (the one put in force last, on whichever replica: At says
//     when) and whether a sweep of them is owed, from which
//     configurations (From) or from ones unknown (All).
//   - A replica whose configuration differs from it and came in force
//     later (a reload, a start) brings its own: it records it, owing a
//     sweep from the one it replaces (reconcileCards). A replica whose
//     configuration came in force earlier lags: until it reloads, every
//     card it renders shows its tally, so it keeps cardsLagKey set
//     (lagHold at a time) and its configuration among those the sweep
//     is owed from; if it was owed already, the debt is marked anew
//     (Lags), once, since the pages swept so far may be rendered by the
//     laggard (the sweep may have begun before it first said it lags).
//   - The sweep waits while cardsLagKey is set, then runs a page a tick
//     on whichever replica takes cardsSweepKey's lease, from where the
//     page before left off (cardsProgressKey), and clears the debt once
//     done, unless the debt changed meanwhile (a later change, a
//     laggard): then it runs again from the first page.
//
// Which configuration came in force later is read from the replicas'
// clocks (bound.since): clocks skewed by more than the time between two
// replicas putting different files in force can order them wrongly, and
// the one taken to lag then holds the sweep off until it reloads.
//
// The digest covers what a tally is read from (tallyDigest): the routes
// as questions keep them, the people's accounts and the groups. A first
// start, or one on a store from before this record, records its
// configuration and owes nothing: what the cards were drawn under is
// unknown. The record is rewritten without a transaction, so a replica
// writing it as another clears the debt may lose that debt; the cards
// it concerned then show the tally at their next edit, as every card
// did before the sweep existed.
const (
	cardsKey         = "core:cards"
	cardsLagKey      = "core:cards:lagging"
	cardsSweepKey    = "core:cards:sweep"
	cardsProgressKey = "core:cards:sweep:progress"
	// lagHold is how long a replica's word that it runs another
	// configuration holds the sweep off: many of its ticks (a second
	// each by default), so it lapses only once the replica has reloaded
	// or stopped.
	lagHold = 30 * time.Second
	// sweepLease bounds the hold of a replica that stopped mid-page.
	sweepLease = time.Minute
	// progressTTL bounds how long a sweep's progress outlives it.
	progressTTL = 24 * time.Hour
)

// cardsRecord is what cardsKey holds.
type cardsRecord struct {
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
	Owed   bool      `json:"owed,omitempty"`
	From   []string  `json:"from,omitempty"`
	All    bool      `json:"all,omitempty"`
	// Lags counts the laggards that joined the debt it owed already
	// (lagged): each begins its sweep again from the first page.
	Lags int `json:"lags,omitempty"`
}

// owe adds to the debt of r a sweep of cards drawn under the
// configurations digests (r's own drawn under nothing to edit), or
// under unknown ones (all).
func (r *cardsRecord) owe(digests []string, all bool) {
	for _, d := range digests {
		if d != r.Digest && !slices.Contains(r.From, d) {
			r.From = append(r.From, d)
			r.Owed = true
		}
	}
	if all {
		r.All, r.Owed = true, true
	}
	slices.Sort(r.From)
	if r.All || len(r.From) > refreshOlds {
		r.All, r.From = true, nil
	}
}

// lagged adds to r's debt the cards a replica running digest renders
// while it lags: a sweep from digest, or, when r owed one already, that
// sweep again from its first page, whose edits the laggard may have
// rendered.
func (r *cardsRecord) lagged(digest string) {
	if r.owes(digest) {
		r.Lags++
		return
	}
	r.owe([]string{digest}, false)
}

// owes reports whether r's debt covers cards drawn under digest.
func (r cardsRecord) owes(digest string) bool {
	return r.Owed && (r.All || slices.Contains(r.From, digest))
}

// debt names r's debt apart from the laggards that joined it (Lags): a
// laggard joins each debt once.
func (r cardsRecord) debt() string {
	all := ""
	if r.All {
		all = "all"
	}
	return r.Digest + "|" + strings.Join(r.From, ",") + "|" + all
}

// work names r's debt and its laggards: a sweep's progress is for one
// work, and a change of it begins the sweep again.
func (r cardsRecord) work() string {
	if r.Lags == 0 {
		return r.debt() // as before Lags
	}
	return r.debt() + "|" + strconv.Itoa(r.Lags)
}

// after reports whether b came in force after the configuration r
// records (of equal instants, the greater digest wins, so that two
// replicas settle on one).
func (b *bound) after(r cardsRecord) bool {
	return b.since.After(r.At) || b.since.Equal(r.At) && b.digest > r.Digest
}

// reconcileCards reconciles the configuration b in force here with the
// cards' record and returns the record, and whether this replica may
// sweep it (it runs the configuration the record names, and a sweep is
// owed).
func (s *Service) reconcileCards(ctx context.Context, b *bound) (cardsRecord, bool, error) {
	const op = "refresh tallies"
	rec, err := s.cards(ctx)
	if err != nil {
		return rec, false, Internal(op, err)
	}
	switch {
	case rec.Digest == b.digest:
	case rec.Digest == "" || b.after(rec):
		prev := rec
		rec = cardsRecord{Digest: b.digest, At: b.since}
		if prev.Digest == "" {
			// Nothing recorded: the cards may show what this replica ran
			// before, if anything.
			rec.owe(s.tallies.knownDigests(), false)
		} else {
			rec.owe([]string{prev.Digest}, false)
			if prev.Owed {
				rec.owe(prev.From, prev.All)
			}
		}
		if err := s.putCards(ctx, rec); err != nil {
			return rec, false, Internal(op, err)
		}
	default:
		// Lagging: what this replica renders shows its own tally. It
		// joins each debt once (told), not at every tick, nor again when
		// another laggard joined after it.
		err := s.store.SetValueFor(ctx, cardsLagKey, s.tallies.replica, lagHold)
		if err == nil && s.tallies.told != rec.debt() {
			rec.lagged(b.digest)
			if err = s.putCards(ctx, rec); err == nil {
				s.tallies.told = rec.debt()
			}
		}
		return rec, false, Internal(op, err)
	}
	return rec, rec.Owed, nil
}

// endSweep clears the debt rec recorded, unless it has changed since
// (a later change, a laggard), and forgets the sweep's progress.
func (s *Service) endSweep(ctx context.Context, rec cardsRecord) error {
	const op = "refresh tallies"
	cur, err := s.cards(ctx)
	if err == nil && cur.Owed && cur.work() == rec.work() {
		cur.Owed, cur.From, cur.All, cur.Lags = false, nil, false, 0
		err = s.putCards(ctx, cur)
	}
	return Internal(op, errors.Join(err, s.store.DeleteValue(ctx, cardsProgressKey)))
}

// cards reads the cards' record; the zero record when there is none.
func (s *Service) cards(ctx context.Context) (cardsRecord, error) {
	var rec cardsRecord
	raw, err := s.store.Value(ctx, cardsKey)
	if err != nil || raw == "" {
		return rec, err
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return cardsRecord{}, nil // unreadable: written anew, as if none
	}
	return rec, nil
}

func (s *Service) putCards(ctx context.Context, rec cardsRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.store.SetValue(ctx, cardsKey, string(raw))
}

// cardsProgress is how far the sweep of one debt (Work) has gone.
type cardsProgress struct {
	Work      string `json:"work"`
	Cursor    string `json:"cursor,omitempty"`
	Listed    int    `json:"listed,omitempty"`
	Refreshed int    `json:"refreshed,omitempty"`
	Failed    int    `json:"failed,omitempty"`
}

// sweepProgress is how far the sweep of rec's debt has gone; from the
// first page if it is another debt's.
func (s *Service) sweepProgress(ctx context.Context, rec cardsRecord) (cardsProgress, error) {
	p := cardsProgress{Work: rec.work()}
	raw, err := s.store.Value(ctx, cardsProgressKey)
	if err != nil || raw == "" {
		return p, err
	}
	var got cardsProgress
	if json.Unmarshal([]byte(raw), &got) != nil || got.Work != p.Work {
		return p, nil
	}
	return got, nil
}

func (s *Service) putProgress(ctx context.Context, p cardsProgress) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return s.store.SetValueFor(ctx, cardsProgressKey, string(raw), progressTTL)
}

// tallyDigest names what of b a card's tally is read from: the routes as
// questions keep them (pinned), the people's accounts and the groups'
// members. Two configurations with the same digest count every vote
// alike.
func tallyDigest(b *bound) (string, error) {
	v := struct {
		Routes map[string]string               `json:"routes"`
		People map[string]map[Surface][]string `json:"people"`
		Groups map[string][]string             `json:"groups"`
	}{b.pinned, map[string]map[Surface][]string{}, map[string][]string{}}
	for name, p := range b.dir.people {
		v.People[name] = p.IDs
	}
	for name, g := range b.dir.groups {
		v.Groups[name] = g.Members
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16]), nil
}
