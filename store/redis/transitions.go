package redis

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Commit writes a change core computed (core.Next) with one script
// (resolve.lua) that checks the question is still at the version the
// change was computed from and then only writes: the fields that changed,
// the resolution, the events (a close's first one marked for the closed
// index's catch-up), the card updates (a delayed one into its surface's
// zset of retries, pending.go) and the wake-up. On success the question
// after the change is core's own, not read back.
func (s *Store) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	const op = "redis commit"
	if err := checkChange(op, c); err != nil {
		return nil, err
	}
	q := c.Question
	shard, ok := s.shardOf(q.ID)
	if !ok {
		return nil, core.ErrNotFound
	}
	cmd, err := s.commitCmd(c, shard)
	if err != nil {
		if core.ErrorCode(err) == core.CodeInvalid {
			return nil, err
		}
		return nil, core.Internal(op, err)
	}
	// Local waiters need not wait for the round trip through pub/sub, and
	// after a close they need not read the question back either.
	woken := s.resolving(q.ID)
	r, err := s.runArgs(ctx, resolveScript, cmd)
	if err != nil {
		// The script may have run all the same: whatever is kept of the
		// question goes. Its watchers look again, unless durability is on:
		// then the change may be on the primary alone, and a waiter woken
		// would read what a failover may lose (as the other stores' are not
		// woken: the script published nothing). They are woken once the
		// replicas hold whatever the primary has (announceWhenHeld).
		woken(nil, !s.durable())
		s.announceWhenHeld(shard, q.ID)
		return nil, core.Internal(op, err)
	}
	if r.code == codeOK {
		// Applied, by this run or (sent again) by the first: with
		// durability on, the replicas hold it now, and the script left the
		// wake-up to this.
		s.announce(ctx, shard, q.ID)
	}
	if r.code == codeOK && r.n == 1 {
		woken(q, true)
		return q, nil
	}
	after, err := s.outcome(op, q.ID, r)
	if err != nil {
		woken(nil, true)
		return nil, err
	}
	woken(after, true)
	return after, nil
}

// commitCmd is resolve.lua's call for c, in one allocation: its KEYS
// (commitKeys) and its ARGV, as the script's header lays them out.
func (s *Store) commitCmd(c core.Change, shard int) ([]any, error) {
	q := c.Question
	var closeFlag, resJSON any = "", ""
	if c.Before.Open() && !q.Open() {
		b, err := json.Marshal(q.Resolution)
		if err != nil {
			return nil, err
		}
		closeFlag, resJSON = "1", b
	}
	now, err := c.Now.MarshalJSON()
	if err != nil {
		return nil, err
	}
	sk := s.shardKeys(shard)
	boxes := streamsOf(c.Updates, sk)
	held := delayed(c.Updates)
	nkeys := 6 + boxes.n
	nargs := 18 + 4*(len(q.Answers)-len(c.Before.Answers)+len(q.Votes)-len(c.Before.Votes)) + 3*len(c.Events) + 3*len(c.Updates)
	if held > 0 {
		nkeys, nargs = nkeys+2*held, nargs+1+held
	}
	cmd := s.commitKeys(scriptArgs(nkeys, nargs), c, shard, &boxes, held)
	cmd = append(cmd, sk.shardArg, s.clockArg(), sk.surfacesArg)
	nowMS := any(msString(c.Now)) // boxed once: the close's time in ms, and its closed field
	cmd = append(cmd, string(q.ID), sk.wakeArg, now, nowMS, c.From(), s.attempt(), closeFlag, resJSON)
	if cmd, err = appendChangedFields(cmd, c, nowMS); err != nil {
		return nil, err
	}
	cmd = append(cmd, len(c.Events))
	for _, e := range c.Events {
		ev, err := s.renderEvent(e, shard)
		if err != nil {
			return nil, core.Errorf(core.CodeInvalid, "redis commit", "event %q of question %s: %v", e.Kind, q.ID, err)
		}
		if !ev.complete() {
			// One without a kind renders as none (packEvent), which
			// resolve.lua would refuse: refused here, before anything is sent.
			return nil, core.Errorf(core.CodeInvalid, "redis commit", "event %q of question %s renders without its audit digest", e.Kind, q.ID)
		}
		cmd = ev.args(cmd)
	}
	if cmd, err = appendUpdates(cmd, q.ID, c.Updates, &boxes, held); err != nil {
		return nil, err
	}
	if held > 0 {
		return s.appendHeldTail(cmd, c, now, 7+boxes.n)
	}
	return cmd, nil
}

// streams are the outbox streams a change enqueues on, which alone go in
// resolve.lua's KEYS: keys[:n], and pos, each surface's number (boxOf)
// to its place among them, from 1.
type streams struct {
	pos  [maxBoxes]int
	keys [maxBoxes]any
	n    int
}

// streamsOf are the outbox streams of shard keys sk that updates go on;
// an update held back (Delay) waits in its surface's zset of retries
// instead.
func streamsOf(updates []core.Delivery, sk *shardKeys) streams {
	var st streams
	for _, d := range updates {
		if d.Delay > 0 {
			continue
		}
		if b := boxOf(d.Surface); st.pos[b] == 0 {
			st.keys[st.n] = sk.boxes[b-1]
			st.n++
			st.pos[b] = st.n
		}
	}
	return st
}

// commitKeys appends resolve.lua's KEYS for c to cmd: the question's own
// three, its shard's, the outbox streams and, for the held updates, their
// zsets of retries and held hashes.
func (s *Store) commitKeys(cmd []any, c core.Change, shard int, boxes *streams, held int) []any {
	sk, id := s.shardKeys(shard), string(c.Question.ID)
	// The question's three keys in one allocation.
	all := sk.questionPrefix + id + sk.documentPrefix + id + sk.resolutionPrefix + id
	qend := len(sk.questionPrefix) + len(id)
	dend := qend + len(sk.documentPrefix) + len(id)
	cmd = append(cmd, all[:qend])
	cmd = append(cmd, sk.resolveKeys[:]...)
	cmd = append(cmd, all[qend:dend], all[dend:])
	cmd = append(cmd, boxes.keys[:boxes.n]...)
	if held > 0 {
		cmd = s.appendHeldKeys(cmd, shard, c.Updates)
	}
	if scriptHook != nil {
		keys := make([]string, 0, len(cmd)-3)
		for _, k := range cmd[3:] {
			keys = append(keys, k.(string))
		}
		scriptHook(resolveScript.name, keys)
	}
	return cmd
}

// appendUpdates appends resolve.lua's updates of question id to cmd:
// their count, then per update that is not held its stream's place among
// KEYS (boxes), and the card (card.go) and delivery key or, for a close's
// webhook, the delivery whole and "".
func appendUpdates(cmd []any, id core.QuestionID, updates []core.Delivery, boxes *streams, held int) ([]any, error) {
	cmd = append(cmd, len(updates)-held)
	for _, d := range updates {
		if d.Delay > 0 {
			continue // in the tail (appendHeldTail)
		}
		if isWebhook(d) {
			// Whole, with no key of its own: resolve.lua adds it as an
			// Enqueue does. (A copy: d itself, taken by address, would
			// move to the heap for every update.)
			whole := d
			b, err := json.Marshal(&whole)
			if err != nil {
				return nil, err
			}
			cmd = append(cmd, boxes.pos[boxOf(d.Surface)], b, "")
			continue
		}
		u, err := updateValue(id, d)
		if err != nil {
			return nil, err
		}
		cmd = append(cmd, boxes.pos[boxOf(d.Surface)], u, d.Key)
	}
	return cmd, nil
}

// checkChange refuses, before anything is sent, a change that does not
// hold together or that changes what only Renotify and RecordMessage
// change (the deadline, the renotices, the cards), which resolve.lua
// does not write.
func checkChange(op string, c core.Change) error {
	if c.Before == nil || c.Question == nil || c.Before.ID != c.Question.ID {
		return core.Errorf(core.CodeInvalid, op, "a change needs the question before and after it")
	}
	b, q := c.Before, c.Question
	if q.Version != b.Version+1 {
		return core.Errorf(core.CodeInvalid, op, "a change from version %d makes version %d, not %d", b.Version, b.Version+1, q.Version)
	}
	if !b.Open() || (!q.Open() && q.Resolution == nil) {
		return core.Errorf(core.CodeInvalid, op, "a change starts from an open question, and a close has a resolution")
	}
	if !q.Deadline.Equal(b.Deadline) || q.Renotified != b.Renotified || len(q.Messages) != len(b.Messages) {
		return core.Errorf(core.CodeInvalid, op, "a change of question %s may not move its deadline, renotices or cards", q.ID)
	}
	for _, d := range c.Updates {
		if isWebhook(d) {
			continue // enqueued whole, as JSON (Commit)
		}
		if !d.Surface.IsChat() || d.Message == nil {
			return core.Errorf(core.CodeInvalid, op, "card updates go to cards on chat surfaces, not %q", d.Surface)
		}
	}
	return nil
}

// isWebhook reports whether d is a close's webhook, which a change
// enqueues whole rather than as a card update.
func isWebhook(d core.Delivery) bool {
	return d.Kind == core.DeliverWebhook && d.Surface == core.SurfaceWebhook && d.Message == nil
}

// appendChangedFields appends to a script's ARGV the hash fields (their
// count, then name, value pairs) a change sets besides those resolve.lua
// keeps itself (ver, at, ev, res): the parts answered and the votes
// counted since Before, their counts, the state and, on a close, its
// time (nowMS, c.Now in ms).
func appendChangedFields(cmd []any, c core.Change, nowMS any) ([]any, error) {
	b, q := c.Before, c.Question
	at := len(cmd)
	cmd = append(cmd, 0)
	n := 0
	if len(q.Answers) != len(b.Answers) {
		for i := range q.Answers {
			a := &q.Answers[i] // by address: a copy taken by address would move to the heap
			if _, had := b.Answered(a.ItemID); had {
				continue
			}
			v, err := json.Marshal(a)
			if err != nil {
				return nil, err
			}
			cmd = append(cmd, "a:"+a.ItemID, v)
			n++
		}
		cmd = append(cmd, "na", len(q.Answers))
		n++
	}
	if len(q.Votes) != len(b.Votes) {
		had := make(map[string]bool, len(b.Votes))
		for _, v := range b.Votes {
			had[v.Key] = true
		}
		for i := range q.Votes {
			v := &q.Votes[i]
			if had[v.Key] {
				continue
			}
			j, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			cmd = append(cmd, "v:"+v.Key, j)
			n++
		}
		cmd = append(cmd, "nv", len(q.Votes))
		n++
	}
	if q.State != b.State {
		cmd = append(cmd, "state", stateArg(q.State))
		n++
	}
	if b.Open() && !q.Open() {
		cmd = append(cmd, "closed", nowMS)
		n++
	}
	cmd[at] = n
	return cmd, nil
}

// stateArgs are the closed states as script arguments, boxed once.
var stateArgs = func() map[core.State]any {
	m := make(map[core.State]any)
	for _, st := range []core.State{core.StateAnswered, core.StateDeclined, core.StateTimedOut, core.StateExpired, core.StateCancelled} {
		m[st] = string(st)
	}
	return m
}()

func stateArg(st core.State) any {
	if v, ok := stateArgs[st]; ok {
		return v
	}
	return string(st)
}

// maxBoxes bounds the outbox streams of a shard, and so of one change,
// with room for boxOf's numbers from 1.
const maxBoxes = 16

func init() {
	if len(core.OutboxSurfaces) >= maxBoxes {
		panic("redis store: more outbox surfaces than maxBoxes")
	}
}

// boxOf is the number (from 1) of surface's outbox stream in
// keys.outboxes order; checkChange has made sure surface has an outbox.
func boxOf(surface core.Surface) int {
	for i, sf := range core.OutboxSurfaces {
		if sf == surface {
			return i + 1
		}
	}
	return 0
}

// updateValue is what an update delivery of a card carries on the stream
// (cardUpdate reads it): the card as stored (storeCard), then, for a
// packed card, packSep and its delivery key (a fragment holds its key).
// A packed card is written in one allocation.
func updateValue(id core.QuestionID, d core.Delivery) ([]byte, error) {
	if v, ok := appendPackedCard(nil, *d.Message); ok {
		return append(append(v, packSep...), d.Message.Delivery...), nil
	}
	v, err := storeCard(id, *d.Message)
	if err != nil || isFragment(v) {
		return []byte(v), err
	}
	return []byte(v + packSep + d.Message.Delivery), nil
}

// Renotify re-posts a still-open question and moves its deadline.
func (s *Store) Renotify(ctx context.Context, rn core.Renotice) error {
	const op = "redis renotify"
	shard, ok := s.shardOf(rn.QuestionID)
	if !ok {
		return core.ErrNotFound
	}
	var ifDeadline, deadline, count string
	if !rn.IfDeadline.IsZero() {
		ifDeadline = msString(rn.IfDeadline)
	}
	if !rn.Deadline.IsZero() {
		deadline = msString(rn.Deadline)
	}
	if rn.Count {
		count = "1"
	}
	ev, err := s.renderEvent(rn.Event, shard)
	if err != nil {
		return core.Internal(op, err)
	}
	args := ev.args([]any{
		shard, s.clockArg(), surfaceList,
		string(rn.QuestionID), s.sk[shard].wakeArg, ifDeadline, deadline, count,
	})
	if args, err = appendDeliveries(op, args, rn.Deliveries); err != nil {
		return err
	}
	keys := append([]string{
		s.k.question(rn.QuestionID), s.k.events(shard), s.k.seq(shard), s.k.deadline(shard),
		s.k.document(rn.QuestionID), s.k.resolution(rn.QuestionID), s.k.renotified(shard, s.attempt()),
	}, s.k.outboxes(shard)...)
	r, err := s.run(ctx, renotifyScript, keys, args...)
	if err != nil {
		s.announceWhenHeld(shard, rn.QuestionID)
		return core.Internal(op, err)
	}
	if _, err := s.outcome(op, rn.QuestionID, r); err != nil {
		return err
	}
	s.announce(ctx, shard, rn.QuestionID)
	s.wake(rn.QuestionID)
	return nil
}

// RecordMessage stores a posted card, once per delivery key.
func (s *Store) RecordMessage(ctx context.Context, id core.QuestionID, ref core.MessageRef, notified core.Event) error {
	const op = "redis record message"
	shard, ok := s.shardOf(id)
	if !ok {
		return core.ErrNotFound
	}
	if !ref.Surface.IsChat() {
		return core.Errorf(core.CodeInvalid, op, "cards are posted on chat surfaces, not %q", ref.Surface)
	}
	card, err := storeCard(id, ref)
	if err != nil {
		return core.Internal(op, err)
	}
	ev, err := s.renderEvent(notified, shard)
	if err != nil {
		return core.Internal(op, err)
	}
	at, err := json.Marshal(ref.At)
	if err != nil {
		return core.Internal(op, err)
	}
	keys := append([]string{s.k.question(id), s.k.events(shard), s.k.seq(shard)}, s.k.outboxes(shard)...)
	args := ev.args([]any{
		shard, s.clockArg(), surfaceList,
		string(id), s.sk[shard].wakeArg, ref.Delivery, string(ref.Surface), card,
	})
	r, err := s.run(ctx, recordMessageScript, keys, append(args, at)...)
	if err != nil {
		s.announceWhenHeld(shard, id)
		return core.Internal(op, err)
	}
	if _, err := s.outcome(op, id, r); err != nil {
		return err
	}
	s.announce(ctx, shard, id)
	s.wake(id)
	return nil
}

// EndRun marks the run ended in every shard and collects its open
// questions. Each shard's step is atomic with the creates of that shard,
// and a question lives in one shard, so every question of the run is
// either refused at create or listed here.
func (s *Store) EndRun(ctx context.Context, runID string, at time.Time) ([]core.QuestionID, error) {
	const op = "redis end run"
	if runID == "" {
		return nil, core.Errorf(core.CodeInvalid, op, "run id is required")
	}
	var ids []core.QuestionID
	for shard := range s.shards {
		r, err := s.run(ctx, endRunScript, []string{s.k.runs(shard), s.k.runOpen(shard)}, runID, msString(at))
		if err != nil {
			return nil, core.Internal(op, err)
		}
		if r.code != codeOK {
			return nil, core.Internal(op, errors.New("end run: unexpected code "+strconv.FormatInt(r.code, 10)))
		}
		// The index keeps closed questions until they are read here (or
		// purged): a close does not pay for removing them.
		open, stale, err := s.openOnly(ctx, questionIDs(r.list))
		if err != nil {
			return nil, core.Internal(op, err)
		}
		if err := dropStale(ctx, s, stale, func(id core.QuestionID) (string, string) {
			return s.k.runOpen(shard), runID + "\x00" + string(id)
		}); err != nil {
			return nil, core.Internal(op, err)
		}
		ids = append(ids, open...)
	}
	return ids, nil
}
