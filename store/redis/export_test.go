package redis

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// SetScriptHook lets the black-box tests see the keys of every script
// call (to check that each stays in one cluster slot). It returns the
// hook it replaces. Set it only while no store is in use.
func SetScriptHook(f func(name string, keys []string)) (prev func(name string, keys []string)) {
	prev, scriptHook = scriptHook, f
	return prev
}

// Slot is the Redis Cluster hash slot of a key.
func Slot(key string) int { return slot(key) }

// Stopped is closed once the store's subscriber goroutine has returned.
func Stopped(s *Store) <-chan struct{} { return s.stopped }

// SetStaleConsumer sets how long an empty consumer may idle before a new
// store removes it, and returns the old value.
func SetStaleConsumer(d time.Duration) time.Duration {
	prev := staleConsumer
	staleConsumer = d
	return prev
}

// Keys names some of a store's keys, for tests that write records in an
// earlier layout by hand.
func Keys(s *Store, id core.QuestionID) (question, legacyEvents, events, seq, open, created, deadline, runOpen string) {
	sh := s.sk[0]
	return s.k.question(id), s.k.questionEvents(id), sh.events, sh.seq, sh.open, s.k.created(0), sh.deadline, sh.runOpen
}

// OpenMember is the open-index member of q.
func OpenMember(q *core.Question) string { return openMember(q) }

// KeepFresh makes q s's fresh copy of q.ID, as a read of it would have
// left it before a change made elsewhere whose wake-up is still on its
// way. The question must be watched.
func KeepFresh(s *Store, q *core.Question) {
	s.cache.readEnds(q.ID, s.cache.readStarts(q.ID), q)
}

// SetHealthEvery sets how long the subscriber waits before it pings, and
// then for the pong, and returns the old value. Set it only while no
// store is open.
func SetHealthEvery(d time.Duration) time.Duration {
	prev := healthEvery
	healthEvery = d
	return prev
}

// Resubscriptions is how many times s replaced a subscription that
// stopped answering.
func Resubscriptions(s *Store) int64 { return s.resubscribed.Load() }

// ResolveHash is the SHA1 of the resolve script, as EVALSHA names it.
func ResolveHash() string { return resolveScript.Hash() }

// CreateHash is the SHA1 of the create script.
func CreateHash() string { return createScript.Hash() }

// RenotifyHash is the SHA1 of the renotify script.
func RenotifyHash() string { return renotifyScript.Hash() }

// LaterHash is the SHA1 of the script that enqueues delayed deliveries.
func LaterHash() string { return laterScript.Hash() }

// Resolve applies t to the question as stored, as the chokepoint would
// (core.Apply: Next, then Commit, again if it went stale), for the
// black-box tests that drive the store with transitions of their own.
func (s *Store) Resolve(ctx context.Context, t core.Transition) (*core.Question, error) {
	return core.Apply(ctx, s, t)
}

// DirectCalls is how many hot-path calls in flight go around the
// autopipeliner.
const DirectCalls = directCalls

// LayoutKeys names, per shard of s, the key that holds the layout its
// records are in; deleting them makes the next store opened on the same
// prefix migrate again, as one of a version before the layout was kept.
func LayoutKeys(s *Store) []string {
	out := make([]string, s.shards)
	for shard := range out {
		out[shard] = s.k.layout(shard)
	}
	return out
}

// Prefix is the key prefix s was opened with.
func Prefix(s *Store) string { return s.k.prefix }

// DocumentKeys names question id's document and resolution keys.
func DocumentKeys(s *Store, id core.QuestionID) (document, resolution string) {
	return s.k.document(id), s.k.resolution(id)
}

// LayoutVersion is the layout of the records this version writes.
const LayoutVersion = layoutVersion

// SeqKey is the key of a shard's event counter ("<n> <hash>").
func SeqKey(s *Store, shard int) string { return s.k.seq(shard) }

// ClosedKey is the key of a shard's closed index.
func ClosedKey(s *Store, shard int) string { return s.k.closed(shard) }

// CommitUnchecked sends c to resolve.lua as Commit would, without
// Commit's own checks, and with the digest of event bad (from 0) of the
// call emptied: what the script itself does with an event it cannot
// append.
func CommitUnchecked(ctx context.Context, s *Store, c core.Change, bad int) error {
	shard, _ := s.shardOf(c.Question.ID)
	cmd, err := s.commitCmd(c, shard)
	if err != nil {
		return err
	}
	// ARGV starts after the command, the script, the key count and the
	// keys; ARGV[12] is the count of field pairs, then the count of
	// events, then three arguments per event, its digest first.
	argv := 3 + cmd[2].(int)
	nf := cmd[argv+11].(int)
	ne := argv + 12 + 2*nf
	cmd[ne+1+3*bad] = ""
	_, err = s.runArgs(ctx, resolveScript, cmd)
	return err
}

// ReadOne reads question id with the read script, as a read does while
// the autopipeliner is in use (nil if it is gone).
func ReadOne(ctx context.Context, s *Store, id core.QuestionID) ([]*core.Question, error) {
	return s.loadOne(ctx, nil, id)
}

// ClaimHash is the SHA1 of the claim script.
func ClaimHash() string { return claimScript.Hash() }
