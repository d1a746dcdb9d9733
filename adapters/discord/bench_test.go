package discord_test

// The click-burst benchmark. It runs only with -bench (never in plain
// `go test`); see BENCHMARKS.md for the command.

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/benchstore"
	"github.com/askbridge/askbridge/internal/coretest"
)

// benchClicks signed clicks, one per open question's card, are sent
// evenly within benchSpan: 200, or ASKBRIDGE_BENCH_CLICKS (posting the
// cards first takes a second per 45 at the courier's pace).
var benchClicks = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASKBRIDGE_BENCH_CLICKS")); err == nil && n > 0 {
		return n
	}
	return 200
}()

const (
	benchSpan = time.Second
	benchRoom = "345626669114982402"
)

var benchUser = discordfake.User{ID: "111111111111111111", Name: "Alice"}

// BenchmarkClickBurst posts benchClicks cards through the outbox, then
// sends a signed click on each card to the HTTP interactions endpoint,
// evenly within benchSpan, and waits until the outbox has drained. It
// reports how many REST edits (PATCH) the clicked cards got after their
// interaction responses had already updated them in place (redundant
// edits: one edit per close per card is the goal), how long the outbox
// took to drain after the last click was answered, and the clicks'
// acknowledgement times, per store: the embedded store with fsync and
// Redis.
func BenchmarkClickBurst(b *testing.B) { benchstore.Each(b, benchClickBurst) }

func benchClickBurst(b *testing.B, st core.Store) {
	ctx := context.Background()
	svc := coretest.Service(b, st, coretest.Options{Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceDiscord, ID: benchRoom}},
			Deciders: map[core.Surface][]string{core.SurfaceDiscord: {benchUser.ID}}},
	}})
	fake := discordfake.New()
	defer fake.Close()
	key, err := hex.DecodeString(fake.PublicKey())
	if err != nil {
		b.Fatal(err)
	}
	a, err := discord.New(svc, discord.Options{Token: fake.Token, PublicKey: key, APIURL: fake.APIURL(), Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	runCtx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Go(func() { _ = svc.Deliver(runCtx, a, core.DeliverOptions{}) })
	defer func() { stop(); running.Wait() }()
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = benchClicks
	depth := func() int {
		s, err := st.(core.OutboxStats).OutboxStat(ctx, core.SurfaceDiscord)
		if err != nil {
			b.Fatal(err)
		}
		return s.Depth
	}

	var lat []time.Duration
	var redundant, drain float64
	for range b.N {
		b.StopTimer()
		ids := make([]string, benchClicks)
		for i := range ids {
			ids[i] = benchstore.AskDecision(b, svc, "ops")
		}
		// Every card posted and recorded, and nothing left to send.
		cards := make([]string, benchClicks)
		if !fake.WaitFor(5*time.Minute, func() bool {
			for i, id := range ids {
				if cards[i] != "" {
					continue
				}
				q, err := svc.Get(ctx, id)
				if err != nil || len(q.Messages) == 0 {
					return false
				}
				cards[i] = q.Messages[0].ID
			}
			return depth() == 0
		}) {
			b.Fatal("the cards were never all posted")
		}
		clicks := make([]discordfake.Interaction, benchClicks)
		for i, id := range ids {
			value := core.Ref{QuestionID: id, Item: -1, Action: core.RefOption, Option: 0}.Encode()
			clicks[i] = fake.Click(benchUser, cards[i], value)
		}
		before := len(fake.Calls())
		b.StartTimer()
		acks := benchstore.Burst(benchClicks, benchSpan, func(i int) {
			status, resp, err := fake.Post(srv.URL+discord.InteractionsPath, clicks[i], discordfake.Signed)
			if err != nil || status != http.StatusOK || resp.Type != discordfake.ResponseUpdateMessage {
				b.Errorf("click %d: %d, %v", i, status, err)
			}
		})
		b.StopTimer()
		answered := time.Now()
		if !fake.WaitFor(5*time.Minute, func() bool { return depth() == 0 }) {
			b.Fatal("the outbox never drained")
		}
		drain += float64(time.Since(answered).Milliseconds())
		clicked := make(map[string]bool, benchClicks)
		for _, id := range cards {
			clicked[id] = true
		}
		for _, c := range fake.Calls()[before:] {
			if c.Method == http.MethodPatch && clicked[c.Path[strings.LastIndexByte(c.Path, '/')+1:]] {
				redundant++
			}
		}
		lat = append(lat, acks...)
	}
	slices.Sort(lat)
	b.ReportMetric(redundant/float64(b.N), "redundant-edits")
	b.ReportMetric(drain/float64(b.N), "drain-ms")
	b.ReportMetric(benchstore.Millis(lat, 0.50), "ack-p50-ms")
	b.ReportMetric(benchstore.Millis(lat, 0.99), "ack-p99-ms")
}
