package redis_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// BenchmarkCloseInstructions counts, rather than times, what a close costs
// Redis: b.N closes as BenchmarkResolve makes them, one at a time, on a
// redis-server of its own run under callgrind (redistest.Counted), then
// b.N runs of minimalScript there. It reports the server's instructions
// per close ("instr/close"), per minimal script ("instr/minimal") and the
// ratio ("x-minimal-instr"): everything the server does for each call,
// its reading and reply as well as the script. The times BenchmarkResolve
// reports move with whatever else the two cores run; these counts repeat
// within a fraction of a percent, so they show what a change to the
// scripts does to Redis's share. The time ns/op is callgrind's, not
// Redis's: ignore it. It needs valgrind.
func BenchmarkCloseInstructions(b *testing.B) {
	ctx := context.Background()
	srv := redistest.StartCounted(b)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.Options{Prefix: randomPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	qs := closable(b, s)
	if err := minimalScript.Load(ctx, c).Err(); err != nil {
		b.Fatal(err)
	}
	at := t0.Add(time.Minute)

	count := func(run func(i int) error) float64 {
		if err := srv.Zero(); err != nil {
			b.Fatal(err)
		}
		for i := range b.N {
			if err := run(i); err != nil {
				b.Fatal(err)
			}
		}
		n, err := srv.Count()
		if err != nil {
			b.Fatal(err)
		}
		return float64(n) / float64(b.N)
	}
	b.ResetTimer()
	perClose := count(func(i int) error {
		t := answer(qs[i], "op", at)
		t.Read = qs[i]
		_, err := s.Resolve(ctx, t)
		return err
	})
	p := "{" + randomPrefix() + "}"
	ev := `{"question_id":"aaaaaaaaaaaaaaaaa","run_id":"run-bench","at":"2026-03-01T09:01:00Z","kind":"answered","actor":"p-0123456789abcdef","surface":"api"}`
	perMinimal := count(func(i int) error {
		keys := []string{p + ":q:" + strconv.Itoa(i), p + ":events", p + ":wake"}
		return minimalScript.EvalSha(ctx, c, keys, "0", ev, "aaaaaaaaaaaaaaaaa").Err()
	})
	b.StopTimer()
	b.ReportMetric(perClose, "instr/close")
	b.ReportMetric(perMinimal, "instr/minimal")
	b.ReportMetric(perClose/perMinimal, "x-minimal-instr")
}
