package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// healthEvery is how long the subscriber waits for a message before it
// pings its connection, and then for the pong before it subscribes anew,
// so a silently dead connection is noticed. A variable so the tests need
// not wait.
var healthEvery = 30 * time.Second

const (
	// retryPause spaces reconnection attempts after a subscriber error.
	retryPause = 200 * time.Millisecond
	// resubscribeWithin bounds making a new subscription.
	resubscribeWithin = 5 * time.Second
)

// Watch returns a channel that receives after any change to question id
// made by this or any other Store on the same Redis and prefix, and a
// function to stop watching. The channel holds one signal; a waiter that
// is slow to look sees one signal for several changes, never none. While
// id is watched, s.cache keeps what this Store learns of it (readCache).
func (s *Store) Watch(id core.QuestionID) (<-chan struct{}, func()) {
	return s.watchers.Chan(id)
}

// WatchFunc calls wake after any change to question id, as Watch signals
// its channel, with the watchers' lock held (core.Store.WatchFunc), until the
// function it returns is called.
func (s *Store) WatchFunc(id core.QuestionID, wake func()) func() {
	return s.watchers.Func(id, wake)
}

// wake signals every watcher of id after this Store changed it.
func (s *Store) wake(id core.QuestionID) {
	s.cache.wrote(id)
	s.signal(id)
}

// resolving is called before this Store runs the close script on id, and
// the function it returns after, with the question as the script left it
// (nil if that is unknown). Meanwhile the script's own wake-up, echoed
// back through pub/sub, is not passed on to local watchers (readCache's
// echo suppression); the returned function wakes them if signal is set.
func (s *Store) resolving(id core.QuestionID) (woken func(q *core.Question, signal bool)) {
	w := s.cache.beginWrite(id)
	return func(q *core.Question, signal bool) {
		s.cache.endWrite(w, q)
		if signal {
			s.signal(id)
		}
	}
}

// announce publishes the wake-up of a change of question id in shard,
// which the scripts leave to the store when durability is on (New): only
// now that the change's wait has held, so no other store's waiter reads a
// change its replicas may not hold. Without durability the script has
// published it, and this does nothing.
//
// Its failure is not the caller's: the change is recorded and held. A
// waiter elsewhere then learns of it at its next read; one whose
// subscription lost its connection too looks again anyway (listen).
func (s *Store) announce(ctx context.Context, shard int, id core.QuestionID) {
	if !s.durable() {
		return
	}
	_ = s.base().Publish(context.WithoutCancel(ctx), s.sk[shard].wake, string(id)).Err()
}

// wakeRemote signals id's watchers for a change published on Redis, by
// another replica or as this Store's own echo (see readCache.remote).
func (s *Store) wakeRemote(id core.QuestionID) {
	if s.cache.remote(id) {
		s.signal(id)
	}
}

// signal wakes id's watchers.
func (s *Store) signal(id core.QuestionID) { s.watchers.Signal(id) }

// wakeAll signals every watcher: after a reconnection wake-ups may have
// been lost, and a spurious wake-up only costs a read. No fresh copy can
// be trusted any more.
func (s *Store) wakeAll() {
	s.cache.lost()
	s.watchers.SignalAll()
}

// subscribe opens the Store's one subscription, to every shard's wake-up
// channel, waits for Redis to confirm each channel, and starts listen.
func (s *Store) subscribe(ctx context.Context) error {
	ps, err := s.openSubscription(ctx)
	if err != nil {
		return err
	}
	s.ps = ps
	go s.listen()
	return nil
}

// openSubscription subscribes to every shard's wake-up channel on a
// connection of its own and returns once Redis has confirmed each.
func (s *Store) openSubscription(ctx context.Context) (*goredis.PubSub, error) {
	chans := make([]string, s.shards)
	for i := range chans {
		chans[i] = s.k.wake(i)
	}
	ps := s.client.Subscribe(ctx, chans...)
	for range chans {
		v, err := ps.Receive(ctx)
		if err != nil {
			_ = ps.Close()
			return nil, fmt.Errorf("subscribe to wake-ups: %w", err)
		}
		if _, ok := v.(*goredis.Subscription); !ok {
			_ = ps.Close()
			return nil, fmt.Errorf("subscribe to wake-ups: unexpected %T before confirmation", v)
		}
	}
	return ps, nil
}

// resubscribe replaces a subscription whose connection stopped answering
// (a ping went unanswered for a whole interval): go-redis reconnects only
// a connection that fails a write, and a half-open one takes writes for as
// long as TCP keeps trying, while every wake-up is lost. The new
// subscription may have missed some too, so every watcher looks again.
// The Sentinels' word that the primary moved calls it too (sentinels.go).
// It reports whether it replaced the subscription, and whether listen
// should go on, with the new one or, if that could not be made, the old
// one; false once the Store is closing.
func (s *Store) resubscribe() (replaced, goOn bool) {
	ctx, cancel := context.WithTimeout(context.Background(), resubscribeWithin)
	defer cancel()
	ps, err := s.openSubscription(ctx)
	if err != nil {
		return false, true // try again after the next interval
	}
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		_ = ps.Close()
		return false, false
	default:
	}
	old := s.ps
	s.ps = ps
	s.mu.Unlock()
	_ = old.Close() // listen, reading it, moves on to ps
	s.resubscribed.Add(1)
	s.cache.trust()
	s.wakeAll()
	return true, true
}

// subscription is the Store's current subscription (resubscribe
// replaces it).
func (s *Store) subscription() *goredis.PubSub {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ps
}

// listen fans wake-ups out to watchers until Close. go-redis reconnects
// and resubscribes by itself after a connection error; the confirmations
// that follow a resubscription wake every watcher, since messages
// published meanwhile are lost.
func (s *Store) listen() {
	defer close(s.stopped)
	ctx := context.Background()
	pinged := false // a ping is out and nothing has come back since
	for {
		ps := s.subscription()
		v, err := ps.ReceiveTimeout(ctx, healthEvery)
		select {
		case <-s.done:
			return
		default:
		}
		if err != nil && s.subscription() != ps {
			// resubscribe replaced it, on another goroutine (sentinels.go),
			// and closed it: the new one is confirmed and every watcher
			// woken already.
			pinged = false
			continue
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if pinged {
					// Not even the pong came back: the connection may be
					// half-open, its wake-ups lost, so no fresh copy is kept
					// or trusted until something arrives again, and the
					// subscription is made anew.
					s.distrust()
					if _, goOn := s.resubscribe(); !goOn {
						return
					}
					pinged = false
					continue
				}
				_ = ps.Ping(ctx) // a failed ping marks the connection bad; the next receive reconnects
				pinged = true
				continue
			}
			s.distrust()
			t := time.NewTimer(retryPause)
			select {
			case <-s.done:
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		pinged = false
		s.cache.trust()
		switch m := v.(type) {
		case *goredis.Message:
			s.wakeRemote(core.QuestionID(m.Payload))
		case *goredis.Subscription:
			s.wakeAll()
		}
	}
}

// distrust is wakeAll for a subscription that may have lost wake-ups and
// may still be losing them: until a message or pong arrives again, no
// read becomes a fresh copy (readCache.distrust).
func (s *Store) distrust() {
	s.cache.distrust()
	s.wakeAll()
}
