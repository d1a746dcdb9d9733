package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Reconfigure checks cfg whole, as New does, and if it holds puts it in
// force at once: routes, people, groups, policy rules, timeouts and
// retention, and the doors' tokens it carries (Config.Tokens). The swap
// is one atomic store, so every call reads either the old configuration
// or the new one and none waits for the other. A bad cfg changes nothing
// and the error says why. The cards of open questions whose tally the
// new configuration reads otherwise are edited by the ticker's next
// passes, once across the replicas (refresh.go, refreshshared.go), not
// by this call, which does no I/O.
//
// The actor key and the shard count cannot change while running: the
// event log's pseudonyms and the ids already given out depend on them.
// A cfg that changes either is refused; the program keeps them as they
// were until a restart.
func (s *Service) Reconfigure(cfg Config) error {
	b, err := bind(cfg)
	if err != nil {
		return err
	}
	cur := s.conf().cfg
	if !bytes.Equal(b.cfg.ActorKey, cur.ActorKey) {
		return errors.New("core: the actor key cannot change without a restart")
	}
	if b.cfg.Shards != cur.Shards {
		return fmt.Errorf("core: shards cannot change from %d to %d without a restart", cur.Shards, b.cfg.Shards)
	}
	prev := s.conf()
	// Later than prev's, even on a clock that did not move, so that the
	// cards' record takes this one as the newer (refreshshared.go). A
	// reload that leaves the tallies as they were keeps prev's instant:
	// a replica reading its old file again (a SIGHUP before the new file
	// reached it) must not pass for the one that put the newer in force.
	b.since = s.now()
	if b.digest == prev.digest {
		b.since = prev.since
	} else if least := prev.since.Add(time.Millisecond); b.since.Before(least) {
		b.since = least
	}
	// Known before it is replaced, so that a tick between the two that
	// finds the cards owed a sweep from prev can compare with it.
	s.tallies.reloaded(prev)
	s.swap(b)
	return nil
}

// swap puts b in force.
func (s *Service) swap(b *bound) {
	// In this order, so that a Remind pass that compares the
	// configuration in force with its own sees this one (remindScan).
	s.live.Store(b)
	s.reminders.configured(b)
}

// Reload describes one reading of the configuration for the event log:
// what prompted it, which file (by digest), and what it changed.
type Reload struct {
	// Trigger is what prompted the reading: "sighup", "file" (the file
	// or its directory changed), or another word a program chooses.
	Trigger string `json:"trigger"`
	// Replica names the replica that read it; each reads its own copy.
	Replica string `json:"replica,omitempty"`
	// Digest is the SHA-256 of the file as read, in hex.
	Digest string `json:"digest"`
	// Applied is false when the file was refused (the event's reason
	// says why) and the configuration in force stayed as it was.
	Applied bool `json:"applied"`
	// Changed names the sections that changed (routes, people, ...);
	// Restart names the settings that changed but wait for a restart.
	Changed []string `json:"changed,omitempty"`
	Restart []string `json:"restart,omitempty"`
}

// RecordReload appends r to the event log as a loose event, of no
// question; reason is why it was refused, if it was. The configuration
// is already in force or refused by now: a log that cannot be written is
// the caller's to report, and undoes nothing.
func (s *Service) RecordReload(ctx context.Context, r Reload, reason string) (Event, error) {
	payload, err := json.Marshal(r)
	if err != nil {
		return Event{}, Internal("record reload", err)
	}
	e, err := s.store.Append(ctx, Event{At: s.now(), Kind: EventReconfigured, Actor: s.pseudonym(System),
		Surface: SurfaceSystem, Reason: reason, Payload: payload})
	return e, Internal("record reload", err)
}

// RouteOf is the route q is held to: the one it was asked under
// (Question.AskedRoute), with its people entries resolved against the
// people configured now; a question stored without that copy, or with
// one that does not read, follows the configured route of its name. ok
// is false when there is none, and then nobody may act on it (fail
// closed).
func (s *Service) RouteOf(q *Question) (Route, bool) {
	b := s.conf()
	if len(q.AskedRoute) == 0 || string(q.AskedRoute) == b.pinned[q.Route] {
		r, ok := b.cfg.Routes[q.Route] // as asked: nothing changed since
		return r, ok
	}
	var r Route
	if err := json.Unmarshal(q.AskedRoute, &r); err != nil {
		r, ok := b.cfg.Routes[q.Route]
		return r, ok
	}
	r.Name = q.Route
	// A person or group removed since is nobody now: their entry lets
	// nobody in, and the route's other people keep their say.
	r.persons = b.dir.known(r.People)
	r.posts, _ = b.dir.posts(q.Route, r.Rooms, false) // never fails when not strict
	r.bound = true
	return r, true
}

// AskedCallbackURL is the callback_url of the route as q was asked under
// (AskedRoute), and whether q keeps that route; questions asked before
// they kept it do not.
func (q *Question) AskedCallbackURL() (string, bool) {
	if len(q.AskedRoute) == 0 {
		return "", false
	}
	var r struct {
		CallbackURL string `json:"callback_url"`
	}
	if err := json.Unmarshal(q.AskedRoute, &r); err != nil {
		return "", false
	}
	return r.CallbackURL, true
}

// routeOrNone is RouteOf's route, the zero route (no rooms, nobody) when
// there is none.
func (s *Service) routeOrNone(q *Question) Route {
	r, _ := s.RouteOf(q)
	return r
}

// settings is r as a question keeps it (Question.AskedRoute): neither
// the compiled rules nor the resolved people, which RouteOf resolves
// again.
func (r Route) settings() Route {
	r.Rules, r.persons, r.posts, r.bound = nil, nil, nil, false
	return r
}
