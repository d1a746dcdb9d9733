package slack_test

// The click-burst benchmark. It runs only with -bench (never in plain
// `go test`); see BENCHMARKS.md for the command.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/benchstore"
)

// burstClicks and burstSpan are the burst: 1,000 signed clicks
// sent within one second.
const (
	burstClicks = 1000
	burstSpan   = time.Second
)

// BenchmarkClickBurst sends burstClicks signed Slack button clicks, each
// on its own open question, spread evenly over burstSpan, and times each
// click from sending it until Slack would have its acknowledgement (the
// HTTP response; the adapter answers only once core has stored the
// answer). It reports the 50th and 99th percentiles and the worst, per
// store: the embedded store with fsync (the real setting) and Redis.
func BenchmarkClickBurst(b *testing.B) { benchstore.Each(b, benchClickBurst) }

func benchClickBurst(b *testing.B, st core.Store) {
	ctx := context.Background()
	svc, err := core.New(st, core.Config{ActorKey: []byte("key"), Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {alice.ID}}},
	}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	fake := slackfake.New()
	defer fake.Close()
	fake.AddUser(alice)
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
	defer func() { stop(); running.Wait() }()
	// No outbox loop: the cards are not posted, the clicks carry their
	// buttons' values as a posted card's would.
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = burstClicks

	var all []time.Duration
	for range b.N {
		b.StopTimer()
		bodies := make([][]byte, burstClicks)
		for i := range bodies {
			q, err := svc.Ask(ctx, core.AskInput{Agent: "agent", RunID: "run-1", Route: "ops", Kind: core.KindDecision,
				Reversibility: core.Reversible, Text: "Which database?", Options: []core.Option{
					{ID: "pg", Title: "PostgreSQL", Writeup: "Known.", Recommended: true},
					{ID: "ddb", Title: "DynamoDB", Writeup: "Scales."}}})
			if err != nil {
				b.Fatal(err)
			}
			card := slackfake.Message{Channel: room, TS: "1700000000.000100"}
			value := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 0}.Encode()
			bodies[i] = slackfake.ClickPayload(alice, card, slackfake.Button{BlockID: "b", ActionID: value, Value: value})
		}
		lat := make([]time.Duration, burstClicks)
		var wg sync.WaitGroup
		gap := burstSpan / burstClicks
		b.StartTimer()
		pace := time.NewTicker(gap) // one click a gap: the burst spans burstSpan
		for i, body := range bodies {
			if i > 0 {
				<-pace.C
			}
			wg.Go(func() {
				t := time.Now()
				status, _, err := slackfake.Click(srv.URL+slack.InteractivityPath, secret, body).Send(ctx)
				lat[i] = time.Since(t)
				if err != nil || status != http.StatusOK {
					b.Errorf("click %d: %d, %v", i, status, err)
				}
			})
		}
		pace.Stop()
		wg.Wait()
		b.StopTimer()
		all = append(all, lat...)
	}
	slices.Sort(all)
	at := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	b.ReportMetric(at(0.50), "ack-p50-ms")
	b.ReportMetric(at(0.99), "ack-p99-ms")
	b.ReportMetric(at(1), "ack-max-ms")
}
