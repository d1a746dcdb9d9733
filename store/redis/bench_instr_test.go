package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// BenchmarkCloseInstructions counts, rather than times, what a close costs
// Redis: b.N closes as BenchmarkResolve makes them, one at a time, on a
// redis-server of its own run under callgrind (redistest.Counted), then
// b.N runs of minimalScript, then of each of BenchmarkCloseParts' steps.
// It reports the server's instructions per ask, per card posted and per
// reminder of the questions it closes ("instr/ask", "instr/post",
// "instr/renotify": the other scripts that append an event), per close ("instr/close"),
// per claim of one delivery with its ack and per claim that finds none
// ("instr/claim-ack", "instr/claim-none": the delivery loop's), per
// minimal script ("instr/minimal"), the ratio of the two
// ("x-minimal-instr", BenchmarkResolve's x-minimal counted), and per run
// of each step ("instr/part<step>", the steps' own minimal script with
// their larger arguments first): everything the server
// does for each call, its reading and its reply as well as the script.
// The times BenchmarkResolve reports move with whatever else the two cores
// run; these counts repeat within a fraction of a percent, so they show
// what a change to the scripts does to Redis's share. The time (ns/op) is
// callgrind's, not Redis's: ignore it. It needs valgrind.
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
	at := t0.Add(time.Minute)
	steps := closeSteps()
	for _, sc := range append([]*goredis.Script{minimalScript}, scriptsOf(steps)...) {
		if err := sc.Load(ctx, c).Err(); err != nil {
			b.Fatal(err)
		}
	}

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
	// The questions the closes close, counted as they are asked and their
	// cards posted.
	qs := make([]*core.Question, b.N)
	perAsk := count(func(i int) (err error) {
		qs[i], err = askOne(ctx, s)
		return err
	})
	perPost := count(func(i int) error {
		return postOne(ctx, s, qs[i], i)
	})
	// What core hands Resolve: the question as it read it (not counted).
	for i, q := range qs {
		var err error
		if qs[i], err = s.Get(ctx, q.ID); err != nil {
			b.Fatal(err)
		}
	}
	perClose := count(func(i int) error {
		t := answer(qs[i], "op", at)
		t.Read = qs[i]
		_, err := s.Resolve(ctx, t)
		return err
	})
	// A reminder (its event and the card posted again) of as many other
	// questions, asked and posted as the closed ones were (not counted),
	// so that the closes above are of questions never reminded.
	for i := range qs {
		q, err := askOne(ctx, s)
		if err == nil {
			err = postOne(ctx, s, q, i)
		}
		if err != nil {
			b.Fatal(err)
		}
		qs[i] = q
	}
	perRenotify := count(func(i int) error {
		return s.Renotify(ctx, remindOne(qs[i], i))
	})
	// A claim of one of the reminders' posts with its ack (which keeps
	// the pending list, which a claim scans, as short as a delivery
	// loop's), and a claim that finds none (a surface with nothing
	// enqueued): the delivery loop's polls.
	perClaim := count(func(int) error { return claimOne(ctx, s, core.SurfaceSlack, 1) })
	perClaimNone := count(func(int) error { return claimOne(ctx, s, core.SurfaceDiscord, 0) })
	p := "{" + randomPrefix() + "}"
	perMinimal := count(func(i int) error {
		return minimalScript.EvalSha(ctx, c, minimalKeys(p, strconv.Itoa(i)), minimalArgs...).Err()
	})
	b.ReportMetric(perAsk, "instr/ask")
	b.ReportMetric(perPost, "instr/post")
	b.ReportMetric(perRenotify, "instr/renotify")
	b.ReportMetric(perClose, "instr/close")
	b.ReportMetric(perClaim, "instr/claim-ack")
	b.ReportMetric(perClaimNone, "instr/claim-none")
	b.ReportMetric(perMinimal, "instr/minimal")
	b.ReportMetric(perClose/perMinimal, "x-minimal-instr")
	for _, st := range steps {
		p := "{" + randomPrefix() + "}" // questions of its own, each still at version 0
		args := partArgs(st.args)
		per := count(func(i int) error {
			return st.script.EvalSha(ctx, c, partKeys(p, strconv.Itoa(i)), args...).Err()
		})
		b.ReportMetric(per, "instr/part"+strings.TrimPrefix(st.name, "+"))
	}
}

// remindOne is the i-th reminder of q as core's reminders make it: its
// event and the card posted to its room again.
func remindOne(q *core.Question, i int) core.Renotice {
	d := post(q, core.SurfaceSlack, "C1")
	d.Key += ":remind1:" + strconv.Itoa(i)
	return core.Renotice{QuestionID: q.ID, Event: event(q, core.EventReminded, t0), Deliveries: []core.Delivery{d}, Now: t0}
}

// claimOne claims one delivery of surface without blocking, fails
// unless it got want, and acks what it got.
func claimOne(ctx context.Context, s *redisstore.Store, surface core.Surface, want int) error {
	ds, err := s.Claim(ctx, surface, "bench", 1, time.Hour, 0)
	if err == nil && len(ds) != want {
		err = fmt.Errorf("claimed %d deliveries of %s, want %d", len(ds), surface, want)
	}
	for _, d := range ds {
		err = errors.Join(err, s.Ack(ctx, surface, d.ID))
	}
	return err
}

func scriptsOf(steps []closeStep) []*goredis.Script {
	out := make([]*goredis.Script, len(steps))
	for i, st := range steps {
		out[i] = st.script
	}
	return out
}
