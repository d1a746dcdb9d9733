package discord_test

// The click-burst benchmark. It runs only with -bench (never in plain
// `go test`); see BENCHMARKS.md for the command.

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/benchstore"
	"github.com/askbridge/askbridge/internal/coretest"
)

// BenchmarkClickBurst is a team's burst of Discord button clicks
// (benchstore's set-up): benchstore.BurstClicks decision questions spread
// over a number of channels (a route each), their cards posted through
// the outbox and recorded, then a signed click on each card, sent to the
// HTTP interactions endpoint evenly over benchstore.BurstSpan by
// benchstore.BurstPeople people, each on a connection of their own; then
// it waits until the outbox has drained. Each click is timed from its
// first byte out until its whole response is in. It reports the acks'
// 50th and 99th percentiles and the worst, the CPU this process and
// Redis used during the burst, how many REST edits (PATCH) the clicked
// cards got after their interaction responses had already updated them
// in place (redundant edits: one edit per close per card is the goal),
// and how long the outbox took to drain after the last click was
// answered, per room count and store: the embedded store with fsync and
// Redis.
func BenchmarkClickBurst(b *testing.B) {
	benchstore.EachRooms(b, func(b *testing.B, rooms int) {
		benchstore.EachEnv(b, func(b *testing.B, e benchstore.Env) { benchClickBurst(b, e, rooms) })
	})
}

func benchClickBurst(b *testing.B, e benchstore.Env, rooms int) {
	ctx := context.Background()
	st := e.Store
	people := make([]discordfake.User, benchstore.BurstPeople)
	ids := make([]string, len(people))
	for i := range people {
		people[i] = discordfake.User{ID: strconv.Itoa(111111111111111100 + i), Name: fmt.Sprintf("Person %d", i)}
		ids[i] = people[i].ID
	}
	routes := map[string]core.Route{}
	for r := range rooms {
		routes[fmt.Sprintf("r%d", r)] = core.Route{Rooms: []core.Room{{Surface: core.SurfaceDiscord, ID: strconv.Itoa(345626669114982400 + r)}},
			Deciders: map[core.Surface][]string{core.SurfaceDiscord: ids}}
	}
	svc := coretest.Service(b, st, coretest.Options{Routes: routes})
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
	// The outbox as serve runs it: every channel at the platform's pace,
	// except the one-room yardstick (see benchstore.BurstRooms).
	o := loops.DeliverOptions{}
	if rooms > 1 {
		o.Budget = st.(core.Budget)
	}
	runCtx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Go(func() { _ = loops.Deliver(runCtx, svc, a, o) })
	defer func() { stop(); running.Wait() }()
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = 100
	clickers := benchstore.NewPeople(len(people))
	defer clickers.Close()
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
		qs := make([]core.QuestionID, benchstore.BurstClicks)
		for i := range qs {
			qs[i] = benchstore.AskDecision(b, svc, fmt.Sprintf("r%d", i%rooms))
		}
		cards := benchstore.WaitForCards(b, svc, st, core.SurfaceDiscord, qs)
		clicks := make([]discordfake.Interaction, len(qs))
		for i, id := range qs {
			value := core.Ref{QuestionID: id, Item: -1, Action: core.RefOption, Option: 0}.Encode()
			clicks[i] = fake.Click(people[i%len(people)], cards[i].ID, value)
		}
		before := len(fake.Calls())
		cpu := benchstore.StartCPU(b, e)
		b.StartTimer()
		acks := clickers.Clicks(len(qs), benchstore.BurstSpan, func(ctx context.Context, c *http.Client, i int) {
			status, resp, err := fake.PostWith(ctx, c, srv.URL+discord.InteractionsPath, clicks[i], discordfake.Signed)
			if err != nil || status != http.StatusOK || resp.Type != discordfake.ResponseUpdateMessage {
				b.Errorf("click %d: %d, %v", i, status, err)
			}
		})
		b.StopTimer()
		cpu.Report(b)
		answered := time.Now()
		if !fake.WaitFor(5*time.Minute, func() bool { return depth() == 0 }) {
			b.Fatal("the outbox never drained")
		}
		drain += float64(time.Since(answered).Milliseconds())
		benchstore.EachClosedOnce(b, svc, qs)
		clicked := make(map[string]bool, len(cards))
		for _, c := range cards {
			clicked[c.ID] = true
		}
		for _, c := range fake.Calls()[before:] {
			if c.Method == http.MethodPatch && clicked[c.Path[strings.LastIndexByte(c.Path, '/')+1:]] {
				redundant++
			}
		}
		lat = append(lat, acks...)
	}
	b.ReportMetric(redundant/float64(b.N), "redundant-edits")
	b.ReportMetric(drain/float64(b.N), "drain-ms")
	benchstore.ReportAcks(b, lat)
}
