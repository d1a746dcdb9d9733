package redis_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// The benchmarks in this file time delivery as a deployment sees it, on
// real Redis: several replicas (each its own store and Service on the
// same prefix) draining one outbox. They report their figures as custom
// metrics; run them once each:
//
//	go test ./store/redis -run '^$' -bench 'Delivery|Failover|Takeover' -benchtime 1x

// roomCourier is a platform reduced to the times of its posts, spending
// from a Telegram-like budget of one message a second into its one room.
type roomCourier struct {
	mu    sync.Mutex
	posts []time.Time
	want  int
	done  chan struct{}
}

func newRoomCourier(want int) *roomCourier {
	return &roomCourier{want: want, done: make(chan struct{})}
}

func (c *roomCourier) Surface() core.Surface { return core.SurfaceTelegram }

func (c *roomCourier) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.mu.Lock()
	c.posts = append(c.posts, time.Now())
	if len(c.posts) == c.want {
		close(c.done)
	}
	c.mu.Unlock()
	card.ID = "m-" + string(q.ID)
	return card, nil
}
func (c *roomCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (c *roomCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (c *roomCourier) Digest(context.Context, core.Digest, string) error             { return nil }
func (c *roomCourier) Budgets(core.Delivery) []core.Allowance {
	return []core.Allowance{{Key: "bench:room", Limit: core.Limit{Rate: 1, Per: time.Second}}}
}

// maxInAnySecond is the most posts in any one-second window.
func (c *roomCourier) maxInAnySecond() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	most := 0
	for i := range c.posts {
		n := 0
		for j := i; j < len(c.posts) && c.posts[j].Sub(c.posts[i]) < time.Second; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
}

// replicas opens n stores on one prefix with a Service each, as n
// replicas of one deployment.
func replicas(b *testing.B, n int) ([]*redisstore.Store, []*core.Service) {
	prefix := randomPrefix()
	var stores []*redisstore.Store
	var svcs []*core.Service
	for range n {
		st := newStoreOn(b, newClient(b), redisstore.Options{Prefix: prefix})
		stores = append(stores, st)
		svcs = append(svcs, coretest.Service(b, st, coretest.Options{Routes: map[string]core.Route{
			"room": {Rooms: []core.Room{{Surface: core.SurfaceTelegram, ID: "-1001"}}, Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}},
		}}))
	}
	return stores, svcs
}

func askInto(b *testing.B, svc *core.Service, n int) {
	for i := range n {
		if _, err := svc.Ask(context.Background(), core.AskInput{Kind: core.KindClarification, Agent: "bench", RunID: "r",
			ToolCallID: fmt.Sprintf("call-%d", i), Text: "Go?", Reversibility: core.Reversible, Route: "room"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeliveryOneRoom posts 8 cards into one room, whose budget is
// one a second, with 1 and with 3 replicas draining the outbox. The
// budget is shared, so three replicas send no faster into the room than
// one, and never more than one card in any second.
func BenchmarkDeliveryOneRoom(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			for range b.N {
				stores, svcs := replicas(b, n)
				const cards = 8
				askInto(b, svcs[0], cards)
				c := newRoomCourier(cards)
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				start := time.Now()
				for i, svc := range svcs {
					wg.Go(func() {
						loops.Deliver(ctx, svc, c, loops.DeliverOptions{Consumer: fmt.Sprintf("r%d", i), Block: 50 * time.Millisecond, Budget: stores[i]})
					})
				}
				<-c.done
				took := time.Since(start)
				cancel()
				wg.Wait()
				b.ReportMetric(took.Seconds(), "s/8-cards")
				b.ReportMetric(float64(c.maxInAnySecond()), "max-cards/s")
			}
		})
	}
}

// BenchmarkFailover times how long cards claimed by a replica wait before
// another replica posts them: after a crash (the claims are never handed
// back, so they wait for the idle limit, 10 s by default) and after a
// clean stop (they are handed back at once).
func BenchmarkFailover(b *testing.B) {
	for _, how := range []string{"kill", "sigterm"} {
		b.Run(how, func(b *testing.B) {
			for range b.N {
				stores, svcs := replicas(b, 2)
				const cards = 5
				askInto(b, svcs[0], cards)
				gone := time.Now()
				if how == "kill" {
					// The dying replica claims the cards and is never
					// heard from again.
					if ds, err := stores[0].Claim(context.Background(), core.SurfaceTelegram, "dead", cards, time.Hour, 0); err != nil || len(ds) != cards {
						b.Fatalf("claim: %d, %v", len(ds), err)
					}
					gone = time.Now()
				} else {
					// The stopping replica claims them, is stopped while
					// its first post is on its way, and hands back the rest.
					held := &holdingCourier{roomCourier: newRoomCourier(1), entered: make(chan struct{}, 1), release: make(chan struct{})}
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan struct{})
					go func() {
						loops.Deliver(ctx, svcs[0], held, loops.DeliverOptions{Consumer: "stopping", Block: 50 * time.Millisecond})
						close(done)
					}()
					<-held.entered
					cancel()
					gone = time.Now()
					close(held.release)
					<-done
				}
				heir := newRoomCourier(cards - map[string]int{"kill": 0, "sigterm": 1}[how])
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					loops.Deliver(ctx, svcs[1], heir, loops.DeliverOptions{Consumer: "heir", Block: 50 * time.Millisecond})
					close(done)
				}()
				<-heir.done
				b.ReportMetric(time.Since(gone).Seconds(), "s-to-all-posted")
				cancel()
				<-done
			}
		})
	}
}

// holdingCourier holds its first post until released.
type holdingCourier struct {
	*roomCourier
	once             sync.Once
	entered, release chan struct{}
}

func (c *holdingCourier) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.once.Do(func() { c.entered <- struct{}{}; <-c.release })
	return c.roomCourier.Post(ctx, q, card)
}

func (c *holdingCourier) Budgets(core.Delivery) []core.Allowance { return nil }

// BenchmarkTakeover times how long a single connection's lease (the
// Telegram poller, the Discord gateway) is without a holder: after the
// holder dies (it lapses, 4 s) and after a clean stop (released at once;
// the successor's next try, within 1 s, takes it).
func BenchmarkTakeover(b *testing.B) {
	for _, how := range []string{"kill", "sigterm"} {
		b.Run(how, func(b *testing.B) {
			for range b.N {
				stores, _ := replicas(b, 2)
				key := "bench:lease:" + randomPrefix()
				held := make(chan struct{})
				var once sync.Once
				ctx1, stop1 := context.WithCancel(context.Background())
				var kv1 loops.Leases = stores[0]
				if how == "kill" {
					kv1 = &silenced{Leases: stores[0]}
				}
				done1 := make(chan struct{})
				go func() {
					loops.Leader{Leases: kv1, Key: key, Owner: "one"}.Run(ctx1, func(ctx context.Context) { once.Do(func() { close(held) }); <-ctx.Done() })
					close(done1)
				}()
				<-held
				second := make(chan time.Time, 1)
				ctx2, stop2 := context.WithCancel(context.Background())
				done2 := make(chan struct{})
				asked := &askedLeases{Leases: stores[1], refused: make(chan struct{}, 1)}
				go func() {
					loops.Leader{Leases: asked, Key: key, Owner: "two"}.Run(ctx2, func(ctx context.Context) { second <- time.Now(); <-ctx.Done() })
					close(done2)
				}()
				<-asked.refused // the second is waiting for the lease
				gone := time.Now()
				if s, ok := kv1.(*silenced); ok {
					s.silence() // dead: no renewal, no release
				} else {
					stop1()
				}
				took := (<-second).Sub(gone)
				b.ReportMetric(took.Seconds(), "s-without-holder")
				stop1()
				stop2()
				<-done1
				<-done2
			}
		})
	}
}

// silenced is a replica's leases once it has died: nothing it asks
// reaches the store.
type silenced struct {
	loops.Leases
	mu   sync.Mutex
	dead bool
}

func (s *silenced) silence() { s.mu.Lock(); s.dead = true; s.mu.Unlock() }
func (s *silenced) off() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}
func (s *silenced) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if s.off() {
		return false, context.DeadlineExceeded
	}
	return s.Leases.Lease(ctx, key, owner, ttl)
}
func (s *silenced) Release(ctx context.Context, key, owner string) error {
	if s.off() {
		return context.DeadlineExceeded
	}
	return s.Leases.Release(ctx, key, owner)
}

// askedLeases tells, once, that a lease was refused: the replica is
// standing by.
type askedLeases struct {
	loops.Leases
	refused chan struct{}
}

func (a *askedLeases) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	ok, err := a.Leases.Lease(ctx, key, owner, ttl)
	if err == nil && !ok {
		select {
		case a.refused <- struct{}{}:
		default:
		}
	}
	return ok, err
}
