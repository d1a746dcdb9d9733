package core

import (
	"slices"
	"strconv"
	"time"
)

// The close in one place. An attempt builds a Transition: what it asks of
// a question (items to record, a vote, a resolution). Next applies it to
// the question as read and computes everything that follows, with no I/O:
// the next state (whether a form or batch closes now, whether a vote
// reaches its threshold), the event, and the card updates, the one the
// caller's response shows delayed (held.go). A store then writes the Change in one atomic step, only if
// the question is still at the version Next read (Questions.Commit):
// stores hold no rule of the close.
//
// A new kind of question, or a new feature on one, writes its rules in
// its home (kind.go): its answer reading, which says what the attempt
// asks, and, if what a transition asks must be decided against the
// question as stored (a part answered, a vote counted), its next rule,
// composed from next_kinds.go's features, which Next dispatches to by
// kind; kind_test.go and next_test.go hold the tables to extend. No
// store code and no Lua changes.

// Change is one transition of a question as Next computed it: what a
// store writes, whole, in one atomic step (law 1, law 10).
type Change struct {
	// Before is the question the change was computed from, as read: the
	// store writes the change only while the stored question is still at
	// its version (From). A store that writes only what changed compares
	// Question with it.
	Before *Question
	// Question is the question after the change. Its Version is From+1.
	Question *Question
	// Events are appended in order; the store assigns each its Seq.
	Events []Event
	// Updates are the deliveries to enqueue: an update for every card of
	// the question, and, when the change closes a question that has a
	// callback URL, its webhook (callback.go), last. The update of the
	// card the caller's own response shows (Transition.Shown) has a
	// Delay of ShownHold, for the caller to cancel (held.go).
	Updates []Delivery
	// Now is when the change happens (the injected clock).
	Now time.Time
}

// From is the version of the question the change was computed from.
func (c Change) From() int64 { return c.Before.Version }

// Closes reports whether the change closes the question.
func (c Change) Closes() bool { return !c.Question.Open() }

// Next applies t to q, the question as read, and returns the whole
// change: q itself is left as it is. It refuses, changing nothing, with a
// *ClosedError if q is closed, CodeConflict if a part t answers already
// has an answer (or is given twice) or t's voter has voted
// (AlreadyCounted), and CodeInvalid if t records nothing, q's kind has
// no rule in its home (kind.go), or t closes into a state that is not a closed
// one. What t does to q is its kind's rule's to decide (next_kinds.go);
// Next builds the result.
//
// A form or batch closes with t's resolution (as answered, in parts) only
// once every part has an answer; until then the item event is appended.
// A vote closes the question only if the votes for its choice, this one
// included, reach t.Needed; until then the vote event is appended.
func Next(q *Question, t Transition) (Change, error) {
	if !q.Open() {
		return Change{}, &ClosedError{Question: q}
	}
	if len(t.Items) == 0 && t.Resolution == nil && t.Vote == nil {
		return Change{}, Errorf(CodeInvalid, nextOp, "the transition of question %s records nothing", q.ID)
	}
	rule, ok := nextRuleOf(q)
	if !ok {
		return Change{}, Errorf(CodeInvalid, nextOp, "kind %q has no transition", q.Kind) // a kind added to enums.go but with no home
	}
	// Decide everything before building anything.
	res, err := rule(q, t)
	if err != nil {
		return Change{}, err
	}
	if res != nil && !res.State.Closed() {
		return Change{}, Errorf(CodeInvalid, nextOp, "resolution state %q is not a closed state", res.State)
	}
	n, ev := nextQuestion(q, t, res)
	return changeOf(q, n, ev, t), nil
}

// nextOp names the close in Next's refusals.
const nextOp = "resolve"

// nextQuestion builds the question after t, as decided (res, nil while
// it stays open), and its event, in one allocation: the parts and the
// vote t records, and the close.
func nextQuestion(q *Question, t Transition, res *Resolution) (*Question, []Event) {
	now := t.Now
	next := &struct {
		q   Question
		res Resolution
		ev  [1]Event
	}{q: *q}
	n := &next.q
	n.Version = q.Version + 1
	if len(t.Items) > 0 {
		n.Answers = make([]ItemAnswer, 0, len(q.Answers)+len(t.Items))
		n.Answers = append(n.Answers, q.Answers...)
		for _, a := range t.Items {
			a.Decider.Roles = nil // checked, never stored
			if a.At.IsZero() {
				a.At = now
			}
			n.Answers = append(n.Answers, a)
		}
		SortAnswers(n)
	}
	if v := t.Vote; v != nil {
		vote := *v
		vote.Decider.Roles = nil
		if vote.At.IsZero() {
			vote.At = now
		}
		n.Votes = make([]Vote, 0, len(q.Votes)+1)
		n.Votes = append(append(n.Votes, q.Votes...), vote)
		SortVotes(n.Votes)
	}
	ev := &next.ev[0]
	switch {
	case res != nil:
		next.res = *res
		res = &next.res
		res.Decider.Roles = nil
		if res.At.IsZero() {
			res.At = now
		}
		if res.Approved != nil {
			yes := *res.Approved
			res.Approved = &yes
		}
		n.State, n.Resolution = res.State, res
		*ev = CompleteEvent(t.Event, q, closeEvent(res.State), now)
	case t.Vote != nil:
		*ev = CompleteEvent(t.VoteEvent, q, EventVoted, now)
	default:
		*ev = CompleteEvent(t.ItemEvent, q, EventItemAnswered, now)
	}
	return n, next.ev[:]
}

// changeOf is the change from q to n with its events: an update for
// every card of n, the first one t.Shown names delayed by ShownHold, and,
// when n closes with a callback URL, its webhook, last.
func changeOf(q, n *Question, events []Event, t Transition) Change {
	now := t.Now
	c := Change{Before: q, Question: n, Events: events, Now: now}
	if len(n.Messages) > 0 {
		c.Updates = make([]Delivery, 0, len(n.Messages))
	}
	shown := t.Shown
	for i := range n.Messages {
		d := cardUpdate(n, i, UpdateKey(n.ID, n.Version, i), now)
		if shown.shows(n.Messages[i]) {
			d.Delay, shown = ShownHold, nil // one card: a repeat of it is updated as usual
		}
		c.Updates = append(c.Updates, d)
	}
	if n.CallbackURL != "" && !n.Open() {
		c.Updates = append(c.Updates, webhookDelivery(n, now))
	}
	return c
}

// SortAnswers keeps q's answers in part order (form items, or a batch's
// calls), the order stores return them in; an answer to a part the
// question does not list (there should be none) follows, by part id,
// rather than vanish.
func SortAnswers(q *Question) {
	if len(q.Answers) < 2 {
		return
	}
	ids := q.PartIDs()
	rank := make(map[string]int, len(ids))
	for i, id := range ids {
		rank[id] = i
	}
	pos := func(a ItemAnswer) int {
		if i, ok := rank[a.ItemID]; ok {
			return i
		}
		return len(ids)
	}
	slices.SortStableFunc(q.Answers, func(a, b ItemAnswer) int {
		if c := pos(a) - pos(b); c != 0 {
			return c
		}
		switch {
		case a.ItemID < b.ItemID:
			return -1
		case a.ItemID > b.ItemID:
			return 1
		}
		return 0
	})
}

// CompleteEvent fills what an event of question q may leave to whoever
// records it: the question, its run, its kind and its time. Next uses it
// for the close's events, and a store for the events it appends itself
// (an ask's, a re-notice's).
func CompleteEvent(e Event, q *Question, kind EventKind, now time.Time) Event {
	if e.QuestionID == "" {
		e.QuestionID = q.ID
	}
	if e.RunID == "" {
		e.RunID = q.RunID
	}
	if e.Kind == "" {
		e.Kind = kind
	}
	if e.At.IsZero() {
		e.At = now
	}
	return e
}

// UpdateKey is the key of the update of card i (an index into
// q.Messages) that the change to version ver of question id enqueues:
// unique per change and card.
func UpdateKey(id QuestionID, ver int64, i int) string {
	return string(id) + "/update/" + strconv.FormatInt(ver, 10) + "/" + strconv.Itoa(i+1)
}

// cardUpdate is the update delivery of card i of q under key. Its
// Message points at the card in q, which a change never alters.
func cardUpdate(q *Question, i int, key string, now time.Time) Delivery {
	m := &q.Messages[i]
	return Delivery{Key: key, Kind: DeliverUpdate, Surface: m.Surface, Room: m.Room, QuestionID: q.ID, Message: m, CreatedAt: now}
}
