package core

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Claims is the part of the [Outbox] a drain works with (core/loops):
// claiming a surface's deliveries, keeping them claimed while they are
// sent, acking them or handing them back, and leaving.
type Claims interface {
	Claim(ctx context.Context, surface Surface, consumer string, max int, minIdle, block time.Duration) ([]Delivery, error)
	Extend(ctx context.Context, surface Surface, consumer string, ids []string) (lost []string, err error)
	Ack(ctx context.Context, surface Surface, id string) error
	Retry(ctx context.Context, d Delivery, consumer string, after time.Duration) error
	Leave(ctx context.Context, surface Surface, consumer string, idle time.Duration) error
}

// Claims is all of the outbox a drain gets: deliveries are enqueued by the
// chokepoint's changes alone (law 3), and, as with [Service.Values], the
// wrapper keeps a caller from asserting its way back to the whole store.
func (s *Service) Claims() Claims { return claimsOnly{s.store} }

type claimsOnly struct{ Claims }

// DeliverOne carries out one attempt at d through c, in a span of its
// own (traceDelivery) that the courier sends with: the delivery of one
// item is the domain's (law 4: a card recorded under d's key is not
// posted again, and a post that may have left an unrecorded copy says
// so), while claiming, retrying and acking are the drain's (core/loops).
// Its error is the courier's: a [*RetryAfter], a [*Permanent], or any
// other for a retry after a back-off; or [*NotYet] when gate said wait;
// or [*StoreFailed] when its own store failed it where the platform is
// not to blame.
//
// gate, if not nil, is asked right before the courier's call (each
// call: an update that edits its card again asks again), after the
// store's part (the question's read, the posting mark): the drain spends
// its send budgets there, so that what lies between a budget's grant and
// the platform receiving the send is the courier's call alone. Put
// before the store's part (an fsync on the embedded store), the grants
// of a bot-wide thirty a second arrived at Telegram as thirty-one within
// one second now and then (issue 31). A wait it reports ends the attempt
// with nothing sent.
func (s *Service) DeliverOne(ctx context.Context, c Courier, d Delivery, gate func(context.Context) time.Duration) (err error) {
	if d.Kind == DeliverDigest {
		ctx, end := s.traceDelivery(ctx, d, nil)
		defer func() { end(err) }()
		return s.deliverDigest(ctx, c, d, gate)
	}
	q, err := s.Get(ctx, d.QuestionID)
	if ErrorCode(err) == CodeNotFound {
		return &Permanent{Err: err} // purged meanwhile
	}
	if err != nil {
		return &StoreFailed{Err: err}
	}
	ctx, end := s.traceDelivery(ctx, d, q)
	defer func() { end(err) }()
	switch d.Kind {
	case DeliverPost, DeliverEscalate:
		if d.Kind == DeliverEscalate && !q.Open() {
			return nil // answered before the escalation went out: nobody to page
		}
		for _, m := range q.Messages {
			if m.Delivery == d.Key {
				return nil // posted and recorded before a crash: done
			}
		}
		return s.underMark(ctx, d, gate, func(repeat bool) error {
			want := MessageRef{Surface: c.Surface(), Room: d.Room, Delivery: d.Key, Kind: d.Kind, Repeat: repeat}
			ref, err := c.Post(ctx, q, want)
			if err != nil {
				return err
			}
			// The card exists now: record it even if we are shutting
			// down, or it would never be edited and the retry would post
			// it again. A failure here is no StoreFailed: the platform
			// was tried, and each retry may post another (flagged) copy,
			// so it counts as an attempt and MaxAttempts bounds the
			// copies.
			rctx, cancel := Settle(ctx)
			defer cancel()
			ref.Surface, ref.Delivery, ref.Kind, ref.Repeat = want.Surface, want.Delivery, want.Kind, want.Repeat
			return s.recordMessage(rctx, q.ID, ref, ref.Repeat)
		})
	case DeliverUpdate:
		if d.Message == nil {
			return &Permanent{Err: errors.New("update delivery without a message")}
		}
		return s.update(ctx, c, q, *d.Message, gate)
	case DeliverRemind:
		return s.deliverRemind(ctx, c, q, d, gate)
	case DeliverWebhook:
		if cc, ok := c.(Caller); ok {
			if err := pass(ctx, gate); err != nil {
				return err
			}
			return cc.Call(ctx, q, d)
		}
	}
	return &Permanent{Err: errors.New("unknown delivery kind " + string(d.Kind))}
}

// underMark sends d through send under its posting mark, which send is
// told was held by an earlier attempt (repeat): that attempt got as far
// as the platform and may have left a copy nobody recorded. The mark is
// taken before the send, as a lease this attempt holds, and given back
// when nothing was sent (gate said wait, or the platform answered with a
// refusal), so the retry of a send that never left is not reported as a
// possible repeat; a send whose outcome is unknown, or that went out,
// keeps it, and every later attempt at d is a possible repeat (law 4).
//
// The mark's owner is this call alone (attemptOwner): a renewal by the
// same owner counts as the first, so an owner that a later attempt
// could share would hide a repeat. The delivery's id and attempt count
// did not name it alone: a stopping drain hands back a send of unknown
// outcome uncounted, and the embedded store hands it out again under the
// same id with the same count, so the copy sent again went out
// unflagged.
func (s *Service) underMark(ctx context.Context, d Delivery, gate func(context.Context) time.Duration, send func(repeat bool) error) error {
	mark, attempt := "posting:"+d.Key, attemptOwner(d)
	first, err := s.lease(ctx, mark, attempt, 30*24*time.Hour)
	if err != nil {
		return &StoreFailed{Err: err} // nothing sent, no mark kept
	}
	release := func() {
		rctx, cancel := Settle(ctx)
		_ = s.store.Release(rctx, mark, attempt)
		cancel()
	}
	if err := pass(ctx, gate); err != nil {
		release()
		return err
	}
	err = send(!first)
	if err != nil && notSent(err) {
		release()
	}
	return err
}

// DeliveryReminder is a [Courier] whose reminder is told the delivery it
// carries, not its room alone; DeliverOne prefers it to Remind. Email
// needs it: a mail cannot be taken back, so the same reminder sent again
// (the retry of an attempt whose outcome was unknown) must carry the same
// Message-ID, built from d's key, for mail clients to show it once (law
// 4), while each reminder of a question is a message of its own.
type DeliveryReminder interface {
	RemindDelivery(ctx context.Context, q *Question, d Delivery) error
}

// attemptOwner names one call of DeliverOne as the owner of a posting
// mark: d's handle and a random part, unique to the call whatever the
// store's handle and attempt count (which a hand-back may repeat).
func attemptOwner(d Delivery) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("core: no randomness: " + err.Error())
	}
	return fmt.Sprintf("%s#%d#%s", d.ID, d.Attempts, idEncoding.EncodeToString(b[:]))
}

// lease takes the lease key for owner, as the store's Lease does, except
// that one the store may have taken without confirming it (Unavailable:
// a durable store whose replicas did not confirm it in time) is given
// back: its caller does nothing under it, and a lease left on the
// primary would tell the retry that another attempt holds it (a card
// flagged as a repeat of one never posted, a reminder never sent).
func (s *Service) lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	first, err := s.store.Lease(ctx, key, owner, ttl)
	if Unavailable(err) {
		rctx, cancel := Settle(ctx)
		_ = s.store.Release(rctx, key, owner)
		cancel()
	}
	return first, err
}

// maxEdits is how many times one update delivery edits its card before
// it hands itself back (editAgainAfter) if the question keeps moving on.
const maxEdits = 3

// editAgainAfter is how long an update delivery whose card fell behind a
// busy question maxEdits times waits in the outbox before it edits again.
const editAgainAfter = time.Second

// update edits card to show q, and again while the question has moved on
// from the version the edit was rendered from. An edit is rendered from
// the question as read before the budget's gate (which may wait) and the
// platform's call, so it can land after the edit of a newer state, or
// after a click's own response showed it (held.go, whose held update
// was then cancelled): then nothing else puts the card right. The
// question read again once the platform has taken the edit names every
// change whose own edit or response could have landed before it; if it
// is still at the version rendered, whatever changes it later edits the
// card after this edit, and the card ends showing the latest state.
// Bounded: after maxEdits edits behind a question that keeps moving, the
// delivery is handed back (NotYet) to edit again a little later, rather
// than holding its lane.
func (s *Service) update(ctx context.Context, c Courier, q *Question, card MessageRef, gate func(context.Context) time.Duration) error {
	for edits := 1; ; edits++ {
		if err := pass(ctx, gate); err != nil {
			return err
		}
		if err := c.Update(ctx, q, card); err != nil {
			return err
		}
		now, err := s.Get(ctx, q.ID)
		if ErrorCode(err) == CodeNotFound {
			return nil // purged meanwhile: no card to put right
		}
		if err != nil {
			// Unknown: edited again at the retry, from the question as it
			// stands. The platform took the edit, and editing again is
			// harmless, so the store's failure uses up no attempt.
			return &StoreFailed{Err: err}
		}
		if now.Version <= q.Version {
			return nil
		}
		if edits >= maxEdits {
			return &NotYet{After: editAgainAfter}
		}
		q = now
	}
}

// NotYet is DeliverOne's answer when its gate said to wait (nothing was
// sent), or when an update's edits fell behind a question that kept
// moving (update: each edit landed, but the card may not show the latest
// state): the delivery is due again After from now. It is no attempt.
type NotYet struct{ After time.Duration }

func (e *NotYet) Error() string { return "not yet: due again in " + e.After.String() }

// StoreFailed is DeliverOne's answer when its own store failed it before
// the platform was tried (the question's read, the posting mark, a
// digest's read), or after the platform took an edit (the read that
// checks the card shows the latest state): the platform is not to
// blame, so the drain retries it after a back-off without counting an
// attempt, bounded by the delivery's age as a retry-after is. Counted,
// a store failing over for a few minutes (on Redis Cluster, the shard
// holding every posting mark) used up every new card's attempts and
// dropped them, the platform never tried.
type StoreFailed struct{ Err error }

func (e *StoreFailed) Error() string { return "store: " + e.Err.Error() }
func (e *StoreFailed) Unwrap() error { return e.Err }

// pass asks gate (if any) whether the send may go now.
func pass(ctx context.Context, gate func(context.Context) time.Duration) error {
	if gate == nil {
		return nil
	}
	if wait := gate(ctx); wait > 0 {
		return &NotYet{After: wait}
	}
	return nil
}

// awayCloses is how long after the bridge came back its closes count as
// the downtime's in the "while you were away" digest: its first tick, a
// second after start, times out what passed its deadline meanwhile.
const awayCloses = time.Minute

// deliverDigest posts a "while you were away" digest once per key: a start
// that failed after Boot (Unboot) leaves its digests queued, and the next
// start queues them again under the same keys, so the digest is claimed
// before it is sent (a copy that finds it claimed was posted, or is being
// posted, by another) and given back if the send fails, for its retry to
// post it (at least once). The send goes under the posting mark a card's
// has (underMark): the retry of a send that may have posted (its outcome
// unknown) is recorded as a possible repeat, never silently a second copy
// (law 4), while one the platform surely did not act on is not.
func (s *Service) deliverDigest(ctx context.Context, c Courier, d Delivery, gate func(context.Context) time.Duration) error {
	closedTo := d.CreatedAt.Add(awayCloses)
	if now := s.now(); now.Before(closedTo) {
		closedTo = now
	}
	dg, err := s.Digest(ctx, DigestQuery{From: d.Since, To: d.CreatedAt, ClosedTo: closedTo, Route: d.Route, Person: d.Person})
	if ErrorCode(err) == CodeInvalid {
		return &Permanent{Err: err} // a person no longer configured
	}
	if err != nil {
		return &StoreFailed{Err: err}
	}
	if len(dg.Asked)+len(dg.Closed)+len(dg.Open) == 0 {
		return nil // nothing happened: no digest to post
	}
	claim, owner := "digest:"+d.Key, string(NewID(0))
	first, err := s.lease(ctx, claim, owner, s.conf().cfg.Retention+awayCloses)
	if err != nil {
		return &StoreFailed{Err: err}
	}
	if !first {
		return nil // posted already, by a copy a failed start queued
	}
	err = s.underMark(ctx, d, gate, func(repeat bool) error {
		err := c.Digest(ctx, dg, d.Room)
		if err == nil && repeat {
			s.digestedAgain(ctx, d)
		}
		return err
	})
	if err != nil {
		rctx, cancel := Settle(ctx)
		_ = s.store.Release(rctx, claim, owner)
		cancel()
	}
	return err
}

// digestedAgain records in the log, as an event of no question, that
// digest d went out again after an attempt that may have posted it, as
// a card posted again says so (recordMessage). It names the person a
// direct message went to by their pseudonym, not the key that spells
// their name; and it is recorded aside: the digest went out, so a failed
// record is no failed attempt (which would post a third).
func (s *Service) digestedAgain(ctx context.Context, d Delivery) {
	about := map[string]any{"surface": d.Surface, "room": s.loggedRoom(d.Surface, d.Room), "kind": d.Kind,
		"since": d.Since, "repeat": true}
	if d.Person != "" {
		about["person"] = s.pseudonym(Decider{ID: d.Person, Person: d.Person})
	} else {
		about["route"] = d.Route
	}
	payload, _ := json.Marshal(about)
	actx, cancel := Settle(ctx)
	defer cancel()
	s.appendAside(actx, Event{At: s.now(), Kind: EventNotified, Surface: d.Surface, Payload: payload,
		Reason: "posted again: an earlier attempt may have left this digest in the room already"})
}

// Attempted is told how an attempt at d ended (err nil: sent) and whether
// the drain gave up on it, for the metrics and, when dropped, the
// question's event log (law 8), recorded before the drain reports the
// drop so that whoever hears the report finds the record.
func (s *Service) Attempted(ctx context.Context, d Delivery, err error, dropped bool) {
	s.observeDelivery(d, err, dropped)
	if dropped {
		s.undelivered(ctx, d, err)
	}
}

// undelivered records a delivery given up on in the question's event log.
// The reason is the platform's error, which carries no person's text,
// with the room it quotes named as the log names it (logged).
func (s *Service) undelivered(ctx context.Context, d Delivery, cause error) {
	if d.QuestionID == "" {
		return // a digest belongs to no question; the log line is its record
	}
	actx, cancel := Settle(ctx)
	defer cancel()
	room, key, reason := s.logged(d, cause)
	payload, _ := json.Marshal(map[string]any{"delivery": key, "kind": d.Kind, "room": room, "attempts": d.Attempts})
	s.appendAside(actx, Event{QuestionID: d.QuestionID, At: s.now(), Kind: EventUndelivered,
		Surface: d.Surface, Reason: cutReason(reason), Payload: payload})
}

// cutReason is an error's text as an undelivered event's reason records
// it: at most 300 bytes, cut where a character starts, as a platform's
// or store's error may run long.
func cutReason(s string) string {
	if len(s) <= 300 {
		return s
	}
	n := 300
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// loggedRoom is how the event log names a room of surface: a webhook's
// URL cut to what may be shown (ShownURL) and tagged with the start of its
// pseudonym, so two receivers under one path still read as two; a
// person's address or topic by its pseudonym (Surface.RoomIsPersonal), so
// repeated failures to one recipient still read as one; any other room as
// it is.
func (s *Service) loggedRoom(surface Surface, room string) string {
	switch {
	case surface == SurfaceWebhook:
		if room == "" {
			return ""
		}
		return ShownURL(room) + " #" + s.pseudonym(Decider{Surface: surface, ID: room})[:12]
	case surface.RoomIsPersonal():
		return s.pseudonym(Decider{Surface: surface, ID: room})
	}
	return room
}

// loggedDelivery is how the event log names a delivery's key: the key
// spells its room (roomDeliveries) or, for a direct message, the person's
// configured name (dmDeliveries), so a personal room is replaced by its
// pseudonym (loggedRoom) and a name by the person's pseudonym, or the key
// would undo what loggedRoom hides. shown is loggedRoom's name for room.
func (s *Service) loggedDelivery(key, room, shown string) string {
	if room != "" && room != shown {
		key = strings.ReplaceAll(key, room, shown)
	}
	if i := strings.Index(key, ":dm:"); i >= 0 {
		name := key[i+len(":dm:"):]
		key = key[:i+len(":dm:")] + s.pseudonym(Decider{ID: name, Person: name})
	}
	return key
}

// Logged is how a log line names delivery d and the error an attempt at
// it ended with: as the event log does (loggedRoom, loggedDelivery), since
// a platform's error quotes its recipient (a relay's refusal the address,
// a failed request the ntfy topic's URL).
func (s *Service) Logged(d Delivery, err error) (key, reason string) {
	_, key, reason = s.logged(d, err)
	return key, reason
}

// logged is how the log and the event log name d's room, its key and err,
// worked out in one place so the two hide the same things.
func (s *Service) logged(d Delivery, err error) (room, key, reason string) {
	room = s.loggedRoom(d.Surface, d.Room)
	reason = loggedText(err.Error(), d.Room, room)
	if user, dm := DMUser(d.Room); dm && d.Surface.RoomIsPersonal() {
		// A direct message to a person's address or topic: the
		// platform's error quotes the address, not the room.
		reason = loggedText(reason, user, room)
	}
	return room, s.loggedDelivery(d.Key, d.Room, room), reason
}

// loggedText is text with room replaced by shown, loggedRoom's name for
// it (a personal room's pseudonym, a webhook URL without its query), in
// any case: a mail relay may quote the address as it spells it. A room
// shown as it is stays.
func loggedText(text, room, shown string) string {
	if room == "" || room == shown {
		return text
	}
	return regexp.MustCompile("(?i)"+regexp.QuoteMeta(room)).ReplaceAllLiteralString(text, shown)
}

// Settle is a context for the bookkeeping that must follow work already
// done on a platform (recording a posted card, acking a delivery,
// releasing a lease): it outlives ctx's cancellation, bounded by a few
// seconds. core and its loops (core/loops) share it.
func Settle(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// FirstSeen reports whether an inbound platform event (a Slack event id, a
// Discord interaction id, a Telegram update id: key names it) is new to
// every replica of the bridge within ttl, so a platform's redelivery is
// handled once. If the store cannot say, the event counts as new: losing a
// person's click is worse than handling it twice, and the chokepoint makes
// a repeated click harmless. The event is marked at once: a door whose
// platform sends an event again when it heard of no success (a webhook
// answered with an error, a poller's offset not stored past it) claims it
// with Sight instead, so that a handling that never finished does not
// leave its redelivery dropped.
func (s *Service) FirstSeen(ctx context.Context, key string, ttl time.Duration) bool {
	first, err := s.store.Once(ctx, "seen:"+key, ttl)
	return first || err != nil
}

// RecordMessage stores a card an adapter posted, with its notified event.
// If the question changed while the card was on its way, the store
// enqueues the card's edit in the same step (Store.RecordMessage).
func (s *Service) RecordMessage(ctx context.Context, id QuestionID, ref MessageRef) error {
	return s.recordMessage(ctx, id, ref, false)
}

// recordMessage records a card; repeat marks one posted again after an
// earlier attempt may have posted a card that was never recorded (a crash
// between the two), so the notified event says the room may hold an
// earlier copy, which still answers but is not edited (law 4).
func (s *Service) recordMessage(ctx context.Context, id QuestionID, ref MessageRef, repeat bool) error {
	if ref.Delivery == "" || ref.ID == "" || !ref.Surface.IsChat() {
		return Errorf(CodeInvalid, "record message", "a card needs its surface, message id and delivery key")
	}
	ref.At = s.now()
	room := s.loggedRoom(ref.Surface, ref.Room)
	payload, _ := json.Marshal(map[string]any{"surface": ref.Surface, "room": room, "message": ref.ID,
		"delivery": s.loggedDelivery(ref.Delivery, ref.Room, room),
		"repeat":   repeat})
	ev := Event{QuestionID: id, At: ref.At, Kind: EventNotified, Surface: ref.Surface, Payload: payload}
	if repeat {
		ev.Reason = "posted again: an earlier attempt may have left an unrecorded copy in the room"
	}
	return Internal("record message", s.store.RecordMessage(ctx, id, ref, ev))
}
