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
	"github.com/askbridge/askbridge/internal/coretest"
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
	svc := coretest.Service(b, st, coretest.Options{Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {alice.ID}}},
	}})
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
			id := benchstore.AskDecision(b, svc, "ops")
			card := slackfake.Message{Channel: room, TS: "1700000000.000100"}
			value := core.Ref{QuestionID: id, Item: -1, Action: core.RefOption, Option: 0}.Encode()
			bodies[i] = slackfake.ClickPayload(alice, card, slackfake.Button{BlockID: "b", ActionID: value, Value: value})
		}
		b.StartTimer()
		lat := benchstore.Burst(burstClicks, burstSpan, func(i int) {
			status, _, err := slackfake.Click(srv.URL+slack.InteractivityPath, secret, bodies[i]).Send(ctx)
			if err != nil || status != http.StatusOK {
				b.Errorf("click %d: %d, %v", i, status, err)
			}
		})
		b.StopTimer()
		all = append(all, lat...)
	}
	slices.Sort(all)
	b.ReportMetric(benchstore.Millis(all, 0.50), "ack-p50-ms")
	b.ReportMetric(benchstore.Millis(all, 0.99), "ack-p99-ms")
	b.ReportMetric(benchstore.Millis(all, 1), "ack-max-ms")
}
