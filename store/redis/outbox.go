package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Enqueue stores deliveries that belong to no question: each goes to the
// shard its key hashes to (its question's shard when it names one), all
// of one shard in one MULTI; delayed ones first, each shard's and
// surface's in one script (pending.go).
func (s *Store) Enqueue(ctx context.Context, out []core.Delivery) error {
	const op = "redis enqueue"
	byShard := make(map[int][]goredis.XAddArgs)
	var later []core.Delivery
	for _, d := range out {
		if !d.Surface.HasOutbox() {
			return core.Errorf(core.CodeInvalid, op, "deliveries go to %s, not %q", core.SurfaceNames(core.OutboxSurfaces), d.Surface)
		}
		if d.Delay > 0 {
			later = append(later, d)
			continue
		}
		b, err := json.Marshal(&d)
		if err != nil {
			return core.Internal(op, err)
		}
		shard := s.deliveryShard(d)
		byShard[shard] = append(byShard[shard], goredis.XAddArgs{
			Stream: s.k.outbox(shard, d.Surface),
			Values: []any{"d", string(b)},
		})
	}
	if len(later) > 0 {
		if err := s.enqueueLater(ctx, later); err != nil {
			return core.Internal(op, err)
		}
	}
	for _, adds := range byShard {
		_, err := s.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			for i := range adds {
				p.XAdd(ctx, &adds[i])
			}
			return nil
		})
		if err != nil {
			return core.Internal(op, err)
		}
	}
	return nil
}

func (s *Store) deliveryShard(d core.Delivery) int {
	if sh, ok := s.shardOf(d.QuestionID); ok {
		return sh
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(d.Key))
	return int(h.Sum32() % uint32(s.shards))
}

// Claim hands out deliveries of one surface: first, shard by shard,
// those idle longer than minIdle (their consumer is presumed dead) and
// new ones, without blocking; then, if there were none, it blocks up to
// block for new ones. A claim that got nothing and met a failing shard
// reports that shard's error rather than block.
func (s *Store) Claim(ctx context.Context, surface core.Surface, consumer string, max int, minIdle, block time.Duration) ([]core.Delivery, error) {
	const op = "redis claim"
	if !surface.HasOutbox() {
		return nil, core.Errorf(core.CodeInvalid, op, "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), surface)
	}
	if consumer == "" {
		return nil, core.Errorf(core.CodeInvalid, op, "a consumer name is required")
	}
	if max <= 0 {
		return nil, core.Errorf(core.CodeInvalid, op, "a claim must ask for at least one delivery, not %d", max)
	}
	deadline := time.Now().Add(block)
	for {
		var out []core.Delivery
		var failed error
		next := time.Duration(-1) // until the earliest retry falls due
		first := int(s.claimTurn.Add(1)) % s.shards
		for i := 0; i < s.shards && len(out) < max; i++ {
			shard := (first + i) % s.shards
			got, due, err := s.claimShard(ctx, shard, surface, consumer, max-len(out), minIdle)
			if err != nil {
				// What the other shards hand out still goes: it is in
				// this consumer's pending list already, and the failing
				// shard is tried again at the next claim.
				failed = err
				continue
			}
			out = append(out, got...)
			if due >= 0 && (next < 0 || due < next) {
				next = due
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if failed != nil {
			return nil, core.Internal(op, failed)
		}
		left := time.Until(deadline)
		if block <= 0 || left <= 0 {
			return nil, nil
		}
		// Block for new entries, but no longer than until a retry falls
		// due: only a claim moves it back onto the stream.
		wait := left
		if next >= 0 {
			wait = min(wait, next+time.Millisecond)
		}
		out, err := s.blockRead(ctx, surface, consumer, max, wait, first)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		if len(out) > 0 || ctx.Err() != nil {
			return out, nil
		}
	}
}

func (s *Store) claimShard(ctx context.Context, shard int, surface core.Surface, consumer string, max int, minIdle time.Duration) ([]core.Delivery, time.Duration, error) {
	stream := s.k.outbox(shard, surface)
	keys := []string{stream, s.k.later(shard, surface), s.k.held(shard, surface), s.k.claimed(shard, s.attempt())}
	r, err := s.run(ctx, claimScript, keys, s.group, consumer, minIdle.Milliseconds(), max, s.clock())
	if isNoGroup(err) {
		// The stream was deleted behind our back (FLUSHALL, say): make the
		// group again and retry once.
		if err = s.createGroup(ctx, stream); err == nil {
			r, err = s.run(ctx, claimScript, keys, s.group, consumer, minIdle.Milliseconds(), max, s.clock())
		}
	}
	if err != nil {
		return nil, 0, err
	}
	out := make([]core.Delivery, 0, len(r.list)/6)
	for i := 0; i+5 < len(r.list); i += 6 {
		attempts, _ := strconv.Atoi(r.list[i+1])
		e := entry{d: r.list[i+2], u: r.list[i+3], k: r.list[i+4], t: r.list[i+5]}
		out = append(out, decodeDelivery(shard, surface, consumer, r.list[i], e, attempts))
	}
	due := time.Duration(-1)
	if r.n >= 0 {
		due = time.Duration(r.n) * time.Millisecond
	}
	return out, due, nil
}

// blockRead waits for new deliveries with XREADGROUP BLOCK. One shard:
// one call. Several shards on one server (standalone, Sentinel): one call
// over all their streams. Several shards on a cluster, where a command
// may not span slots: each shard in turn, with a slice of the time.
func (s *Store) blockRead(ctx context.Context, surface core.Surface, consumer string, max int, block time.Duration, first int) ([]core.Delivery, error) {
	read := func(shards []int, wait time.Duration) ([]core.Delivery, error) {
		streams := make([]string, 0, 2*len(shards))
		for _, sh := range shards {
			streams = append(streams, s.k.outbox(sh, surface))
		}
		for range shards {
			streams = append(streams, ">")
		}
		args := &goredis.XReadGroupArgs{
			Group: s.group, Consumer: consumer, Streams: streams,
			Count: int64(max), Block: max1ms(wait),
		}
		res, err := s.client.XReadGroup(ctx, args).Result()
		if isNoGroup(err) {
			for _, sh := range shards {
				if err := s.createGroup(ctx, s.k.outbox(sh, surface)); err != nil {
					return nil, err
				}
			}
			res, err = s.client.XReadGroup(ctx, args).Result()
		}
		if err == goredis.Nil {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var out []core.Delivery
		for _, st := range res {
			shard := -1
			for _, sh := range shards {
				if s.k.outbox(sh, surface) == st.Stream {
					shard = sh
				}
			}
			for _, m := range st.Messages {
				var e entry
				e.d, _ = m.Values["d"].(string)
				e.u, _ = m.Values["u"].(string)
				e.k, _ = m.Values["k"].(string)
				e.t, _ = m.Values["t"].(string)
				prior, _ := m.Values["p"].(string) // a retry's earlier attempts
				n, _ := strconv.Atoi(prior)
				out = append(out, decodeDelivery(shard, surface, consumer, m.ID, e, 1+n))
			}
		}
		return out, nil
	}

	if s.shards == 1 || !s.cluster {
		all := make([]int, s.shards)
		for i := range all {
			all[i] = (first + i) % s.shards
		}
		return read(all, block)
	}
	deadline := time.Now().Add(block)
	slice := block / time.Duration(s.shards)
	for i := 0; ; i++ {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		out, err := read([]int{(first + i) % s.shards}, min(slice, left))
		if err != nil || len(out) > 0 {
			return out, err
		}
	}
}

// max1ms keeps a positive wait from rounding to BLOCK 0, which would wait
// forever.
func max1ms(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return time.Millisecond
	}
	return d
}

// entry is an outbox stream entry's fields. A delivery is stored whole
// as JSON in d, or, for a card's update (enqueued by a script, which
// writes no JSON), as the card as stored (card.go) in u, its key in k and
// its time as a JSON string in t.
type entry struct{ d, u, k, t string }

// decodeDelivery reads a stored delivery that consumer claimed. One that
// does not decode (a bug, or a hand-edited stream) is still handed out,
// with its id and no kind, rather than failing every claim after it: the
// outbox loop reports a delivery it cannot carry out and acks it.
func decodeDelivery(shard int, surface core.Surface, consumer, streamID string, e entry, attempts int) core.Delivery {
	var d core.Delivery
	var err error
	if e.d != "" {
		err = json.Unmarshal([]byte(e.d), &d)
	} else {
		d, err = cardUpdate(surface, e.u, e.k, e.t)
	}
	if err != nil {
		d = core.Delivery{Key: "undecodable:" + streamID, Surface: surface}
	}
	d.ID = deliveryID(shard, streamID, consumer)
	d.Attempts = attempts
	return d
}

// deliveryID is the handle of a claim: the shard and stream entry, and
// the consumer that claimed it, so that Ack (which core's interface
// gives no consumer) removes the entry only while it is still that
// consumer's claim.
func deliveryID(shard int, streamID, consumer string) string {
	return strconv.Itoa(shard) + "/" + streamID + "/" + consumer
}

// Ack removes a delivery while it is still the claim of the consumer
// its id names: XACK takes it off the pending list, XDEL out of the
// stream (ack.lua). A late ack by a consumer whose claim another took
// over removes nothing: the other consumer's send may yet fail and hand
// it back.
func (s *Store) Ack(ctx context.Context, surface core.Surface, id string) error {
	const op = "redis ack"
	shard, streamID, consumer, err := s.parseDeliveryID(op, surface, id)
	if err != nil {
		return err
	}
	if _, err := s.run(ctx, ackScript, []string{s.k.outbox(shard, surface)}, s.group, consumer, streamID); err != nil {
		return core.Internal(op, err)
	}
	return nil
}

// Retry moves a claimed delivery from the stream to the shard's retries,
// due after the wait; claims put it back on the stream when it falls due.
func (s *Store) Retry(ctx context.Context, d core.Delivery, consumer string, after time.Duration) error {
	const op = "redis retry"
	shard, streamID, _, err := s.parseDeliveryID(op, d.Surface, d.ID)
	if err != nil {
		return err
	}
	stored := d
	stored.ID, stored.Attempts = "", 0
	b, err := json.Marshal(&stored)
	if err != nil {
		return core.Internal(op, err)
	}
	keys := []string{s.k.outbox(shard, d.Surface), s.k.later(shard, d.Surface)}
	_, err = s.run(ctx, retryScript, keys, s.group, consumer, streamID, max(after, 0).Milliseconds(), max(d.Attempts, 0), b, s.clock())
	if err != nil {
		return core.Internal(op, err)
	}
	return nil
}

// Extend renews consumer's claims on ids, every shard at once and each
// on its own: a shard failing over (seconds, against a MinIdle of ten)
// must not leave the others' claims to go idle, or another replica takes
// over deliveries this one is still sending. It reports those ids that
// are no longer consumer's (extend.lua's list), from every shard that
// answered; its error joins the failing shards'.
func (s *Store) Extend(ctx context.Context, surface core.Surface, consumer string, ids []string) ([]string, error) {
	const op = "redis extend"
	byShard := make(map[int][]any)
	asGiven := make(map[string]string, len(ids)) // "<shard> <stream id>" to the caller's id
	for _, id := range ids {
		shard, streamID, _, err := s.parseDeliveryID(op, surface, id)
		if err != nil {
			return nil, err
		}
		byShard[shard] = append(byShard[shard], streamID)
		asGiven[strconv.Itoa(shard)+" "+streamID] = id
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		lost []string
	)
	for shard, sids := range byShard {
		wg.Go(func() {
			args := append([]any{s.group, consumer}, sids...)
			r, err := s.run(ctx, extendScript, []string{s.k.outbox(shard, surface)}, args...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("shard %d: %w", shard, err))
				return
			}
			for _, sid := range r.list {
				lost = append(lost, asGiven[strconv.Itoa(shard)+" "+sid])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return lost, core.Internal(op, err)
	}
	return lost, nil
}

// Leave removes consumer from every shard's group of surface once it holds
// nothing, and any consumer that holds nothing and has idled past idle.
func (s *Store) Leave(ctx context.Context, surface core.Surface, consumer string, idle time.Duration) error {
	const op = "redis leave"
	if !surface.HasOutbox() {
		return core.Errorf(core.CodeInvalid, op, "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), surface)
	}
	for shard := range s.shards {
		stream := s.k.outbox(shard, surface)
		_, err := s.run(ctx, leaveScript, []string{stream}, s.group, consumer, idle.Milliseconds())
		if isNoGroup(err) {
			continue // nothing was ever claimed there
		}
		if err != nil {
			return core.Internal(op, err)
		}
	}
	return nil
}

// parseDeliveryID splits a delivery id this store handed out
// (deliveryID) into its shard, stream id and consumer.
func (s *Store) parseDeliveryID(op string, surface core.Surface, id string) (int, string, string, error) {
	if !surface.HasOutbox() {
		return 0, "", "", core.Errorf(core.CodeInvalid, op, "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), surface)
	}
	head, rest, ok1 := strings.Cut(id, "/")
	streamID, consumer, ok2 := strings.Cut(rest, "/")
	shard, err := strconv.Atoi(head)
	if !ok1 || !ok2 || consumer == "" || err != nil || shard < 0 || shard >= s.shards || !validStreamID(streamID) {
		return 0, "", "", core.Errorf(core.CodeInvalid, op, "delivery id %q is not one this store handed out", id)
	}
	return shard, streamID, consumer, nil
}

func validStreamID(id string) bool {
	a, b, ok := strings.Cut(id, "-")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(a, 10, 64)
	_, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil
}

func isNoGroup(err error) bool {
	return err != nil && strings.Contains(err.Error(), "NOGROUP")
}
