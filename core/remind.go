package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Reminder policy limits.
const (
	// DefaultRemindMax is how many reminders a route with remind_every
	// sends when it names no cap.
	DefaultRemindMax = 3
	// MaxReminders caps remind_max: past it, reminding is nagging.
	MaxReminders = 20
	// MinRemindEvery keeps reminders from flooding a room.
	MinRemindEvery = time.Minute
)

// dmPrefix marks a delivery's room as a person's direct messages: the
// rest is their account id on the delivery's surface, and each adapter
// opens the conversation its platform's way.
const dmPrefix = "@"

// DMRoom is the room of a direct message to the account id.
func DMRoom(id string) string { return dmPrefix + id }

// DMUser reports whether room is a direct message, and to whom.
func DMUser(room string) (string, bool) { return strings.CutPrefix(room, dmPrefix) }

// checkReminders checks a route's reminder policy.
func checkReminders(r Route) error {
	switch {
	case r.RemindEvery < 0 || (r.RemindEvery > 0 && r.RemindEvery < MinRemindEvery):
		return fmt.Errorf("route %q: remind_every must be at least %s", r.Name, MinRemindEvery)
	case r.RemindMax < 0 || r.RemindMax > MaxReminders:
		return fmt.Errorf("route %q: remind_max must be between 1 and %d", r.Name, MaxReminders)
	case r.RemindMax > 0 && r.RemindEvery == 0:
		return fmt.Errorf("route %q: remind_max is set without remind_every", r.Name)
	}
	return nil
}

// remindMax is the route's cap on reminders.
func (r Route) remindMax() int {
	if r.RemindMax > 0 {
		return r.RemindMax
	}
	return DefaultRemindMax
}

// dueReminder is the reminder of q due at now on the route, the latest
// one, capped at remindMax; 0 for none (or a route that does not remind).
// Remind and the catch-up after a downtime both claim it by this number.
func (r Route) dueReminder(q *Question, now time.Time) int {
	if r.RemindEvery <= 0 {
		return 0
	}
	return min(int(now.Sub(q.CreatedAt)/r.RemindEvery), r.remindMax())
}

// routePeople are the people who may decide on route: those its people
// entries name, and those whose account it lists, in name order.
func (s *Service) routePeople(route Route) []Person {
	dir := s.conf().dir
	names := map[string]bool{}
	for n := range route.persons {
		names[n] = true
	}
	for sf, entries := range route.Deciders {
		for _, e := range entries {
			if n, ok := dir.byID[sf][e]; ok {
				names[n] = true
			}
		}
	}
	out := make([]Person, 0, len(names))
	for _, n := range sortedKeys(names) {
		out = append(out, dir.people[n])
	}
	return out
}

// deliveries are what tells route's people of q: a card in each of its
// rooms and the direct messages of those who asked for them.
func (s *Service) deliveries(q *Question, route Route, kind DeliveryKind, purpose string, now time.Time) []Delivery {
	return append(roomDeliveries(q, route, kind, purpose, now), s.dmDeliveries(q, route, kind, purpose, now)...)
}

// dmDeliveries are the direct messages of a question's post or reminder
// to the route's people who asked for them and have not acted on it yet,
// each on their DM surface if the route lets them answer there, else on
// one that does (dmSurfaceOn).
func (s *Service) dmDeliveries(q *Question, route Route, kind DeliveryKind, purpose string, now time.Time) []Delivery {
	var out []Delivery
	for _, p := range s.routePeople(route) {
		if !p.DM {
			continue
		}
		sf, ok := p.dmSurfaceOn(route)
		if !ok || s.HasActed(q, sf, p.IDs[sf][0]) {
			continue
		}
		if route.hasRoom(sf, p.IDs[sf][0]) {
			continue // the route's own room is their account (an email address): one message, not two
		}
		out = append(out, Delivery{
			Key:     fmt.Sprintf("%s:%s:dm:%s", q.ID, purpose, p.Name),
			Kind:    kind,
			Surface: sf, Room: DMRoom(p.IDs[sf][0]),
			QuestionID: q.ID, Route: route.Name, CreatedAt: now,
		})
	}
	return out
}

// HasActed reports whether the account id on surface has acted on q
// (answered a part, voted), itself or as the person it is, from any
// surface: a person who voted in Slack has acted, and is reminded on no
// surface. It is the one check of who a reminder skips, for the direct
// messages (dmDeliveries) and for a courier that skips a recipient of a
// room's reminder (email, whose room is an address). A nil Service (a
// courier built without one, in a test) knows no people: the account
// alone counts.
func (s *Service) HasActed(q *Question, surface Surface, id string) bool {
	if q.ActedBy(surface, id) {
		return true
	}
	if s == nil {
		return false
	}
	return s.actedAs(q, s.identify(Decider{Surface: surface, ID: id}).Decider)
}

// actedAs reports whether d (identified as configured now, or a person
// by name alone) has acted on q as the chokepoint counts a vote as
// theirs (sameVoter): under their person's name, from any account the
// configuration gives them now, or from d's own account. So a reminder
// skips exactly those whose vote would be refused as already counted,
// across reloads that tied an account to a person or renamed one; read
// by the name stored with each act alone, such a person was called on
// to cast the vote the chokepoint then refused.
func (s *Service) actedAs(q *Question, d Decider) bool {
	key, also := VoteKey(d), s.voterKeys(d)
	for a := range q.actions() {
		if sameVoter(Vote{Key: VoteKey(a), Decider: a}, key, also) {
			return true
		}
	}
	return false
}

// Mention is one account or role a reminder calls on.
type Mention struct {
	// ID is the platform's user id, or its role or user group id.
	ID   string
	Role bool
	// Name is the configured display name of a person, else "".
	Name string
}

// Safe reports whether the mention's id is plain letters, digits, '-' and
// '_', as every platform's ids are: a renderer writes it into markup, so
// anything else is left out rather than escaped into a broken mention.
func (m Mention) Safe() bool {
	if m.ID == "" || len(m.ID) > 64 {
		return false
	}
	for _, r := range m.ID {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// CallOn is whom a reminder of a still-open q on surface calls on
// (card.Reminder): whoever there may decide and has not acted yet, the
// route's people and listed accounts by id, its roles as roles.
// Anyone-may ("*") routes have nobody to call on by name. A nil Service
// (a courier built without one, in a test) calls on nobody.
func (s *Service) CallOn(q *Question, surface Surface) []Mention {
	if s == nil {
		return nil
	}
	route, ok := s.RouteOf(q)
	if !ok {
		return nil
	}
	var out []Mention
	dir := s.conf().dir
	seen := map[string]bool{}
	add := func(m Mention) {
		key := fmt.Sprint(m.Role, m.ID)
		if !seen[key] {
			seen[key] = true
			out = append(out, m)
		}
	}
	for _, p := range s.routePeople(route) {
		if s.actedAs(q, Decider{Person: p.Name}) {
			continue
		}
		for _, id := range p.IDs[surface] {
			add(Mention{ID: id, Name: p.DisplayName})
		}
	}
	for _, e := range route.Deciders[surface] {
		switch entry := ParseDecider(e); {
		case entry.Anyone:
		case entry.Role != "":
			add(Mention{ID: entry.Role, Role: true})
		default:
			if d := s.identify(Decider{Surface: surface, ID: e}).Decider; !s.actedAs(q, d) {
				add(Mention{ID: e, Name: dir.people[d.Person].DisplayName})
			}
		}
	}
	return out
}

// Remind posts the reminders that are due: a question on a route with
// remind_every gets its k-th reminder once k intervals have passed since
// it was asked, up to the route's cap, while it stays open. Every replica
// may run it: each reminder is claimed once in the store (a Values lease
// under an owner new to the attempt) before it is enqueued, with its
// reminded event, in one Renotify, and given back if that fails. If
// several intervals passed at once (the bridge was away), only the latest
// is sent. It returns how many reminders it enqueued.
//
// A page's reminders are claimed and stored catchUpParallel at a time,
// as the catch-up's re-notices are: each is two writes (the claim, the
// re-notice), and the embedded store commits the writes in flight
// together, so a pass over many due questions (the first after a long
// downtime) pays a fraction of an fsync per write instead of two per
// reminder; Redis runs the same scripts, overlapped. Their order in the
// outbox then follows ListOpen's only roughly, as the catch-up's does.
func (s *Service) Remind(ctx context.Context) (int, error) {
	const op = "remind"
	// A question keeps the reminders of the route it was asked under, so
	// whether to look at all is remindScan's to say.
	if !s.reminders.needed() {
		return 0, nil
	}
	now := s.now()
	b := s.conf()
	found := false
	retention := b.cfg.Retention
	var (
		mu   sync.Mutex // guards sent, errs and seen
		sent int
		errs []error
		seen = map[QuestionID]int{}
		// listed are the questions with claims kept (remindScan.kept)
		// that the pass read open: their claims are still worth keeping
		// (remindScan.noted). Usually none, so the map stays small.
		kept   = s.reminders.keptOf()
		listed = map[QuestionID]bool{}
	)
	cursor := ""
	for {
		qs, next, err := s.store.ListOpen(ctx, cursor, 100)
		if err != nil {
			return sent, Internal(op, err)
		}
		var g errgroup.Group
		g.SetLimit(catchUpParallel)
		for _, q := range qs {
			if kept[q.ID] {
				listed[q.ID] = true
			}
			route, ok := s.RouteOf(q)
			if !ok || route.RemindEvery <= 0 {
				continue
			}
			found = true
			k := route.dueReminder(q, now)
			if k < 1 {
				continue
			}
			if s.reminders.claimed(q.ID, k) {
				mu.Lock()
				seen[q.ID] = k
				mu.Unlock()
				continue
			}
			reason := fmt.Sprintf("reminder %d of %d: still open %s after it was asked", k, route.remindMax(), now.Sub(q.CreatedAt).Round(time.Second))
			out := s.deliveries(q, route, DeliverRemind, fmt.Sprintf("remind%d", k), now)
			g.Go(func() error {
				stored, err := s.renotifyOnce(ctx, reminderClaim(q.ID, k), q, reason, out, now, retention)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, Internal(op, err))
					return nil // every error is kept, not the first alone
				}
				seen[q.ID] = k // sent now, or claimed already by another replica or pass
				if stored {
					sent++
				}
				return nil
			})
		}
		_ = g.Wait()
		if next == "" {
			break
		}
		cursor = next
	}
	s.reminders.passed(b, found, s.conf)
	gone := map[QuestionID]bool{}
	for q := range kept {
		if !listed[q] {
			gone[q] = true
		}
	}
	s.reminders.noted(seen, gone)
	return sent, errors.Join(errs...)
}

// awayDigests are the "while you were away" digests after a downtime that
// began at since: one in each room of every route that names accounts
// only, and for routes that name people, one direct message to each
// person who asked for DMs, covering everything open for them across
// every route, instead of one per room.
func (s *Service) awayDigests(since, now time.Time) []Delivery {
	var out []Delivery
	b := s.conf()
	for _, name := range s.sortedRouteNames() {
		route := b.cfg.Routes[name]
		if len(route.People) > 0 {
			continue
		}
		for _, room := range route.Posts() {
			out = append(out, Delivery{
				Key:     fmt.Sprintf("digest:%s:%s:%s:%s", name, room.Surface, room.ID, since.Format(time.RFC3339Nano)),
				Kind:    DeliverDigest,
				Surface: room.Surface, Room: room.ID, Route: name, Since: since, CreatedAt: now,
			})
		}
	}
	for _, name := range sortedKeys(b.dir.people) {
		p := b.dir.people[name]
		if !p.DM {
			continue
		}
		sf := p.dmSurface()
		out = append(out, Delivery{
			Key:     fmt.Sprintf("digest:person:%s:%s", name, since.Format(time.RFC3339Nano)),
			Kind:    DeliverDigest,
			Surface: sf, Room: DMRoom(p.IDs[sf][0]), Person: name, Since: since, CreatedAt: now,
		})
	}
	return out
}

// reminderClaim names the claim of q's reminder k (renotifyOnce).
func reminderClaim(id QuestionID, k int) string { return fmt.Sprintf("remind:%s:%d", id, k) }

// renotifyOnce stores a reminder of q (its reason and deliveries out)
// under claim: a lease, under an owner new to this call, that no other
// pass on any replica takes again while q can be open, so a pass that
// stopped partway and runs again reminds only whom it had not. A reminder
// that cannot be stored gives its claim back, for a later pass to send it
// rather than none; one whose claim cannot be given back either (the
// store away for both), or whose claim's outcome is unknown, is tried
// again under the same owner (remindScan.kept), which takes the claim as
// its own. It reports whether this call stored the reminder; a question
// closed meanwhile is no error.
//
// A replica that dies between its claim and the re-notice leaves the
// claim held and the reminder unsent: only a store that took the claim
// and the re-notice in one step could close that gap.
func (s *Service) renotifyOnce(ctx context.Context, claim string, q *Question, reason string, out []Delivery, now time.Time, retention time.Duration) (bool, error) {
	owner := s.reminders.ownerOf(claim)
	first, err := s.lease(ctx, claim, owner, reminderClaimTTL(q, now, retention))
	if err != nil {
		// The store may have taken the claim without saying so: the
		// next try takes it under the same owner, as its own.
		s.reminders.keep(q.ID, claim, owner)
		return false, err
	}
	if !first {
		return false, nil
	}
	r := Renotice{QuestionID: q.ID, Event: s.systemEvent(q, EventReminded, reason, now), Deliveries: out, Now: now}
	switch err := s.store.Renotify(ctx, r); {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrClosed):
		return false, nil // answered meanwhile: no reminder due
	default:
		rerr := s.store.Release(context.WithoutCancel(ctx), claim, owner)
		if rerr != nil {
			s.reminders.keep(q.ID, claim, owner)
		}
		return false, errors.Join(err, rerr)
	}
}

// reminderClaimTTL is how long the claim of a reminder of q is kept: as
// long as q can stay open (Question.OpenFor) and then retained. A claim
// that lapsed with the question still open would send its reminder
// again: the k of the last reminder stays at the route's cap.
func reminderClaimTTL(q *Question, now time.Time, retention time.Duration) time.Duration {
	return q.OpenFor(now) + retention
}

// deliverRemind sends reminder d of a still-open q through c, under a
// posting mark as a card is posted (underMark): a reminder whose
// attempt may have reached the platform (a timeout, or a send that went
// out and whose Ack was lost, or whose claim another consumer took
// over) is sent again, at least once, and the copy sent after such an
// attempt is recorded in q's log as a possible repeat, never silently a
// second (law 4). The catch-up's re-notices after a downtime are
// reminders too, and a page of them done again after a crash is sent
// again under the same keys, flagged the same way.
func (s *Service) deliverRemind(ctx context.Context, c Courier, q *Question, d Delivery, gate func(context.Context) time.Duration) error {
	if !q.Open() {
		return nil // answered before the reminder went out
	}
	return s.underMark(ctx, d, gate, func(repeat bool) error {
		var err error
		if r, ok := c.(DeliveryReminder); ok {
			err = r.RemindDelivery(ctx, q, d)
		} else {
			err = c.Remind(ctx, q, d.Room)
		}
		if err == nil && repeat {
			s.remindedAgain(ctx, q, d)
		}
		return err
	})
}

// remindedAgain records in q's log that reminder d went out again after
// an earlier attempt that may have left it in the room already, as a
// card posted again says so in its notified event (recordMessage). It
// is recorded aside, after the send: the reminder went out, so a failure
// to record it is no failed attempt (which would send a third), only a
// loss the metrics count (appendAside).
func (s *Service) remindedAgain(ctx context.Context, q *Question, d Delivery) {
	room := s.loggedRoom(d.Surface, d.Room)
	payload, _ := json.Marshal(map[string]any{"surface": d.Surface, "room": room,
		"delivery": s.loggedDelivery(d.Key, d.Room, room), "repeat": true})
	ev := s.systemEvent(q, EventReminded, "sent again: an earlier attempt may have left this reminder in the room already", s.now())
	ev.Surface, ev.Payload = d.Surface, payload
	actx, cancel := Settle(ctx)
	defer cancel()
	s.appendAside(actx, ev)
}
