package benchstore

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/procmem"
)

// AskDecision asks, through svc, a two-option decision on route, as the
// click benchmarks answer it by its first option, and returns its id.
func AskDecision(b *testing.B, svc *core.Service, route string) core.QuestionID {
	b.Helper()
	q, err := svc.Ask(context.Background(), core.AskInput{Agent: "agent", RunID: "run-1", Route: route, Kind: core.KindDecision,
		Reversibility: core.Reversible, Text: "Which database?", Options: []core.Option{
			{ID: "pg", Title: "PostgreSQL", Writeup: "Known.", Recommended: true},
			{ID: "ddb", Title: "DynamoDB", Writeup: "Scales."}}})
	if err != nil {
		b.Fatal(err)
	}
	return q.ID
}

// Burst calls send(0) to send(n-1), one every span/n, each on a goroutine
// of its own, so the n calls spread evenly over span whatever each takes;
// it returns, once all have returned, how long each took.
func Burst(n int, span time.Duration, send func(i int)) []time.Duration {
	took := make([]time.Duration, n)
	var wg sync.WaitGroup
	pace := time.NewTicker(span / time.Duration(n))
	defer pace.Stop()
	for i := range n {
		if i > 0 {
			<-pace.C
		}
		wg.Go(func() {
			t := time.Now()
			send(i)
			took[i] = time.Since(t)
		})
	}
	wg.Wait()
	return took
}

// Millis is the p-th quantile (0 to 1) of sorted, in milliseconds.
func Millis(sorted []time.Duration, p float64) float64 {
	return float64(sorted[int(p*float64(len(sorted)-1))]) / 1e6
}

// The click bursts as a team has them (issue 31): BurstClicks clicks in
// BurstSpan from BurstPeople people, each on a connection of their own,
// on questions spread over the rooms BurstRooms names.
const (
	BurstClicks = 1000
	BurstSpan   = time.Second
	BurstPeople = 50
)

// BurstRooms is how many rooms (one route each) the click bursts spread
// their questions over, one sub-benchmark each: ASKBRIDGE_BENCH_ROOMS, a
// comma-separated list, default "50,1". With 50, every card is posted
// through the outbox at the platform's pace per room, as serve does it,
// before the clicks; with 1 (the earlier set-up, kept as the yardstick) a
// room's budget would take 1,000 s to post the cards, so they are posted
// as fast as the fake takes them.
func BurstRooms(b *testing.B) []int {
	env := os.Getenv("ASKBRIDGE_BENCH_ROOMS")
	if env == "" {
		return []int{50, 1}
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("ASKBRIDGE_BENCH_ROOMS=%q: want positive room counts, comma-separated", env)
		}
		out = append(out, n)
	}
	return out
}

// EachRooms runs run as one sub-benchmark per room count of BurstRooms,
// "rooms=N".
func EachRooms(b *testing.B, run func(b *testing.B, rooms int)) {
	for _, n := range BurstRooms(b) {
		b.Run(fmt.Sprintf("rooms=%d", n), func(b *testing.B) { run(b, n) })
	}
}

// People are the people of a burst, each with an HTTP client that keeps
// one connection of its own, as each person's Slack or Discord click
// reaches the bridge on its own.
type People []*http.Client

// NewPeople returns n people; Close ends their connections.
func NewPeople(n int) People {
	p := make(People, n)
	for i := range p {
		p[i] = &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}}
	}
	return p
}

// Close ends every person's connection.
func (p People) Close() {
	for _, c := range p {
		c.CloseIdleConnections()
	}
}

// Clicks sends n clicks, one every span/n, click i by person i mod
// len(p): send sends it with the client and ctx it is given and returns
// once the whole response is read. Each click is timed from its first
// byte out (its request has its person's connection: a person's click
// that comes while their previous one is unanswered waits for it, as
// their browser's would, and that wait is not the bridge's) until send
// returns.
func (p People) Clicks(n int, span time.Duration, send func(ctx context.Context, c *http.Client, i int)) []time.Duration {
	took := make([]time.Duration, n)
	Burst(n, span, func(i int) {
		var start time.Time
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { start = time.Now() },
		})
		send(ctx, p[i%len(p)], i)
		took[i] = time.Since(start)
	})
	return took
}

// CPU measures the CPU that this process (the bridge, with the fake
// platform and the clickers beside it, or only the clients where the
// bridge runs apart), the redis-server behind e (if any) and the other
// processes named use between Start and Report. With ProfileDir set it
// also profiles this process meanwhile (see Profile).
type CPU struct {
	e            Env
	wall         time.Time
	self, server time.Duration
	others       []other
	prof         *Profile
}

// other is another process and its CPU at the start.
type other struct {
	Process
	before time.Duration
}

// Process is another process whose CPU a benchmark reports, as
// "cpu-<Name>-%", and its anonymous resident memory at the end, as
// "rss-<Name>-MB" (the heap and stacks, which the collector's pace sets).
type Process struct {
	Name string
	PID  int
}

// StartCPU starts measuring.
func StartCPU(b *testing.B, e Env, others ...Process) *CPU {
	c := &CPU{e: e, prof: startProfile(b)}
	for _, p := range others {
		c.others = append(c.others, other{p, procmem.CPUOf(p.PID)})
	}
	c.wall, c.self, c.server = time.Now(), procmem.CPU(), serverCPU(b, e)
	return c
}

// Report reports the CPU used since StartCPU as a share of one core:
// "cpu-self-%", "cpu-<name>-%" for each other process and, on Redis,
// "cpu-redis-%".
func (c *CPU) Report(b *testing.B) {
	wall := time.Since(c.wall)
	if err := c.prof.Stop(); err != nil {
		b.Fatal(err)
	}
	share := func(d time.Duration) float64 { return 100 * float64(d) / float64(wall) }
	b.ReportMetric(share(procmem.CPU()-c.self), "cpu-self-%")
	for _, p := range c.others {
		b.ReportMetric(share(procmem.CPUOf(p.PID)-p.before), "cpu-"+p.Name+"-%")
		anon, _ := procmem.ResidentOf(p.PID)
		b.ReportMetric(float64(anon)/(1<<20), "rss-"+p.Name+"-MB")
	}
	if c.e.Redis != nil {
		b.ReportMetric(share(serverCPU(b, c.e)-c.server), "cpu-redis-%")
	}
}

// serverCPU is the CPU time the redis-server has used (INFO cpu), 0 for
// the embedded store.
func serverCPU(b *testing.B, e Env) time.Duration {
	if e.Redis == nil {
		return 0
	}
	d, err := e.Redis.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// ReportAcks reports the acks' 50th and 99th percentiles and the worst,
// in milliseconds, and how many took longer than Slack's and Discord's
// three seconds.
func ReportAcks(b *testing.B, acks []time.Duration) {
	slices.Sort(acks)
	b.ReportMetric(Millis(acks, 0.50), "ack-p50-ms")
	b.ReportMetric(Millis(acks, 0.99), "ack-p99-ms")
	b.ReportMetric(Millis(acks, 1), "ack-max-ms")
	late := 0
	for _, d := range acks {
		if d > 3*time.Second {
			late++
		}
	}
	b.ReportMetric(float64(late), "acks-over-3s")
}

// WaitForCards waits until every question of ids has its card on surface
// recorded and the surface's outbox has nothing left to send, and returns
// each question's card.
func WaitForCards(b *testing.B, svc *core.Service, st core.Store, surface core.Surface, ids []core.QuestionID) []core.MessageRef {
	b.Helper()
	ctx := context.Background()
	cards := make([]core.MessageRef, len(ids))
	done := 0
	deadline := time.Now().Add(10 * time.Minute)
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for {
		for ; done < len(ids); done++ {
			q, err := svc.Get(ctx, ids[done])
			if err != nil {
				b.Fatal(err)
			}
			i := slices.IndexFunc(q.Messages, func(m core.MessageRef) bool { return m.Surface == surface })
			if i < 0 {
				break
			}
			cards[done] = q.Messages[i]
		}
		if done == len(ids) {
			s, err := st.(core.OutboxStats).OutboxStat(ctx, surface)
			if err != nil {
				b.Fatal(err)
			}
			if s.Depth == 0 {
				return cards
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d cards posted after 10 minutes", done, len(ids))
		}
		<-poll.C
	}
}

// EachClosedOnce fails b unless every question of ids is answered, with
// one answered event.
func EachClosedOnce(b *testing.B, svc *core.Service, ids []core.QuestionID) {
	b.Helper()
	ctx := context.Background()
	for _, id := range ids {
		q, err := svc.Get(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		evs, err := svc.QuestionEvents(ctx, id, 0)
		if err != nil {
			b.Fatal(err)
		}
		closes := 0
		for _, ev := range evs {
			if ev.Kind == core.EventAnswered {
				closes++
			}
		}
		if q.State != core.StateAnswered || closes != 1 {
			b.Fatalf("question %s: %s with %d answered events", id, q.State, closes)
		}
	}
}
