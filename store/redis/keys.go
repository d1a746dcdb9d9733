package redis

import (
	"strconv"

	"github.com/askbridge/askbridge/core"
)

// keys builds every Redis key and channel name the store uses; no other
// file spells one. Everything of shard N carries the hash tag
// {<prefix>:s<N>}, and a script only ever touches one shard, so on Redis
// Cluster every script's keys share one slot.
//
//	{ab:s0}:q:<id>          hash: one question (see record.go for fields)
//	{ab:s0}:d:<id>          string: the question's document (record.go)
//	{ab:s0}:r:<id>          string: the question's resolution, once closed
//	{ab:s0}:qe:<id>         list: stream ids of the question's events, in
//	                        records of layout 0 (migrate.go folds it into
//	                        the hash's "ev" field and drops it)
//	{ab:s0}:events          stream: the shard's event log, ids "<n>-<shard>";
//	                        fields e (eventcodec.go), c and x (its audit
//	                        chain, chain.go), z on a close's event
//	{ab:s0}:seq             string: the shard's event counter and the
//	                        newest event's link, "<n> <hash>" (common.lua's
//	                        append_event; layout 0 and 1: n alone)
//	{ab:s0}:open            zset (lex): open questions in listing order; as
//	                        deadline, a close leaves its member to ListOpen,
//	                        OpenPage or purge
//	{ab:s0}:created         zset: question id by created ms
//	{ab:s0}:closed          zset: question id by closed ms, caught up by its
//	                        readers from the closes' marks (closed_catchup.lua)
//	{ab:s0}:closedcur       string: the id of the newest event the closed
//	                        index has been caught up to
//	{ab:s0}:layout          string: the layout the shard's records are in
//	                        (migrate.go); absent: 0 or 1, before it was kept
//	{ab:s0}:deadline        zset: question id by deadline ms; a close leaves
//	                        its member to Due (which skips and drops it) or purge
//	{ab:s0}:runq            zset (lex): "<run>\0<id>"; as deadline, a close
//	                        leaves its member to EndRun or purge
//	{ab:s0}:runs            hash: ended run -> ended ms
//	{ab:s0}:loose           zset: stream ids of events with no question, by ms
//	{ab:s0}:idem            hash: idempotency key -> id of the question asked with it
//	{ab:s0}:ap:<attempt>    string, 10 min TTL: an Append's mark (append.lua)
//	{ab:s0}:pg:<attempt>    string, 10 min TTL: a purge batch's mark, what
//	                        it dropped (purge.lua)
//	{ab:s0}:rn:<attempt>    string, 10 min TTL: a renotice's mark (renotify.lua)
//	{ab:s0}:cl:<attempt>    string, 10 min TTL: a claim's mark, what it handed
//	                        out (claim.lua)
//	{ab:s0}:out:<surface>   stream: the shard's outbox for a chat surface
//	{ab:s0}:later:<surface> zset: the outbox's retries, by the ms they fall due,
//	                        and its delayed deliveries ("h|<key>", pending.go)
//	{ab:s0}:held:<surface>  hash: a delayed delivery's key -> what goes on the stream
//	{ab:s0}:wake            pub/sub channel: ids of changed questions
//	{ab:s0}:beat            string: the bridge's heartbeat (shard 0 only)
//	{ab:s0}:v:<key>         string, TTL if set for a time: an adapter's shared value (shard 0 only)
//	{ab:s0}:l:<key>         string with TTL: an adapter's lease holder (shard 0 only)
//	{ab:s0}:o:<key>         string with TTL: a key seen once (shard 0 only)
//	{ab:s0}:standing        hash: standing approval id -> core.Standing JSON (shard 0 only)
//	{ab:s0}:endings         zset: run being ended -> ms its ending began (shard 0 only; endings.go)
//	rate:ab:budget:<key>    hash: a send budget (GCRA, kept by redis_rate,
//	                        which adds "rate:"; no hash tag, so budgets
//	                        spread over the cluster)
type keys struct {
	prefix string
}

func (k keys) tag(shard int) string {
	return "{" + k.prefix + ":s" + strconv.Itoa(shard) + "}"
}

// question, document and questionEvents take a valid id: its first
// character names its shard.
func (k keys) question(id core.QuestionID) string {
	return k.tag(core.ShardOf(id)) + ":q:" + string(id)
}

func (k keys) document(id core.QuestionID) string {
	return k.tag(core.ShardOf(id)) + ":d:" + string(id)
}

func (k keys) resolution(id core.QuestionID) string {
	return k.tag(core.ShardOf(id)) + ":r:" + string(id)
}

func (k keys) questionEvents(id core.QuestionID) string {
	return k.tag(core.ShardOf(id)) + ":qe:" + string(id)
}

func (k keys) events(shard int) string       { return k.tag(shard) + ":events" }
func (k keys) seq(shard int) string          { return k.tag(shard) + ":seq" }
func (k keys) open(shard int) string         { return k.tag(shard) + ":open" }
func (k keys) created(shard int) string      { return k.tag(shard) + ":created" }
func (k keys) closed(shard int) string       { return k.tag(shard) + ":closed" }
func (k keys) closedCursor(shard int) string { return k.tag(shard) + ":closedcur" }
func (k keys) layout(shard int) string       { return k.tag(shard) + ":layout" }
func (k keys) shardCount() string            { return k.tag(0) + ":shards" }

// appended is the mark an Append of attempt leaves, so that the same call
// sent again appends nothing (append.lua).
func (k keys) appended(shard int, attempt string) string { return k.tag(shard) + ":ap:" + attempt }
func (k keys) deadline(shard int) string                 { return k.tag(shard) + ":deadline" }
func (k keys) runOpen(shard int) string                  { return k.tag(shard) + ":runq" }
func (k keys) runs(shard int) string                     { return k.tag(shard) + ":runs" }
func (k keys) loose(shard int) string                    { return k.tag(shard) + ":loose" }
func (k keys) idempotency(shard int) string              { return k.tag(shard) + ":idem" }
func (k keys) wake(shard int) string                     { return k.tag(shard) + ":wake" }
func (k keys) beat() string                              { return k.tag(0) + ":beat" }
func (k keys) value(key string) string                   { return k.tag(0) + ":v:" + key }
func (k keys) lease(key string) string                   { return k.tag(0) + ":l:" + key }
func (k keys) once(key string) string                    { return k.tag(0) + ":o:" + key }
func (k keys) standing() string                          { return k.tag(0) + ":standing" }
func (k keys) endings() string                           { return k.tag(0) + ":endings" }
func (k keys) budget(key string) string                  { return k.prefix + ":budget:" + key }

func (k keys) outbox(shard int, s core.Surface) string {
	return k.tag(shard) + ":out:" + string(s)
}

func (k keys) later(shard int, s core.Surface) string {
	return k.tag(shard) + ":later:" + string(s)
}

func (k keys) held(shard int, s core.Surface) string {
	return k.tag(shard) + ":held:" + string(s)
}

// purged is the mark a purge batch's run leaves, so that the same call
// sent again reports what the first run dropped (purge.lua).
func (k keys) purged(shard int, attempt string) string { return k.tag(shard) + ":pg:" + attempt }

// renotified is the mark a renotice leaves, so that the same call sent
// again changes nothing (renotify.lua).
func (k keys) renotified(shard int, attempt string) string { return k.tag(shard) + ":rn:" + attempt }

// claimed is the mark a claim that handed out deliveries leaves, so that
// the same call sent again hands out the same ones (claim.lua).
func (k keys) claimed(shard int, attempt string) string { return k.tag(shard) + ":cl:" + attempt }

// outboxes are the shard's outbox streams in core.OutboxSurfaces order,
// the order surfaceList names them to the scripts.
func (k keys) outboxes(shard int) []string {
	out := make([]string, len(core.OutboxSurfaces))
	for i, s := range core.OutboxSurfaces {
		out[i] = k.outbox(shard, s)
	}
	return out
}

// shardKeys are the keys of one shard that the transitions use, spelled
// once per store rather than once per call.
type shardKeys struct {
	shard                                        int
	events, seq, open, deadline, runOpen, closed string
	wake                                         string
	outboxes                                     []string
	questionPrefix                               string // + id: keys.question
	documentPrefix                               string // + id: keys.document
	resolutionPrefix                             string // + id: keys.resolution
	// shardArg and surfacesArg are the scripts' ARGV[1] and ARGV[3] (see
	// common.lua; ARGV[2], the clock, is Store.clockArg's) and wakeArg the
	// wake-up channel they publish on ("" when durability is on: the store
	// publishes, Store.announce), boxed once; resolveKeys are resolve.lua's
	// KEYS[2..4] and boxes the shard's outbox streams, boxed once.
	shardArg    any
	surfacesArg any
	wakeArg     any
	resolveKeys [3]any
	boxes       []any
}

func (k keys) forShard(shard int) shardKeys {
	sk := shardKeys{
		shard: shard, events: k.events(shard), seq: k.seq(shard), open: k.open(shard),
		deadline: k.deadline(shard), runOpen: k.runOpen(shard), closed: k.closed(shard),
		wake: k.wake(shard), outboxes: k.outboxes(shard), questionPrefix: k.tag(shard) + ":q:",
		documentPrefix: k.tag(shard) + ":d:", resolutionPrefix: k.tag(shard) + ":r:",
		shardArg: shard, surfacesArg: surfaceList, wakeArg: k.wake(shard),
	}
	sk.resolveKeys = [3]any{sk.events, sk.seq, sk.closed}
	for _, box := range sk.outboxes {
		sk.boxes = append(sk.boxes, box)
	}
	return sk
}

// shardKeys returns shard's keys (a shard of this store: shardOf checked it).
func (s *Store) shardKeys(shard int) *shardKeys { return &s.sk[shard] }

// index is the time index of a shard.
func (k keys) index(shard int, idx core.TimeIndex) (string, bool) {
	switch idx {
	case core.ByCreated:
		return k.created(shard), true
	case core.ByClosed:
		return k.closed(shard), true
	}
	return "", false
}
