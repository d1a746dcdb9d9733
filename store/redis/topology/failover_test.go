package topology_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// longFailover runs the failovers under load at a size for measuring
// (BENCHMARKS.md): more workers and more answers on each side of the
// failover. CI runs them small.
var longFailover = flag.Bool("failover.long", false, "run the failovers under load at full size")

const operatorToken = "operator-token-0123456789"

// instance is one replica of the bridge: a store on a client of its own,
// core over it, and the HTTP API.
type instance struct {
	store core.Store
	svc   *core.Service
	url   string
	// fivehundreds counts its 5xx answers other than 503, and
	// unavailable its 503s (to asks, answers and waits alike).
	fivehundreds, unavailable *atomic.Int64
}

func startInstance(t *testing.T, d redisstore.Dial, o redisstore.Options, refused chan<- struct{}) *instance {
	t.Helper()
	st, err := redisstore.Connect(t.Context(), d, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// Every question's card goes to a Slack room, so the outbox is part
	// of what a failover must keep.
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{core.DefaultRoute: {
		Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
	}}})
	h, err := httpapi.New(svc, httpapi.Options{Tokens: []httpapi.Token{
		{Name: "agent-a", Secret: agentToken, Role: httpapi.RoleAgent},
		{Name: "ops", Secret: operatorToken, Role: httpapi.RoleOperator},
	}, Unavailable: redisstore.Unavailable})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{store: st, svc: svc, fivehundreds: &atomic.Int64{}, unavailable: &atomic.Int64{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &status{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.code >= 500 && rec.code != http.StatusServiceUnavailable {
			in.fivehundreds.Add(1)
		}
		if rec.code == http.StatusServiceUnavailable {
			in.unavailable.Add(1)
			select {
			case refused <- struct{}{}:
			default:
			}
		}
	}))
	t.Cleanup(srv.Close)
	in.url = srv.URL
	return in
}

// fault is what a failover run does to the servers: stall (optional) once
// `before` answers are acknowledged, then kill once `lagged` more have
// been answered, with a 2xx or a 503 (at once without a stall).
type fault struct {
	stall  func()
	lagged int
	kill   func()
	// settle waits until the servers agree again that all is well
	// (every node up, replicas linked): the checks made after the
	// failover call it when they meet a failover's error.
	settle func() error
}

// load is what a failover run found.
type load struct {
	acked   map[core.QuestionID]string // question id -> the answer a 2xx confirmed
	maybe   map[core.QuestionID]string // question id -> an answer refused with 503 (maybe recorded)
	asked   int
	refused int // 503s met by answers
	// unavailable counts every 503 the instances answered (an agent's
	// ask rides its own out inside the client).
	unavailable int64
	// lost are the acknowledged answers the store no longer has, or has
	// otherwise; twice are the questions that closed more than once.
	lost, twice int
	// lostAsks are asks acknowledged and gone by the time of their answer.
	lostAsks int
	// slowest is the longest an acknowledged ask or answer took, retries
	// included: what a caller waits through a failover.
	slowest time.Duration
}

// failoverUnderLoad runs asks and answers through three instances of the
// bridge, each with its own client, and calls kill once `before` answers
// have been acknowledged; it stops after `after` more. Every question has
// an agent's wait parked on another instance than the one it was asked
// on, and answered on the third. It then checks what the issue promises:
// every answer that got a 2xx is there, as it was acknowledged; no
// question closed twice or differently; every wait whose answer was
// acknowledged woke with it; no 500 on any instance.
// With lossy set, acknowledged answers that are gone are counted in the
// result rather than failed: for measuring the loss without durability.
func failoverUnderLoad(t *testing.T, d redisstore.Dial, o redisstore.Options, f fault, lossy bool) (out load) {
	workers, before, after := 4, 60, 60
	if *longFailover {
		workers, before, after = 16, 2000, 2000
	}
	var ins []*instance
	refusedAny := make(chan struct{}, 1<<16) // every 503 of every instance
	for range 3 {
		ins = append(ins, startInstance(t, d, o, refusedAny))
	}
	defer func() {
		for _, in := range ins {
			out.unavailable += in.unavailable.Load()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var (
		mu      sync.Mutex
		res     = load{acked: map[core.QuestionID]string{}, maybe: map[core.QuestionID]string{}}
		killed  time.Time
		stalled int  // answered (2xx or 503) at the stall, -1 before it
		after0  int  // acknowledged once the kill is done
		settled bool // the kill (or failover by hand) is done
		stop    = make(chan struct{})
		stopped sync.Once
		waits   sync.WaitGroup
		waitErr = map[core.QuestionID]error{}
		waitGot = map[core.QuestionID]core.State{}
		n       atomic.Int64
		woke    = make(chan struct{}, 1<<16)
	)
	killAt, stallAt := make(chan struct{}), make(chan struct{})
	var killOnce, stallOnce sync.Once
	stalled = -1
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := int(n.Add(1))
				on := ins[k%3]
				agent := client.New(on.url, agentToken)
				q, err := agent.Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
					Reversibility: core.HardToReverse, RunID: "run-failover", ToolCallID: fmt.Sprintf("w%d-%d", w, i)})
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("ask rode out nothing: %v", err)
					}
					return
				}
				asked := time.Now()
				mu.Lock()
				res.asked++
				mu.Unlock()
				waits.Go(func() {
					r, err := client.New(ins[(k+1)%3].url, agentToken).Wait(ctx, q.ID)
					mu.Lock()
					if err != nil {
						waitErr[q.ID] = err
					} else {
						waitGot[q.ID] = r.State
					}
					mu.Unlock()
					woke <- struct{}{}
				})
				text := "eu-west-" + string(q.ID)
				_, err = client.New(ins[(k+2)%3].url, operatorToken).Answer(ctx, q.ID, client.AnswerRequest{Answer: text})
				var e *client.Error
				mu.Lock()
				switch {
				case err == nil:
					res.acked[q.ID] = text
					res.slowest = max(res.slowest, time.Since(asked))
				case errors.As(err, &e) && e.Unavailable():
					res.maybe[q.ID] = text
					res.refused++
				case lossy && errors.As(err, &e) && e.Status == http.StatusNotFound:
					res.lostAsks++ // acknowledged, and gone since
				default:
					if ctx.Err() == nil {
						t.Errorf("answer %s: %v", q.ID, err)
					}
				}
				acked, done := len(res.acked), len(res.acked)+res.refused
				if acked >= before && f.stall != nil {
					stallOnce.Do(func() { stalled = done; close(stallAt) })
				}
				if killed.IsZero() && acked >= before && (f.stall == nil || stalled >= 0 && done >= stalled+f.lagged) {
					killOnce.Do(func() { close(killAt) })
				}
				if settled && acked >= after0+after {
					stopped.Do(func() { close(stop) })
				}
				mu.Unlock()
			}
		})
	}
	if f.stall != nil {
		select {
		case <-stallAt:
		case <-ctx.Done():
			t.Fatal("the load never reached the stall")
		}
		for len(refusedAny) > 0 {
			<-refusedAny
		}
		f.stall()
	}
	// The kill comes once enough answers are done after the stall, or
	// enough requests of any kind were refused (an agent's ask rides
	// out its 503s inside the client, and answers nothing meanwhile).
	for n := 0; ; {
		select {
		case <-killAt:
		case <-refusedAny:
			if n++; f.stall == nil || n < f.lagged {
				continue
			}
		case <-ctx.Done():
			t.Fatal("the load never reached the kill")
		}
		break
	}
	mu.Lock()
	killed = time.Now()
	mu.Unlock()
	f.kill() // a failover by hand returns once it is done, the load going on meanwhile

	mu.Lock()
	after0, settled = len(res.acked), true
	mu.Unlock()
	wg.Wait()
	if t.Failed() {
		return res
	}

	// retried runs one of the checks below, and runs it again once the
	// servers have settled if it meets a failover's error. On a loaded
	// machine a node slow to answer its peers for the node timeout is
	// marked failed, and the cluster answers CLUSTERDOWN until it is
	// back: the servers' doing after the failover, not the store's. The
	// checks are of what the store holds once the servers are up.
	retried := func(op func() error) error {
		err := op()
		for range 3 {
			if err == nil || !redisstore.Unavailable(err) || f.settle == nil {
				return err
			}
			if serr := f.settle(); serr != nil {
				return fmt.Errorf("%w; the servers did not settle: %v", err, serr)
			}
			err = op()
		}
		return err
	}
	// Every acknowledged answer is there, once, as it was acknowledged.
	for id, text := range res.acked {
		var got *core.Question
		err := retried(func() (err error) { got, err = ins[0].svc.Get(ctx, id); return err })
		if err != nil || got.State != core.StateAnswered || got.Resolution.Answer != text {
			res.lost++
			if !lossy {
				t.Errorf("acknowledged %s = %q, but the store has %v %+v", id, text, err, got)
			}
		}
	}
	// The maybe-recorded ones are answered as sent, or still open.
	for id, text := range res.maybe {
		var got *core.Question
		err := retried(func() (err error) { got, err = ins[0].svc.Get(ctx, id); return err })
		if err != nil || (got.State != core.StateOpen && (got.State != core.StateAnswered || got.Resolution.Answer != text)) {
			t.Errorf("a 503 for %s = %q, and the store has %v %+v", id, text, err, got)
		}
	}
	closes := map[core.QuestionID]int{}
	var events []core.Event
	err := retried(func() (err error) { events, err = ins[0].store.Events(ctx, 0, 1_000_000); return err })
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == core.EventAnswered {
			closes[e.QuestionID]++
		}
	}
	for id, c := range closes {
		if c > 1 {
			res.twice++
			t.Errorf("%s closed %d times", id, c)
		}
	}
	for id := range res.acked {
		if closes[id] != 1 && !lossy {
			t.Errorf("acknowledged %s has %d answered events", id, closes[id])
		}
	}
	if lossy {
		// A lost answer's question is open again, and its wait never
		// wakes: the waits are not what is measured here.
		cancel()
		waits.Wait()
		t.Logf("asked %d (acknowledged and lost %d); answers acknowledged %d, refused with 503 %d; acknowledged and lost %d; slowest acknowledged call %s",
			res.asked, res.lostAsks, len(res.acked), res.refused, res.lost, res.slowest.Round(time.Millisecond))
		return res
	}
	// The waits on acknowledged answers all wake; the rest are let go.
	pending := func() int {
		mu.Lock()
		defer mu.Unlock()
		left := 0
		for id := range res.acked {
			_, ok := waitGot[id]
			_, failed := waitErr[id]
			if !ok && !failed {
				left++
			}
		}
		return left
	}
	for pending() > 0 {
		select {
		case <-woke:
		case <-ctx.Done():
			t.Errorf("%d waits on acknowledged answers never woke", pending())
		}
		if ctx.Err() != nil {
			break
		}
	}
	cancel()
	waits.Wait()
	for id := range res.acked {
		if st, ok := waitGot[id]; !ok || st != core.StateAnswered {
			t.Errorf("the wait on acknowledged %s: %v %v", id, st, waitErr[id])
		}
	}
	// The outbox goes on: every acknowledged question's card is there to
	// be claimed, from any instance, after the failover; and a lease is
	// taken.
	carded := map[core.QuestionID]bool{}
	for i := 0; ; i++ {
		var ds []core.Delivery
		err := retried(func() (err error) {
			ds, err = ins[i%3].store.Claim(t.Context(), core.SurfaceSlack, fmt.Sprintf("courier-%d", i%3), 500, time.Hour, 0)
			return err
		})
		if err != nil {
			t.Fatalf("claim after the failover: %v", err)
		}
		if len(ds) == 0 {
			break
		}
		for _, d := range ds {
			carded[d.QuestionID] = true
			if err := retried(func() error { return ins[i%3].store.Ack(t.Context(), core.SurfaceSlack, d.ID) }); err != nil {
				t.Fatalf("ack after the failover: %v", err)
			}
		}
	}
	for id := range res.acked {
		if !carded[id] {
			t.Errorf("acknowledged %s has no card in the outbox", id)
		}
	}
	var ok bool
	err = retried(func() (err error) {
		ok, err = ins[1].store.Lease(t.Context(), "failover-check", "instance-1", time.Minute)
		return err
	})
	if err != nil || !ok {
		t.Errorf("a lease after the failover: %v %v", ok, err)
	}
	for i, in := range ins {
		if n := in.fivehundreds.Load(); n > 0 {
			t.Errorf("instance %d answered %d 5xx other than 503", i, n)
		}
	}
	t.Logf("asked %d; answers acknowledged %d, refused with 503 %d; acknowledged and lost %d; slowest acknowledged call %s",
		res.asked, len(res.acked), res.refused, res.lost, res.slowest.Round(time.Millisecond))
	return res
}
