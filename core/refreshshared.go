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
//   - While it waits, the replicas that run the recorded configuration
//     say so (cardsLiveKey, lagHold at a time). A laggard that has
//     lagged for lagHold and finds nobody saying so is the one left:
//     the replicas it lagged behind have stopped (a replica started on
//     an older file, say, then stopped), and it brings its own as if it
//     came in force later. Without that it would lag, and hold the
//     sweep off, until it next reloads.
//
// The record is read and then written with SetValueIf, over the very
// value read: a write that loses to another replica's (two starting
// together, a laggard joining as the sweep ends, an older file's replica
// that read the record before a newer one wrote it) writes nothing, and
// the next tick reconciles with what the other wrote. So no replica's
// word is lost, and none writes over a record it has not read.
//
// Which configuration came in force later is read from the replicas'
// clocks (bound.since): clocks skewed by more than the time between two
// replicas putting different files in force can order them wrongly, and
// the one taken to lag then holds the sweep off until it reloads, or
// until the replicas it lags behind stop.
//
// The digest covers what a tally is read from (tallyDigest): the routes
// as questions keep them, the people's accounts and the groups. A first
// start, or one on a store from before this record, records its
// configuration and owes nothing: what the cards were drawn under is
// unknown.
const (
	cardsKey         = "core:cards"
	cardsLagKey      = "core:cards:lagging"
	cardsSweepKey    = "core:cards:sweep"
	cardsProgressKey = "core:cards:sweep:progress"
	cardsLiveKey     = "core:cards:live"
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
// owed). A write of the record that another replica's write beat is
// dropped: the next tick reconciles with the record as that one left it.
func (s *Service) reconcileCards(ctx context.Context, b *bound) (cardsRecord, bool, error) {
	const op = "refresh tallies"
	rec, raw, err := s.cards(ctx)
	if err != nil {
		return rec, false, Internal(op, err)
	}
	if rec.Digest == b.digest {
		s.tallies.behind = ""
		return rec, rec.Owed, nil
	}
	if rec.Digest != "" && !b.after(rec) {
		orphaned, err := s.orphaned(ctx, rec)
		if err != nil || !orphaned {
			return rec, false, Internal(op, errors.Join(err, s.lags(ctx, b, rec, raw)))
		}
	}
	s.tallies.behind = ""
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
	set, err := s.putCards(ctx, raw, rec)
	if err != nil || !set {
		return rec, false, Internal(op, err)
	}
	return rec, rec.Owed, nil
}

// orphaned reports whether this replica, which lags behind rec, is left
// with nobody running rec's configuration: it has lagged behind it for
// lagHold (on its own clock), long enough for the replicas that run it
// to have said so (sweepPage), and none has within lagHold.
func (s *Service) orphaned(ctx context.Context, rec cardsRecord) (bool, error) {
	now := s.now()
	if s.tallies.behind != rec.Digest {
		s.tallies.behind, s.tallies.lagSince = rec.Digest, now
		return false, nil
	}
	if now.Sub(s.tallies.lagSince) < lagHold {
		return false, nil
	}
	live, err := s.store.Value(ctx, cardsLiveKey)
	return err == nil && live != rec.Digest, err
}

// lags is this replica's part while it lags behind rec (read as raw):
// what it renders shows its own tally, so it holds the sweep off, and it
// joins each debt once (told), not at every tick, nor again when another
// laggard joined after it.
func (s *Service) lags(ctx context.Context, b *bound, rec cardsRecord, raw string) error {
	if err := s.store.SetValueFor(ctx, cardsLagKey, s.tallies.replica, lagHold); err != nil {
		return err
	}
	if s.tallies.told == rec.debt() {
		return nil
	}
	rec.lagged(b.digest)
	set, err := s.putCards(ctx, raw, rec)
	if set {
		s.tallies.told = rec.debt()
	}
	return err
}

// endSweep clears the debt rec recorded, unless it has changed since
// (a later change, a laggard, even between the read and the write here),
// and forgets the sweep's progress.
func (s *Service) endSweep(ctx context.Context, rec cardsRecord) error {
	const op = "refresh tallies"
	cur, raw, err := s.cards(ctx)
	if err == nil && cur.Owed && cur.work() == rec.work() {
		cur.Owed, cur.From, cur.All, cur.Lags = false, nil, false, 0
		_, err = s.putCards(ctx, raw, cur) // lost: the debt changed, and is swept again
	}
	return Internal(op, errors.Join(err, s.store.DeleteValue(ctx, cardsProgressKey)))
}

// cards reads the cards' record, and the value it was read from (for
// putCards); the zero record when there is none.
func (s *Service) cards(ctx context.Context) (cardsRecord, string, error) {
	var rec cardsRecord
	raw, err := s.store.Value(ctx, cardsKey)
	if err != nil || raw == "" {
		return rec, raw, err
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return cardsRecord{}, raw, nil // unreadable: written anew, as if none
	}
	return rec, raw, nil
}

// putCards writes rec over the record read as old, and reports whether
// it did: false if another replica has written it since.
func (s *Service) putCards(ctx context.Context, old string, rec cardsRecord) (bool, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return false, err
	}
	return s.store.SetValueIf(ctx, cardsKey, old, string(raw))
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
