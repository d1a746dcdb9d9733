package telegram

// The re-notification drain benchmark. It runs only with -bench (never in
// plain `go test`); see BENCHMARKS.md for the command.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/benchstore"
	"github.com/askbridge/askbridge/internal/coretest"
)

// The drain of issue 31: drainPerChat questions in each of drainChats
// private chats, their cards waiting in the outbox as after downtime.
const (
	drainChats   = 30
	drainPerChat = 11
	// sendLatency is how long the fake takes to answer a send, about
	// what Telegram's servers take.
	sendLatency = 50 * time.Millisecond
)

// BenchmarkDrain starts the outbox on drainChats × drainPerChat cards
// queued while the bridge was down, as serve runs it (the store's shared
// budgets and the adapter's own limits), against a fake Telegram that
// answers 429 past Telegram's limits and takes sendLatency per send. It
// reports how long the drain took, that against the fastest Telegram's
// limits allow (one message a second per chat, thirty a second in all:
// 330 messages in 10.97 s here) as "rate-%", the most messages accepted
// in any one second, and the 429s, per store.
func BenchmarkDrain(b *testing.B) {
	benchstore.EachEnv(b, func(b *testing.B, e benchstore.Env) {
		routes := map[string]core.Route{}
		for c := range drainChats {
			routes[fmt.Sprintf("r%d", c)] = core.Route{Rooms: []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.Itoa(700000001 + c)}},
				Deciders: map[core.Surface][]string{core.SurfaceTelegram: {strconv.FormatInt(userAlice.ID, 10)}}}
		}
		svc := coretest.Service(b, e.Store, coretest.Options{Routes: routes})
		fake := telegramfake.Start(b, token)
		fake.SetLatency(sendLatency)
		fake.Limit()
		a, err := New(svc, Options{Token: token, APIEndpoint: fake.Endpoint(), Log: zerolog.Nop(),
			WebhookSecret: secret, WebhookURL: "https://bridge.example/telegram/webhook"})
		if err != nil {
			b.Fatal(err)
		}
		var took, peak, slip, stall float64
		for range b.N {
			b.StopTimer()
			before := len(fake.Sent())
			for range drainPerChat {
				for c := range drainChats {
					benchstore.AskDecision(b, svc, fmt.Sprintf("r%d", c))
				}
			}
			want := before + drainChats*drainPerChat
			ctx, stop := context.WithCancel(context.Background())
			var running sync.WaitGroup
			start := time.Now()
			b.StartTimer()
			running.Go(func() { _ = a.Run(ctx) })
			running.Go(func() { _ = loops.Deliver(ctx, svc, a, loops.DeliverOptions{Budget: e.Store.(core.Budget)}) })
			if !fake.Wait(5*time.Minute, func() bool { return len(fake.Sent()) >= want }) {
				b.Fatalf("%d of %d messages sent", len(fake.Sent())-before, want-before)
			}
			b.StopTimer()
			took += time.Since(start).Seconds()
			stop()
			running.Wait()
			sent := fake.Sent()[before:]
			slip, stall = slip+lost(sent, false), stall+lost(sent, true)
			if os.Getenv("ASKBRIDGE_BENCH_GAPS") != "" {
				var line []string
				for i := 1; i < len(sent); i++ {
					line = append(line, strconv.Itoa(int(sent[i].Sub(sent[i-1]).Milliseconds())))
				}
				b.Logf("first send after %s; gaps ms: %s", sent[0].Sub(start), strings.Join(line, " "))
			}
			for i := range sent {
				n := 0
				for j := i; j < len(sent) && sent[j].Sub(sent[i]) < time.Second; j++ {
					n++
				}
				peak = max(peak, float64(n))
			}
		}
		ideal := max(float64(drainPerChat-1), float64(drainChats*drainPerChat-1)/30)
		b.ReportMetric(took/float64(b.N), "drain-s")
		b.ReportMetric(100*ideal/(took/float64(b.N)), "rate-%")
		b.ReportMetric(peak, "peak-per-s")
		b.ReportMetric(float64(fake.TooMany()), "429s")
		// Where the time went: past the bot's 33 ms between sends, the
		// gaps of up to 45 ms (a send taken a little late: the bot-wide
		// budget, burst 1, does not make it up) and the longer ones (the
		// bot's budget idle: a batch's end, a chat not yet due).
		b.ReportMetric(slip*1000/float64(b.N), "slip-ms")
		b.ReportMetric(stall*1000/float64(b.N), "stall-ms")
	})
}

// lost sums, over consecutive sends, the time past Telegram's bot-wide
// spacing (1/30 s): of gaps of up to 45 ms, or, if long, of the longer
// ones, in seconds.
func lost(sent []time.Time, long bool) float64 {
	const spacing = time.Second / 30
	var sum time.Duration
	for i := 1; i < len(sent); i++ {
		gap := sent[i].Sub(sent[i-1])
		if gap > spacing && (gap > 45*time.Millisecond) == long {
			sum += gap - spacing
		}
	}
	return sum.Seconds()
}
