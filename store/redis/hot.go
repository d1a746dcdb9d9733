package redis

import goredis "github.com/redis/go-redis/v9"

// hotStart begins a hot-path call (a transition script, a question read)
// and returns the autopipeliner it is to go through, or nil for the
// client itself; hotEnd ends the call. A call that is the only one in
// flight goes straight through the client: with no company there is
// nothing to batch, and handing a lone command to the autopipeliner's
// goroutines and back would cost it about half a round trip more
// (BENCHMARKS.md). Calls made while another is in flight go through the
// autopipeliner (see Store.ap), which batches them.
func (s *Store) hotStart() *goredis.AutoPipeliner {
	if s.ap == nil {
		return nil
	}
	// A closed autopipeliner (its client closed it) fails every command,
	// so the client, whose own error is then the true one, is used.
	if s.hot.Add(1) == 1 || s.ap.IsClosed() {
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
