package app_test

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/rs/zerolog"
)

// pollingSettings are two replicas' settings: Telegram in polling mode
// against one fake, on one Redis, with one actor key.
func pollingSettings(tb testing.TB) app.Settings {
	fake := telegramfake.Start(tb, apptest.TgToken)
	return app.Settings{RedisURL: app.Secret(redistest.Start(tb).URL()), ActorKey: "shared-actor-key-0123456789",
		Telegram: app.TelegramSettings{BotToken: app.Secret(apptest.TgToken), APIURL: fake.Endpoint()}}
}

// leaseHolders is how many of the running programs say they hold the
// Telegram polling lease.
func leaseHolders(t testing.TB, ms ...*app.Main) (n float64) {
	for _, m := range ms {
		if m == nil {
			continue
		}
		n += apptest.Value(apptest.Scrape(t, m.URL, apptest.ObsTok), "askbridge_leases_held", "lease", "telegram")
	}
	return n
}

// holds waits until m reports the Telegram polling lease; a benchmark
// times the wait, so it checks as often as ScrapesUntil does.
func holds(b *testing.B, m *app.Main) {
	b.Helper()
	if !apptest.ScrapesUntil(30*time.Second, func() bool { return leaseHolders(b, m) == 1 }) {
		b.Fatal("the replica never took the polling lease")
	}
}

// TestTelegramLeaseMetric: of two replicas polling one bot, exactly one
// reports the lease.
func TestTelegramLeaseMetric(t *testing.T) {
	s := pollingSettings(t)
	a, b := apptest.Start(t, s), apptest.Start(t, s)
	if !apptest.ScrapesUntil(10*time.Second, func() bool { return leaseHolders(t, a, b) == 1 }) {
		t.Fatalf("%v replicas report the polling lease, want 1", leaseHolders(t, a, b))
	}
	for _, m := range []*app.Main{a, b} {
		if v := apptest.Value(apptest.Scrape(t, m.URL, apptest.ObsTok), "askbridge_leases_held", "lease", "telegram"); v != 0 && v != 1 {
			t.Errorf("leases_held = %v", v)
		}
	}
}

// BenchmarkTelegramFailover measures how long Telegram polling is without
// a poller when the replica holding the lease stops gracefully (it
// releases the lease; the other replica takes it at its next try): from
// the holder's Close returning to the other reporting the lease.
//
//	go test -run '^$' -bench TelegramFailover -benchtime 3x ./cmd/askbridge/internal/app/
func BenchmarkTelegramFailover(b *testing.B) {
	s := pollingSettings(b)
	run := func() *app.Main {
		s := s
		s.DataDir, s.Addr = b.TempDir(), "127.0.0.1:0"
		s.File.Tokens = []app.TokenFile{{Name: "dash", Role: "observer", Token: apptest.ObsTok}}
		m := &app.Main{Settings: s, Log: zerolog.Nop()}
		if err := m.Run(b.Context()); err != nil {
			b.Fatal(err)
		}
		return m
	}
	holder := run()
	for b.Loop() {
		b.StopTimer()
		standby := run()
		holds(b, holder)
		b.StartTimer()
		holder.Close()
		holds(b, standby)
		holder = standby
	}
	b.StopTimer()
	holder.Close()
}

// BenchmarkOutboxTakeover measures how long a card waits when the replica
// that claimed it dies before sending it: a consumer claims the post and
// never sends, acks or hands it back (as a crashed replica would), and a
// live program on the same Redis posts it once the claim has gone without
// a heartbeat for policies.outbox_idle (10 s by default). The figure is
// from that claim to the card on the Slack fake.
//
//	go test -run '^$' -bench OutboxTakeover -benchtime 3x ./cmd/askbridge/internal/app/
func BenchmarkOutboxTakeover(b *testing.B) {
	redis := redistest.Start(b).URL()
	fake := slackfake.New()
	b.Cleanup(fake.Close)
	s, err := app.LoadSettings(func(k string) string {
		return map[string]string{"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_SIGNING_SECRET": apptest.SlackSecret,
			"SLACK_API_URL": fake.APIURL(), "REDIS_URL": redis, "ASKBRIDGE_ACTOR_KEY": "shared-actor-key-0123456789"}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	s.Addr = "127.0.0.1:0"
	s.File.Routes = map[string]app.RouteFile{"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: apptest.SlackRoom}}}}
	ctx := b.Context()
	st, err := redisstore.Open(ctx, redis, redisstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := core.New(st, s.CoreConfig([]byte(s.ActorKey.Reveal())), nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "ops",
			Text: "Which region?", Reversibility: core.Reversible})
		if err != nil {
			b.Fatal(err)
		}
		if got, err := st.Claim(ctx, core.SurfaceSlack, "crashed-replica", 10, loops.DefaultMinIdle, 0); err != nil || len(got) != 1 {
			b.Fatalf("the dead replica's claim: %d, %v", len(got), err)
		}
		s.DataDir = b.TempDir()
		live := &app.Main{Settings: s, Log: zerolog.Nop()}
		if err := live.Run(ctx); err != nil {
			b.Fatal(err)
		}
		posted := fake.WaitFor(time.Minute, func() bool {
			for _, m := range fake.Messages() {
				if id, ok := apptest.SlackCardOf(m); ok && id == q.ID {
					return true
				}
			}
			return false
		})
		b.StopTimer()
		live.Close()
		if !posted {
			b.Fatal("the live replica never posted the dead one's card")
		}
		b.StartTimer()
	}
}

// cutter is a TCP relay to Redis that can cut every connection at once and
// refuse new ones: to a program behind it, Redis has vanished, so it can
// neither renew nor release its leases, which is what a crashed replica
// leaves behind.
type cutter struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutter(tb testing.TB, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	c := &cutter{ln: ln}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	tb.Cleanup(c.cut)
	return c
}

func (c *cutter) addr() string { return c.ln.Addr().String() }

func (c *cutter) cut() {
	c.ln.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// BenchmarkTelegramFailoverCrash is BenchmarkTelegramFailover with the
// holder dying instead of stopping: its connection to Redis is cut, so its
// lease is neither renewed nor released and has to lapse (core's
// DefaultLeaseTTL) before the other replica can take it.
//
//	go test -run '^$' -bench TelegramFailoverCrash -benchtime 3x ./cmd/askbridge/internal/app/
func BenchmarkTelegramFailoverCrash(b *testing.B) {
	s := pollingSettings(b)
	redisAddr := strings.TrimPrefix(s.RedisURL.Reveal(), "redis://")
	redisAddr, _, _ = strings.Cut(redisAddr, "/")
	run := func(redisURL string) *app.Main {
		s := s
		s.RedisURL = app.Secret(redisURL)
		s.DataDir, s.Addr = b.TempDir(), "127.0.0.1:0"
		s.File.Tokens = []app.TokenFile{{Name: "dash", Role: "observer", Token: apptest.ObsTok}}
		m := &app.Main{Settings: s, Log: zerolog.Nop()}
		if err := m.Run(b.Context()); err != nil {
			b.Fatal(err)
		}
		return m
	}
	for b.Loop() {
		b.StopTimer()
		relay := newCutter(b, redisAddr)
		holder := run("redis://" + relay.addr() + "/0")
		holds(b, holder)
		standby := run(s.RedisURL.Reveal())
		b.StartTimer()
		relay.cut()
		holds(b, standby)
		b.StopTimer()
		standby.Close()
		go holder.Close() // its store is gone: it stops in its own time
		b.StartTimer()
	}
}
