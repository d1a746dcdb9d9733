package redis_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/procmem"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// resolvers is how many goroutines race in the benchmarks.
const resolvers = 50

var (
	benchOnce   sync.Once
	benchClient *goredis.Client
)

// sharedClient is the one client both benchmarks go through, so that
// BenchmarkSet is the baseline of BenchmarkResolve: same client, same
// pool, same server, same concurrency. It lives as long as the binary.
func sharedClient() *goredis.Client {
	benchOnce.Do(func() {
		benchClient = goredis.NewClient(&goredis.Options{Addr: server.Addr()})
	})
	return benchClient
}

// setParallelism makes RunParallel use at least resolvers goroutines
// (parallelism x GOMAXPROCS; exactly 50 on 2 or 5 or 10 cores).
func setParallelism(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((resolvers + procs - 1) / procs)
}

// flush empties the private test server once a benchmark round is done,
// so rounds do not pile up data.
func flush(b *testing.B) {
	if err := sharedClient().FlushAll(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkResolve measures the chokepoint: 50 goroutines each closing
// questions (one per op, created beforehand with one card, so each close
// also enqueues a card edit, appends its event and publishes a wake-up),
// each handed the question as core would have read it. Beside the close's
// server time it reports a minimal resolve-shaped script's, run as many
// times by as many goroutines right after (minimal-µs/op), and the ratio
// of the two (x-minimal): what the close's Lua costs over the least a
// compare-and-set close can do.
func BenchmarkResolve(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	qs := closable(b, s)

	setParallelism(b)
	var next atomic.Int64
	at := t0.Add(time.Minute)
	resetServerStats(b)
	runtime.GC() // not the setup's garbage in the timed part
	client := clientCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			q := qs[next.Add(1)-1]
			t := answer(q, "op", at)
			t.Read = q
			if _, err := s.Resolve(ctx, t); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	client()
	closeTime := reportServerTime(b, "evalsha")
	if minimal := minimalScriptTime(b, b.N); minimal > 0 {
		b.ReportMetric(minimal, "minimal-µs/op")
		b.ReportMetric(closeTime/minimal, "x-minimal")
	}
}

// minimalScript is the least a close can do in Redis, shaped as resolve.lua
// is: read the version, compare it, write the new state, append the event
// and publish the wake-up.
var minimalScript = goredis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'ver')
if (v or '0') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'ver', tonumber(ARGV[1]) + 1, 'state', 'answered')
redis.call('XADD', KEYS[2], '*', 'e', ARGV[2])
redis.call('PUBLISH', KEYS[3], ARGV[3])
return 1`)

// minimalScriptTime runs minimalScript n times from the benchmark's 50
// goroutines, each on a question hash of its own with an event the size
// of a close's, and returns its server time per call.
func minimalScriptTime(b *testing.B, n int) float64 {
	prefix := "{" + randomPrefix() + "}"
	return scriptTime(b, minimalScript, n, func(i string) []string { return minimalKeys(prefix, i) }, minimalArgs)
}

// minimalKeys are the keys of minimalScript's call i under prefix p: a
// question hash of its own, the events and the wake-up channel.
func minimalKeys(p, i string) []string {
	return []string{p + ":q:" + i, p + ":events", p + ":wake"}
}

// minimalArgs are minimalScript's arguments: the version, an event the
// size of a close's and the question's id.
var minimalArgs = []any{"0", `{"question_id":"aaaaaaaaaaaaaaaaa","run_id":"run-bench","at":"2026-03-01T09:01:00Z","kind":"answered","actor":"p-0123456789abcdef","surface":"api"}`, "aaaaaaaaaaaaaaaaa"}

// scriptTime runs sc n times from resolvers goroutines, call i with
// keys(i) and args, and returns the server's time per call (the server's
// statistics are reset first).
func scriptTime(b *testing.B, sc *goredis.Script, n int, keys func(i string) []string, args []any) float64 {
	ctx := context.Background()
	c := sharedClient()
	if err := sc.Load(ctx, c).Err(); err != nil {
		b.Fatal(err)
	}
	resetServerStats(b)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range resolvers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := sc.EvalSha(ctx, c, keys(strconv.FormatInt(i, 10)), args...).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return serverTime(b, "evalsha", false)
}

// BenchmarkResolveOneCaller is BenchmarkResolve with one caller: what a
// close costs Redis when nothing else runs.
func BenchmarkResolveOneCaller(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	qs := closable(b, s)
	at := t0.Add(time.Minute)
	resetServerStats(b)
	runtime.GC()
	b.ResetTimer()
	for _, q := range qs {
		t := answer(q, "op", at)
		t.Read = q
		if _, err := s.Resolve(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportServerTime(b, "evalsha")
}

// BenchmarkGet reads one open question with one card, over and over.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	q := question(0, "run-bench", t0)
	q.Text = "Which region should the new cluster run in? eu-west-1 is closest to most users, us-east-1 is cheaper."
	mustCreate(b, s, q)
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C0123456789", ID: "1700000000.100200", Delivery: string(q.ID) + ":post:slack:C0123456789", At: t0}
	if err := s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, t0)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(ctx, q.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStore is a store of its own on the shared client, closed and the
// server emptied when the benchmark round is done.
func benchStore(b *testing.B) *redisstore.Store {
	s, err := redisstore.New(context.Background(), sharedClient(), redisstore.Options{Prefix: randomPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { flush(b) })
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// closable creates b.N open questions with one recorded card each, as
// core would hand them to Resolve.
func closable(b *testing.B, s *redisstore.Store) []*core.Question {
	ctx := context.Background()
	qs := make([]*core.Question, b.N)
	var wg sync.WaitGroup
	var setupErr atomic.Value
	const workers = 16
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += workers {
				q, err := askOne(ctx, s)
				if err == nil {
					err = postOne(ctx, s, q, i)
				}
				if err == nil {
					// What core hands Resolve: the question as it read it.
					q, err = s.Get(ctx, q.ID)
				}
				if err != nil {
					setupErr.Store(err)
					return
				}
				qs[i] = q
			}
		}()
	}
	wg.Wait()
	if err := setupErr.Load(); err != nil {
		b.Fatal(err)
	}
	return qs
}

// askOne stores a new open question, as an ask does, with its Slack card
// to post.
func askOne(ctx context.Context, s *redisstore.Store) (*core.Question, error) {
	q := question(0, "run-bench", t0)
	return q, s.Create(ctx, q, event(q, core.EventAsked, t0), []core.Delivery{post(q, core.SurfaceSlack, "C1")})
}

// postOne records q's card as posted, the i-th.
func postOne(ctx context.Context, s *redisstore.Store, q *core.Question, i int) error {
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: strconv.Itoa(i), Delivery: string(q.ID) + ":post", At: t0}
	return s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, t0))
}

// BenchmarkSet is the floor: a plain SET through the same client, with
// the same 50 goroutines.
func BenchmarkSet(b *testing.B) {
	ctx := context.Background()
	c := sharedClient()
	defer flush(b)
	prefix := randomPrefix() + ":set:"
	setParallelism(b)
	var next atomic.Int64
	resetServerStats(b)
	runtime.GC() // not the setup's garbage in the timed part
	client := clientCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			if err := c.Set(ctx, prefix+strconv.FormatInt(i, 10), "answered", 0).Err(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	client()
	reportServerTime(b, "set")
}

// clientCPU starts counting this process's CPU, the client's side of
// each op (go-redis and, for a close, core's and the store's Go), and
// redis-server's. The function it returns reports both per op
// ("client-cpu-µs/op", "redis-cpu-µs/op": the server's whole process,
// its reading and writing as well as the command). On the two cores they
// share, an op's throughput is bounded by the larger: a close's against
// a SET's is set by both.
func clientCPU(b *testing.B) (report func()) {
	client, server := procmem.CPU(), redisCPU(b)
	return func() {
		per := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Microsecond) }
		b.ReportMetric(per(procmem.CPU()-client), "client-cpu-µs/op")
		b.ReportMetric(per(redisCPU(b)-server), "redis-cpu-µs/op")
	}
}

// redisCPU is the CPU the tests' redis-server has used.
func redisCPU(b *testing.B) time.Duration {
	d, err := server.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// resetServerStats zeroes the server's command statistics and turns off
// the tests' slot check (it would add client work the benchmark is not
// about) for the rest of the benchmark.
func resetServerStats(b *testing.B) {
	prev := redisstore.SetScriptHook(nil)
	b.Cleanup(func() { redisstore.SetScriptHook(prev) })
	if err := sharedClient().ConfigResetStat(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// reportServerTime reports the server's own time per call of cmd, from
// INFO commandstats: what one op costs Redis, apart from the client and
// the network. It returns the figure (0 if there is none).
func reportServerTime(b *testing.B, cmd string) float64 {
	f := serverTime(b, cmd, true)
	if f > 0 {
		b.ReportMetric(f, "server-µs/op")
	}
	return f
}

// serverTime is the server's time per call of cmd since its statistics
// were last reset, in µs. With save, the statistics also go to the file
// ASKBRIDGE_BENCH_CMDSTATS names, if it does.
func serverTime(b *testing.B, cmd string, save bool) float64 {
	info, err := sharedClient().Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	// Which commands the time went to: the last round's statistics, in
	// the file ASKBRIDGE_BENCH_CMDSTATS names.
	if path := os.Getenv("ASKBRIDGE_BENCH_CMDSTATS"); save && path != "" {
		if err := os.WriteFile(path, []byte(info), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "usec_per_call="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					return f
				}
			}
		}
	}
	return 0
}

// BenchmarkBoot is the boot with storetest.BenchOpen() open questions, no
// downtime and after one (see storetest.BenchBoot).
func BenchmarkBoot(b *testing.B) {
	ctx := context.Background()
	prefix := randomPrefix()
	defer flush(b)
	storetest.BenchBoot(b, func(b *testing.B, seeding bool) core.Store {
		s, err := redisstore.New(ctx, sharedClient(), redisstore.Options{Prefix: prefix})
		if err != nil {
			b.Fatal(err)
		}
		if !seeding {
			b.Cleanup(func() { _ = s.Close() })
		}
		return s
	})
}

// BenchmarkMemoryPerOpen reports Redis's own memory (INFO memory,
// used_memory) per open question: each asked with one post delivery,
// its card posted and recorded (so it has its asked and notified events
// and one card), and the post delivered (acked), as a question waiting
// for its answer is. ASKBRIDGE_BENCH_OPEN sets how many (default
// 100,000); run it with -benchtime 1x.
func BenchmarkMemoryPerOpen(b *testing.B) {
	ctx := context.Background()
	n := storetest.BenchOpen()
	for range b.N {
		flush(b)
		s, err := redisstore.New(ctx, sharedClient(), redisstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		before := usedMemory(b)
		storetest.Parallel(b, 16, n, func(i int64) error {
			at := t0.Add(time.Duration(i) * time.Millisecond)
			q := question(0, core.RunID("run-"+strconv.FormatInt(i%100, 10)), at)
			q.Text = "Which region should the new cluster run in? eu-west-1 is closest to most users, us-east-1 is cheaper."
			if err := s.Create(ctx, q, event(q, core.EventAsked, at), []core.Delivery{post(q, core.SurfaceSlack, "C0123456789")}); err != nil {
				return err
			}
			ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C0123456789", ID: "1700000000." + strconv.FormatInt(100000+i, 10),
				Delivery: string(q.ID) + ":post:slack:C0123456789", At: at}
			return s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, at))
		})
		for {
			ds, err := s.Claim(ctx, core.SurfaceSlack, "bench", 1000, time.Hour, 0)
			if err != nil {
				b.Fatal(err)
			}
			if len(ds) == 0 {
				break
			}
			for _, d := range ds {
				if err := s.Ack(ctx, core.SurfaceSlack, d.ID); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(usedMemory(b)-before)/float64(n), "B/open-question")
		_ = s.Close()
	}
}

// usedMemory is the server's used_memory, in bytes.
func usedMemory(b *testing.B) int64 {
	info, err := sharedClient().Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no used_memory in INFO memory")
	return 0
}
