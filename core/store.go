package core

import (
	"context"
	"encoding/json"
	"time"
)

// Event is one entry of the append-only log. Seq is assigned by the store
// and strictly increases (purging old events leaves gaps). Actor is the
// actor's Pseudonym, never the platform id itself, so the log can be
// shared without naming people. Chain is set by the store when it
// appends the event (nil on events written before the audit chain).
type Event struct {
	Seq        int64           `json:"seq"`
	QuestionID QuestionID      `json:"question_id"`
	RunID      RunID           `json:"run_id,omitempty"`
	At         time.Time       `json:"at"`
	Kind       EventKind       `json:"kind"`
	Actor      string          `json:"actor,omitempty"`
	Surface    Surface         `json:"surface,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Chain      *Chain          `json:"chain,omitempty"`
}

// Chain is an event's place in the tamper-evident audit chain, written in
// the same atomic step that appends the event; core/audit computes and
// checks it. Stream is the log the event is chained in (a Redis shard's
// stream; 0 on the embedded store) and N its position there. Digest is
// the keyed MAC of the event and of Witness (a head of the chain the
// writer knew, "<n>:<hash>"), Prev the Hash of the event before it in
// the stream, and Hash the link over both. Purged, on a checkpoint, lists
// the chained events a purge dropped.
type Chain struct {
	Stream  int    `json:"stream"`
	N       int64  `json:"n"`
	Prev    string `json:"prev"`
	Witness string `json:"witness,omitempty"`
	Digest  string `json:"digest"`
	Hash    string `json:"hash"`
	Purged  string `json:"purged,omitempty"`
}

// DeliveryKind is what a delivery asks a chat adapter to do.
type DeliveryKind string

const (
	DeliverPost     DeliveryKind = "post"     // post the question's card in Room
	DeliverUpdate   DeliveryKind = "update"   // edit the card Message to the question's current state
	DeliverRemind   DeliveryKind = "remind"   // post a reminder for a still-open question in Room
	DeliverEscalate DeliveryKind = "escalate" // post the card in an escalation route's Room
	DeliverDigest   DeliveryKind = "digest"   // post a "while you were away" digest of Route since Since
	DeliverWebhook  DeliveryKind = "webhook"  // tell the closed question's callback URL (Room) it closed
)

// Delivery is one unit of outbound work for a chat adapter. It is stored
// in the same atomic step as the change that caused it (law 3) and drained
// at least once (law 4).
type Delivery struct {
	// ID is the store's handle for Ack; empty until stored.
	ID string `json:"-"`
	// Key identifies the delivery across retries: a card recorded with the
	// same key is a repeat, not a new card.
	Key        string       `json:"key"`
	Kind       DeliveryKind `json:"kind"`
	Surface    Surface      `json:"surface"`
	Room       string       `json:"room,omitempty"`
	QuestionID QuestionID   `json:"question_id,omitempty"`
	Message    *MessageRef  `json:"message,omitempty"` // update: the card to edit
	Route      string       `json:"route,omitempty"`   // digest
	Since      time.Time    `json:"since,omitzero"`    // digest
	Person     string       `json:"person,omitempty"`  // digest: one person's, across routes, in their DM
	CreatedAt  time.Time    `json:"created_at"`
	// Attempts is how many times the store has handed this delivery out,
	// this time included; above one it is a retry.
	Attempts int `json:"-"`
	// Delay, when positive, makes the delivery due only once that long
	// has passed on the store's clock from when the store enqueues it
	// (Enqueue and Commit honour it; Create, Renotify and RecordMessage,
	// which core hands no delayed delivery, enqueue at once), and lets
	// Outbox.Cancel take it back by its Key
	// until a claim takes it. It is a wait rather than an instant so that
	// it is measured on one clock, the store's, as Retry's wait is: an
	// instant computed on a replica's clock and compared with the Redis
	// server's would move by their skew. One key waits once per surface:
	// enqueuing a key that already waits replaces it. A claimed delivery
	// carries no Delay.
	Delay time.Duration `json:"-"`
}

// Pending names a delivery enqueued with a Delay, for Outbox.Cancel.
type Pending struct {
	Surface Surface
	Key     string
	// QuestionID is the delivery's question, if it names one: a store
	// files a delivery by it.
	QuestionID QuestionID
	// IfVersion, when not nil, makes the cancel conditional: it cancels
	// only while question QuestionID is still at this version (0 being a
	// version too: a question as created). The condition
	// is the canceller's to state, not the delivery's to carry: what a
	// cancel must not outrun is a change of the question after the state
	// its caller showed (a Discord response showing version 4 must not
	// cancel the edit that puts the card right after a version 5 edit
	// reached the platform first), and only the caller knows which
	// version it showed; a key is fixed when the delivery is enqueued and
	// cannot know of a later change.
	IfVersion *int64
}

// Transition is what one attempt asks of a question: form items or a
// batch's calls to record, a vote to count, a resolution to close it with.
// Next applies it to the question as read and decides what it comes to
// (next.go); a store only writes the resulting Change.
//
// When Resolution is set the question closes with it. When Items is set
// those parts are recorded first; a form or batch closes (with
// Resolution's decider and time, state answered) only once every part has
// an answer, and until then Resolution is ignored. A transition that
// records or closes anything also updates every card of the question and
// wakes its waiters.
type Transition struct {
	QuestionID QuestionID
	Items      []ItemAnswer
	Resolution *Resolution
	// Event is appended when the question closes (its kind matches the
	// resolution's state); ItemEvent is appended for every recorded item
	// batch that does not close the form.
	Event     Event
	ItemEvent Event
	// Now is when the transition happens (the injected clock), used for
	// what it leaves without a time and for the card updates.
	Now time.Time
	// Vote, when set, records one person's vote on a question with a
	// quorum: refused with CodeConflict (AlreadyCounted) if a vote with
	// the same Key is counted; else counted, and the question closes with
	// Resolution only if the votes for Vote.Choice, this one included,
	// reach Needed. VoteEvent is appended when it does not close.
	Vote      *Vote
	Needed    int
	VoteEvent Event
	// VoterKeys are the other keys an earlier vote of Vote's voter may be
	// counted under: each account of the voter's person, as a vote cast
	// from an account before a reload tied it to the person is keyed.
	VoterKeys []string
	// Read, when set, is the question the transition is to be applied to,
	// as its caller read it (Apply); a Change computed from it is written
	// only if the question has not changed since.
	Read *Question
	// Shown, when set, names the card the caller's own response shows:
	// Next delays that card's update by ShownHold (held.go). A card the
	// question does not have recorded delays nothing.
	Shown *ShownCard
}

// Renotice re-posts a still-open question and moves its deadline: a
// reminder after downtime, an escalation or a re-ask.
type Renotice struct {
	QuestionID QuestionID
	// IfDeadline makes the change conditional: it applies only while the
	// stored deadline equals this instant, so replicas racing on the same
	// timeout act once. Zero means unconditional.
	IfDeadline time.Time
	// Deadline is the new deadline; zero keeps the current one.
	Deadline time.Time
	// Count increments Question.Renotified when true.
	Count      bool
	Event      Event
	Deliveries []Delivery
	Now        time.Time
}

// TimeIndex names a time-ordered index of questions.
type TimeIndex string

const (
	ByCreated TimeIndex = "created"
	ByClosed  TimeIndex = "closed"
)

// Store is everything core needs from persistence, as small pieces so that
// each caller can ask for only what it uses. Times handed to a store are
// UTC with millisecond precision, and come back Equal. A limit <= 0 means
// no limit, except for Claim, where max <= 0 is invalid. Every method that changes a
// question is one atomic operation (law 1).
type Store interface {
	Questions
	ClosedSearch
	EventLog
	Outbox
	Waker
	Values
	Standings
	Endings
	// Beat records now as the bridge's heartbeat and returns the previous
	// one (zero on the first beat). It is one atomic swap, so of several
	// replicas booting together exactly one sees the old heartbeat.
	Beat(ctx context.Context, now time.Time) (time.Time, error)
	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error
	Close() error
}

// Questions are the question records, their transitions and queries.
type Questions interface {
	// Create stores q (state open), its asked event and its deliveries in
	// one atomic step. It fails with CodeConflict, changing nothing, if
	// q.ID exists or q.RunID has ended.
	Create(ctx context.Context, q *Question, asked Event, out []Delivery) error
	// Get returns ErrNotFound for an unknown id.
	Get(ctx context.Context, id QuestionID) (*Question, error)
	// ReadToChange is Get for a question a transition is to be built on,
	// except that it may answer from a copy that trails the store (never
	// leads it). Commit refuses a Change built on one as stale, so core
	// reads again with Get after a stale Commit and before a refusal.
	ReadToChange(ctx context.Context, id QuestionID) (*Question, error)
	// Commit writes c in one atomic step if the question is still at
	// version c.From(): c.Question as its new state (its open and closed
	// indexes with it), c.Events appended, c.Updates enqueued (each with
	// a Delay due only after it, as Enqueue does), and the question's
	// watchers woken. If the question has changed since, nothing
	// changes and the error is a *StaleError (ErrNotFound if it is gone).
	// The returned question is the state after the change. A store that
	// may run one call twice (sending it again after losing the reply)
	// answers the second run as the first: the question as it now stands,
	// or an *AppliedError if the first left it open and another closed it
	// since. Every other change of a question a store makes (Renotify,
	// RecordMessage) moves its version on too.
	Commit(ctx context.Context, c Change) (*Question, error)
	// Renotify applies r if the question is open (else *ClosedError) and,
	// when r.IfDeadline is set, only if the deadline still matches (else
	// CodeConflict). It returns no question: its callers (the ticker,
	// reminders, the catch-up after downtime) go on to the next, and a
	// store that had to read the question back to return it would pay
	// for that on every re-notice of a burst.
	Renotify(ctx context.Context, r Renotice) error
	// RecordMessage stores a posted card on the question and appends
	// notified. A second call with the same ref.Delivery changes nothing
	// (and is no error). A card recorded after its question changed
	// (closed, or form items answered, while the post was on its way)
	// gets an update delivery in the same step, so it does not show a
	// stale state for ever; the caller has nothing left to do with the
	// question, so none is returned, for the reason Renotify gives.
	RecordMessage(ctx context.Context, id QuestionID, ref MessageRef, notified Event) error
	// EndRun marks a run ended at the given time (later asks for it are
	// refused) and returns the ids of its open questions. run is the run's
	// Run.Key: runs are each agent's own. Ending a run twice keeps the
	// first time and lists its open questions again (so core finishes an
	// ending cut short by ending the run again). Create checks
	// q.Run().Key().
	EndRun(ctx context.Context, run string, at time.Time) ([]QuestionID, error)
	// ListOpen lists open questions, hard-to-reverse first (unclassified
	// ones sort with reversible ones), then oldest first, then by id; cursor is "" for the first page and next is ""
	// after the last.
	ListOpen(ctx context.Context, cursor string, limit int) (qs []*Question, next string, err error)
	// OpenPage lists, in ListOpen's order, at most limit of the open
	// questions f matches (by f.Match) after cursor ("" for the first
	// page), the cursor of the page after (or ""), and how many match in
	// all. A cursor is one a page of the same store made.
	OpenPage(ctx context.Context, f OpenFilter, cursor string, limit int) (OpenPage, error)
	// Between lists questions whose created (or closed) time is in
	// [from, to), oldest first, at most limit.
	Between(ctx context.Context, idx TimeIndex, from, to time.Time, limit int) ([]*Question, error)
	// Due returns ids of open questions whose deadline is at or before now,
	// earliest first, at most limit.
	Due(ctx context.Context, now time.Time, limit int) ([]QuestionID, error)
	// Purge drops at most limit questions closed before cutoff, with their
	// events, and returns how many it dropped.
	Purge(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// Endings is the journal of the runs whose ending has begun and not
// finished. Service.EndRun journals a run before the store marks it ended
// (Questions.EndRun) and drops it only once every open question of the
// run is expired, so an ending cut short between the two (the process
// killed, the store failing) stays journalled: the ticker finishes it
// (Service.Tick), and an answer meanwhile is refused as one to an
// expired question. It holds only the endings under way, so the tick's
// read of it is cheap.
type Endings interface {
	// BeginEnding journals run (its Run.Key) as being ended from at; a
	// run journalled already keeps its first time.
	BeginEnding(ctx context.Context, run string, at time.Time) error
	// UnfinishedEndings lists the whole journal, oldest first (then by
	// run), each ending's time to the millisecond.
	UnfinishedEndings(ctx context.Context) ([]Ending, error)
	// EndingDone drops run from the journal; one not journalled is no
	// error.
	EndingDone(ctx context.Context, run string) error
}

// Ending is one run in the journal of endings ([Endings]).
type Ending struct {
	Run   string    // the run's Run.Key
	Began time.Time // when its ending began (the first time it was journalled)
}

// EventLog is the append-only audit log.
type EventLog interface {
	// Append adds an event that goes with no state change (refused).
	Append(ctx context.Context, e Event) (Event, error)
	// Events returns events with Seq > since, in order, at most limit.
	Events(ctx context.Context, since int64, limit int) ([]Event, error)
	// QuestionEvents returns the events of one stored question, in order,
	// at most limit, read through the store's index of them rather than
	// the whole log; an unknown id has none.
	QuestionEvents(ctx context.Context, id QuestionID, limit int) ([]Event, error)
}

// Outbox hands deliveries to chat adapters, at least once.
type Outbox interface {
	// Enqueue stores deliveries that belong to no question transition (a
	// digest). One with a Delay is due only after it, and cancellable.
	Enqueue(ctx context.Context, out []Delivery) error
	// Claim hands out up to max deliveries for surface to consumer: first
	// those another consumer claimed more than minIdle ago and never
	// acked (it is presumed dead), then new ones. With none available it
	// waits up to block for new ones; block <= 0 returns at once (it never
	// means "wait forever").
	Claim(ctx context.Context, surface Surface, consumer string, max int, minIdle, block time.Duration) ([]Delivery, error)
	// Ack marks a delivery done, so that it is not handed out again,
	// but only while it is still the claim of the consumer its id names
	// (a claim's id carries its consumer). Otherwise it changes nothing
	// and is no error: the consumer was frozen past the idle limit and
	// another took the delivery over, or it was acked or handed back
	// already. Removed from under the consumer that holds it, a
	// delivery whose send then failed would find nothing to hand back,
	// and would never go out again (law 4).
	Ack(ctx context.Context, surface Surface, id string) error
	// Retry hands a claimed delivery back to be handed out again after
	// the given wait on the store's clock, and no sooner: a platform's
	// Retry-After, a send budget's wait, a failed attempt's back-off, or
	// zero for a stopping consumer handing back what it has not sent.
	// d.Attempts is kept as the attempts made so far, so the next
	// hand-out counts on from it. Only d's own consumer may retry it: a
	// delivery another consumer took over meanwhile is left alone (nil).
	Retry(ctx context.Context, d Delivery, consumer string, after time.Duration) error
	// Extend tells the store that consumer is still working on the
	// claimed deliveries ids, so that they do not look idle and are not
	// taken over while a slow send is on its way. lost lists those of
	// ids that are no longer consumer's claims (another consumer took
	// them over while this one was frozen past the idle limit, or they
	// were acked or handed back), which it renews not: consumer must not
	// send them, or they go out twice, the second unflagged (law 4). With
	// an error, lost lists those the store could still tell of.
	Extend(ctx context.Context, surface Surface, consumer string, ids []string) (lost []string, err error)
	// Cancel takes back the delivery p names, enqueued with a Delay, so
	// that it is never handed out, and reports whether it did, in one
	// atomic step. It leaves the delivery alone (false) once a claim has
	// taken it (a claim takes it only once it is due), if p.IfVersion is
	// set and the question has moved on from it, or if there is no such
	// delivery (cancelled already, never delayed, or unknown).
	Cancel(ctx context.Context, p Pending) (bool, error)
	// Leave forgets consumer once it holds nothing (a clean shutdown),
	// and any other consumer of surface that holds nothing and has been
	// idle longer than idle (one that died), so the set of consumers stays
	// bounded.
	Leave(ctx context.Context, surface Surface, consumer string, idle time.Duration) error
}

// Waker wakes waiters when a question changes, without polling.
type Waker interface {
	// Watch returns a channel that receives (without blocking the store)
	// after any change to question id, and a function to stop watching.
	// Callers watch first, then read, so no change is missed.
	Watch(id QuestionID) (<-chan struct{}, func())
	// WatchFunc is Watch calling wake on a change instead of signalling a
	// channel, so that a wait parked off a goroutine of its own
	// (adapters/httpapi's taken waits) needs none to notice; it is the one
	// Service.Watch uses. wake runs on the store's goroutine that saw the
	// change, with the store's watch lock held: it must return at once and
	// must not call the store. It is part of the Store, not an optional
	// interface, so that a wrapper embedding a Store (the metrics' lease
	// count) keeps it.
	WatchFunc(id QuestionID, wake func()) (stop func())
}

// Values is small shared state that adapters keep across restarts and
// replicas: a long poller's offset, the lease that lets one replica alone
// poll, the console's sessions. Keys are namespaced by their user
// ("telegram:<bot>:offset").
type Values interface {
	// Value returns what key holds, or "" if nothing (or if it expired).
	Value(ctx context.Context, key string) (string, error)
	// SetValue stores val under key, without expiry.
	SetValue(ctx context.Context, key, val string) error
	// SetValueFor stores val under key until ttl passes (ttl must be at
	// least a millisecond); setting it again moves the expiry, which is
	// how an idle session lapses while a busy one lives on. Expiry runs
	// on the store's clock, and Purge drops expired keys.
	SetValueFor(ctx context.Context, key, val string, ttl time.Duration) error
	// SetValueIf stores val under key, without expiry, if key holds old
	// ("" for nothing, or a value that expired), as one atomic step, and
	// reports whether key holds val now: a record several replicas read
	// and rewrite (the cards' record, refreshshared.go) then loses no
	// replica's write to another's, as a read and a SetValue would. Of
	// writers racing from one old value, one sets it; a key that holds
	// val already reports true and changes nothing, so a call sent again
	// after its reply was lost is still told it set it. An empty val is
	// invalid (it would read as nothing).
	SetValueIf(ctx context.Context, key, old, val string) (bool, error)
	// DeleteValue drops key, with or without expiry; a missing key is no
	// error.
	DeleteValue(ctx context.Context, key string) error
	// Lease takes or renews key for owner until ttl passes, atomically: it
	// reports true if the key was free, expired or already owner's (whose
	// expiry then moves to now+ttl), and false if another owner holds it.
	Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// Release drops owner's lease on key, so a successor need not wait
	// for it to expire; releasing a lease one does not hold does nothing.
	Release(ctx context.Context, key, owner string) error
	// Once reports whether key is seen for the first time within ttl, on
	// any replica: the first call is true, every later one false until
	// the key expires. Purge drops expired keys.
	Once(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// ClaimOnce is Once for an event that is marked seen only once it is
	// handled (Service.Sight): it takes key for holder until hold passes
	// if the key is free, expired or holder's already (OnceClaimed, the
	// hold then moved to now+hold), and otherwise reports OnceHeld for
	// another holder's claim and OnceDone for a key confirmed
	// (ConfirmOnce) or taken by Once. Purge drops lapsed claims.
	ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (OnceState, error)
	// ConfirmOnce marks key done until ttl passes, whether holder's
	// claim is on it or nothing is (the claim lapsed, or was never
	// taken because the store could not say); another holder's claim is
	// left to that holder, and a key done already stays as it is.
	ConfirmOnce(ctx context.Context, key, holder string, ttl time.Duration) error
	// ReleaseOnce drops holder's claim on key, so that the event's next
	// delivery is new; a key done, or claimed by another, stays.
	ReleaseOnce(ctx context.Context, key, holder string) error
}
