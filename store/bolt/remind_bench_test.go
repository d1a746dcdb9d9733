package bolt_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
	"github.com/askbridge/askbridge/store/storetest"
)

// remindRoutes is a route that reminds hourly, posted to one Slack room.
func remindRoutes() map[string]core.Route {
	return map[string]core.Route{"nag": {
		Rooms:       []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
		Deciders:    map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
		RemindEvery: time.Hour,
	}}
}

// BenchmarkRemind times the first reminder pass (core.Service.Remind)
// after a restart, on a file opened as the bridge opens it (fsync on),
// over n open questions: "due" each due its first reminder (a claim and
// a re-notice stored per question), "claimed" each with its reminder
// claimed before the restart (nothing to send, but a fresh process does
// not know that until it asks). commits/reminder (commits/question for
// "claimed") is what the disk pays: one fsync per commit.
func BenchmarkRemind(b *testing.B) {
	for _, n := range []int{100, 2000} {
		b.Run(fmt.Sprintf("due=%d", n), func(b *testing.B) { benchRemind(b, n, false) })
	}
	b.Run("claimed=2000", func(b *testing.B) { benchRemind(b, 2000, true) })
}

func benchRemind(b *testing.B, n int, claimed bool) {
	ctx := context.Background()
	clock := core.NewSimClock(time.Now().UTC().Truncate(time.Millisecond))
	opts := coretest.Options{Routes: remindRoutes(), Clock: clock}
	var commits, sent int64
	b.StopTimer()
	for i := range b.N {
		// Seed without fsync: n questions asked an interval and a minute
		// ago, their reminders claimed already if claimed.
		path := filepath.Join(b.TempDir(), fmt.Sprintf("remind%d.db", i))
		seed, err := bolt.Open(path, bolt.Options{NoSync: true, AuditKey: []byte(coretest.AuditKey)})
		if err != nil {
			b.Fatal(err)
		}
		svc := coretest.Service(b, seed, opts)
		storetest.Parallel(b, 16, n, func(int64) error {
			_, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which region?",
				Reversibility: core.Reversible, Route: "nag", Timeout: 24 * time.Hour})
			return err
		})
		clock.Advance(time.Hour + time.Minute)
		if claimed {
			if got, err := svc.Remind(ctx); err != nil || got != n {
				b.Fatalf("seeding pass: %d of %d reminded, %v", got, n, err)
			}
		}
		if err := seed.Close(); err != nil {
			b.Fatal(err)
		}

		st, err := bolt.Open(path, bolt.Options{AuditKey: []byte(coretest.AuditKey)})
		if err != nil {
			b.Fatal(err)
		}
		svc = coretest.Service(b, st, opts)
		before := st.Commits()
		b.StartTimer()
		got, err := svc.Remind(ctx)
		b.StopTimer()
		commits += st.Commits() - before
		sent += int64(got)
		want := n
		if claimed {
			want = 0
		}
		if err != nil || got != want {
			b.Fatalf("pass: %d reminded, want %d, %v", got, want, err)
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if claimed {
		b.ReportMetric(float64(commits)/float64(b.N*n), "commits/question")
		return
	}
	b.ReportMetric(float64(commits)/float64(sent), "commits/reminder")
}
