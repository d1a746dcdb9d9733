package redis

import goredis "github.com/redis/go-redis/v9"

// directCalls is how many hot-path calls may be in flight at once on
// connections of their own (the client's pool holds ten per CPU) before
// further ones go through the autopipeliner.
//
// The autopipeliner keeps one ordered stream, one batch in flight at a
// time: a call handed to it waits for every batch before its own, and
// for three goroutine hand-offs (in, flush, reply) that a busy machine
// schedules late. With only the first call of a burst sent directly (as
// before), a team's burst of clicks or answers, a few calls in flight at
// any moment, went almost wholly through that one queue: on the loaded
// development machine the answers of BenchmarkConcurrentWake waited 22
// ms each on average in the autopipeliner (block profile) with Redis 7%
// busy, and the answers' p50 was two to three times that with the first
// eight calls sent directly (BENCHMARKS.md, issue 31). Past eight in
// flight the callers are many enough that batching them saves more
// than the queue costs, and the close's throughput at fifty callers
// (BenchmarkResolve) is no worse.
const directCalls = 8

// hotStart begins a hot-path call (a transition script, a question read)
// and returns the autopipeliner it is to go through, or nil for the
// client itself; hotEnd ends the call. The first directCalls calls in
// flight go straight through the client; calls made while that many are
// in flight go through the autopipeliner (see Store.ap), which batches
// them.
func (s *Store) hotStart() *goredis.AutoPipeliner {
	if s.ap == nil {
		return nil
	}
	// A closed autopipeliner (its client closed it) fails every command,
	// so the client, whose own error is then the true one, is used.
	if s.hot.Add(1) <= directCalls || s.ap.IsClosed() {
		return nil
	}
	return s.ap
}

// hotEnd ends a call hotStart began.
func (s *Store) hotEnd() {
	if s.ap != nil {
		s.hot.Add(-1)
	}
}
