package redis

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// What a Sentinel says when a primary moved. switchMaster's payload is
// "<name> <old ip> <old port> <new ip> <new port>"; every Sentinel says
// it once it has the new primary, but the one that led the failover only
// once the other replicas follow the new primary, which may take a second
// or more after it was promoted and named to clients. That one says
// reconfReplicas ("master <name> <old ip> <old port>") as it starts on
// them, when it names the promoted replica already (and has it tell the
// other Sentinels).
const (
	switchMaster   = "+switch-master"
	reconfReplicas = "+failover-state-reconf-slaves"
)

// sentinelWatch follows the Sentinels' word that the primary moved
// (switchMaster, reconfReplicas) for a Store that Connect opened on
// Sentinel.
//
// go-redis, told of a new primary, closes its pools' connections to the
// old one, but not a subscription's: the Store's wake-ups would go on
// being awaited on the demoted primary while every change is published on
// the new one, so waiters elsewhere sleep through answers until Sentinel
// makes the old primary a replica (some 8 to 10 s after a SENTINEL
// FAILOVER), or for as long as a partition leaves it a primary. On the
// word, the Store subscribes anew (resubscribe), on the new primary, and
// every watcher looks again.
type sentinelWatch struct {
	opts   *goredis.FailoverOptions
	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when follow has returned

	mu sync.Mutex
	c  *goredis.SentinelClient // the Sentinel followed now, if any
	ps *goredis.PubSub         // and the subscription on it
}

// watchSentinels starts following the Sentinels named in o.
func (s *Store) watchSentinels(o *goredis.FailoverOptions) {
	w := &sentinelWatch{opts: o, done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	s.sentinels = w
	go w.follow(s)
}

// stop ends the watch and waits for it.
func (w *sentinelWatch) stop() {
	w.cancel()
	w.drop() // ends a receive under way
	<-w.done
}

// drop closes the Sentinel's subscription and client, if any.
func (w *sentinelWatch) drop() {
	w.mu.Lock()
	c, ps := w.c, w.ps
	w.c, w.ps = nil, nil
	w.mu.Unlock()
	if ps != nil {
		_ = ps.Close()
		_ = c.Close()
	}
}

// follow listens to one Sentinel at a time, the next in turn when one
// stops answering, until stop. A Sentinel followed after another was lost
// may have announced a move meanwhile, so the Store subscribes anew then
// too: a needless resubscription costs every watcher one read.
func (w *sentinelWatch) follow(s *Store) {
	defer close(w.done)
	addrs := w.opts.SentinelAddrs
	if len(addrs) == 0 {
		return
	}
	lost := false
	for i := 0; w.ctx.Err() == nil; i = (i + 1) % len(addrs) {
		ps, err := w.subscribe(addrs[i])
		if err != nil {
			lost = true
			w.pause()
			continue
		}
		if lost && !w.switched(s) {
			return
		}
		lost = true
		if !w.listen(s, ps) {
			return
		}
		w.pause()
	}
}

// subscribe subscribes to switchMaster and reconfReplicas on the
// Sentinel at addr and returns once it has confirmed both.
func (w *sentinelWatch) subscribe(addr string) (*goredis.PubSub, error) {
	c := w.client(addr)
	ctx, cancel := context.WithTimeout(w.ctx, resubscribeWithin)
	defer cancel()
	ps := c.Subscribe(ctx, switchMaster, reconfReplicas)
	w.mu.Lock()
	w.c, w.ps = c, ps // for stop to close, should it come now
	w.mu.Unlock()
	if w.ctx.Err() != nil { // stop came before, and found nothing to close
		w.drop()
		return nil, w.ctx.Err()
	}
	for range 2 { // each channel's confirmation
		if _, err := ps.ReceiveTimeout(ctx, resubscribeWithin); err != nil {
			w.drop()
			return nil, err
		}
	}
	return ps, nil
}

// client is a client of the Sentinel at addr, as go-redis makes its own.
func (w *sentinelWatch) client(addr string) *goredis.SentinelClient {
	o := w.opts
	return goredis.NewSentinelClient(&goredis.Options{
		Addr: addr, ClientName: o.ClientName, Dialer: o.Dialer,
		Username: o.SentinelUsername, Password: o.SentinelPassword, TLSConfig: o.TLSConfig,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		PoolSize: 1, MaxRetries: -1,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// listen reads the Sentinel's announcements until its connection fails or
// stops answering (a ping unanswered for a whole interval, as the Store's
// own listen does), and reports whether to go on: false once stopped.
func (w *sentinelWatch) listen(s *Store, ps *goredis.PubSub) bool {
	defer w.drop()
	pinged := false
	for {
		v, err := ps.ReceiveTimeout(w.ctx, healthEvery)
		if w.ctx.Err() != nil {
			return false
		}
		var ne net.Error
		switch {
		case err != nil && errors.As(err, &ne) && ne.Timeout() && !pinged:
			_ = ps.Ping(w.ctx)
			pinged = true
			continue
		case err != nil:
			return true // the next Sentinel
		}
		pinged = false
		if m, ok := v.(*goredis.Message); ok {
			if old, ok := w.moved(m); ok {
				w.agree(old)
				if !w.switched(s) {
					return false
				}
			}
		}
	}
}

// moved reports whether m says that the Store's primary moved, and from
// which address.
func (w *sentinelWatch) moved(m *goredis.Message) (old string, ok bool) {
	f := strings.Fields(m.Payload)
	if m.Channel == reconfReplicas && len(f) == 4 && f[0] == "master" {
		f = f[1:]
	}
	if len(f) < 3 || f[0] != w.opts.MasterName {
		return "", false
	}
	return net.JoinHostPort(f[1], f[2]), true
}

// agree waits, for resubscribeWithin at most, until no Sentinel that
// answers names old as the primary any more. The Sentinel that led the
// failover names the new one first, the others a moment later, and the
// client asks one of them where to subscribe: the one it asks must know.
func (w *sentinelWatch) agree(old string) {
	ctx, cancel := context.WithTimeout(w.ctx, resubscribeWithin)
	defer cancel()
	var cs []*goredis.SentinelClient
	for _, addr := range w.opts.SentinelAddrs {
		c := w.client(addr)
		defer c.Close()
		cs = append(cs, c)
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		agreed := true
		for _, c := range cs {
			a, err := c.GetMasterAddrByName(ctx, w.opts.MasterName).Result()
			if err == nil && len(a) == 2 && net.JoinHostPort(a[0], a[1]) == old {
				agreed = false
				break
			}
		}
		if agreed {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// switched has the Store subscribe anew, trying again until it has or the
// watch stops, and reports whether to go on.
func (w *sentinelWatch) switched(s *Store) bool {
	for {
		replaced, goOn := s.resubscribe()
		if !goOn || w.ctx.Err() != nil {
			return false
		}
		if replaced {
			return true
		}
		w.pause()
	}
}

// pause waits retryPause, or less if the watch stops.
func (w *sentinelWatch) pause() {
	t := time.NewTimer(retryPause)
	defer t.Stop()
	select {
	case <-w.ctx.Done():
	case <-t.C:
	}
}
