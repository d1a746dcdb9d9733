package slack_test

// The click-burst benchmark. It runs only with -bench (never in plain
// `go test`); see BENCHMARKS.md for the command.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/benchstore"
	"github.com/askbridge/askbridge/internal/coretest"
)

// BenchmarkClickBurst is a team's burst of Slack button clicks
// (benchstore's set-up): benchstore.BurstClicks decision questions spread
// over a number of rooms (a route each), their cards posted through the
// outbox and recorded, then one signed click on each card, sent evenly
// over benchstore.BurstSpan by benchstore.BurstPeople people, each on a
// connection of their own, while the outbox works on as serve runs it.
// Each click is timed from its first byte out until its whole HTTP
// response is in (the adapter answers once core has stored the answer).
// It reports the acks' 50th and 99th percentiles and the worst, and the
// CPU this process and Redis used during the burst, per room count and
// store: the embedded store with fsync (the real setting) and Redis.
func BenchmarkClickBurst(b *testing.B) {
	benchstore.EachRooms(b, func(b *testing.B, rooms int) {
		benchstore.EachEnv(b, func(b *testing.B, e benchstore.Env) { benchClickBurst(b, e, rooms) })
	})
}

// noteLatency is how long the fake Slack takes to answer
// chat.postEphemeral during the burst, about what Slack takes.
const noteLatency = 100 * time.Millisecond

func benchClickBurst(b *testing.B, e benchstore.Env, rooms int) {
	ctx := context.Background()
	fake := slackfake.New()
	defer fake.Close()
	people := make([]slackfake.User, benchstore.BurstPeople)
	ids := make([]string, len(people))
	for i := range people {
		people[i] = slackfake.User{ID: fmt.Sprintf("U0BENCH%02d", i), Name: fmt.Sprintf("Person %d", i)}
		ids[i] = people[i].ID
		fake.AddUser(people[i])
	}
	routes := map[string]core.Route{}
	for r := range rooms {
		routes[fmt.Sprintf("r%d", r)] = core.Route{Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: fmt.Sprintf("C0BENCH%02d", r)}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: ids}}
	}
	svc := coretest.Service(b, e.Store, coretest.Options{Routes: routes})
	a, err := slack.New(svc, slack.Options{BotToken: "xoxb-test", SigningSecret: secret,
		APIURL: strings.TrimSuffix(fake.APIURL(), "/"), Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	runCtx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Go(func() { _ = a.Run(runCtx) })
	// The outbox as serve runs it: every room at the platform's pace,
	// except the one-room yardstick (see benchstore.BurstRooms).
	o := loops.DeliverOptions{}
	if rooms > 1 {
		o.Budget = e.Store.(core.Budget)
	}
	running.Go(func() { _ = loops.Deliver(runCtx, svc, a, o) })
	defer func() { stop(); running.Wait() }()
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = 100
	// Slack takes about 100 ms to answer a Web API call: the clickers'
	// private notes leave far slower than the clicks come.
	fake.SetLatency("chat.postEphemeral", noteLatency)
	clickers := benchstore.NewPeople(len(people))
	defer clickers.Close()

	var acks []time.Duration
	for range b.N {
		b.StopTimer()
		qs := make([]core.QuestionID, benchstore.BurstClicks)
		for i := range qs {
			qs[i] = benchstore.AskDecision(b, svc, fmt.Sprintf("r%d", i%rooms))
		}
		cards := benchstore.WaitForCards(b, svc, e.Store, core.SurfaceSlack, qs)
		bodies := make([][]byte, len(qs))
		for i, id := range qs {
			card := slackfake.Message{Channel: cards[i].Room, TS: cards[i].ID}
			value := core.Ref{QuestionID: id, Item: -1, Action: core.RefOption, Option: 0}.Encode()
			bodies[i] = slackfake.ClickPayload(people[i%len(people)], card, slackfake.Button{BlockID: "b", ActionID: value, Value: value})
		}
		notes := len(fake.Ephemerals())
		cpu := benchstore.StartCPU(b, e)
		b.StartTimer()
		lat := clickers.Clicks(len(qs), benchstore.BurstSpan, func(ctx context.Context, c *http.Client, i int) {
			req := slackfake.Click(srv.URL+slack.InteractivityPath, secret, bodies[i])
			req.Client = c
			status, _, err := req.Send(ctx)
			if err != nil || status != http.StatusOK {
				b.Errorf("click %d: %d, %v", i, status, err)
			}
		})
		b.StopTimer()
		cpu.Report(b)
		acks = append(acks, lat...)
		benchstore.EachClosedOnce(b, svc, qs)
		if !fake.WaitFor(5*time.Minute, func() bool { return len(fake.Ephemerals()) >= notes+len(qs) }) {
			b.Fatalf("%d private notes of %d sent", len(fake.Ephemerals())-notes, len(qs))
		}
	}
	benchstore.ReportAcks(b, acks)
}
