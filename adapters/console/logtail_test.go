package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	"github.com/askbridge/askbridge/store/bolt"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// countedLog is a store that counts the events its log reads hand out:
// what a page load costs in reading the log.
type countedLog struct {
	core.Store
	read atomic.Int64
}

func (c *countedLog) Events(ctx context.Context, since int64, limit int) ([]core.Event, error) {
	evs, err := c.Store.Events(ctx, since, limit)
	c.read.Add(int64(len(evs)))
	return evs, err
}

var streamSince = regexp.MustCompile(`data-stream="/stream\?since=(\d+)"`)

// TestFirstPageLoadFindsTheLogsTailWithoutReadingTheLog: a replica's
// first page starts its stream at the tail of a log of 5,000 events, as
// a later page does, having read one batch of the log and then single
// events (at most 1,100 in all, where a walk reads all 5,001), on the
// embedded store and on Redis with several shards (whose event numbers
// follow a clock, far apart). The next page reads none.
func TestFirstPageLoadFindsTheLogsTailWithoutReadingTheLog(t *testing.T) {
	stores := map[string]func(t *testing.T) core.Store{
		"bolt": func(t *testing.T) core.Store {
			st, err := bolt.Open(filepath.Join(t.TempDir(), "askbridge.db"), bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"redis": func(t *testing.T) core.Store {
			st, err := redisstore.Open(t.Context(), redistest.Start(t).URL(), redisstore.Options{Shards: 3})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := &countedLog{Store: open(t)}
			svc, err := core.New(st, core.Config{Routes: openRoutes(), ActorKey: []byte("k")}, nil)
			if err != nil {
				t.Fatal(err)
			}
			q, err := svc.Ask(t.Context(), core.AskInput{Agent: "agent-a", RunID: "run-1", Kind: core.KindClarification,
				Reversibility: core.Reversible, Text: "Rotate the keys?"})
			if err != nil {
				t.Fatal(err)
			}
			var last core.Event
			for range 5000 {
				if last, err = st.Append(t.Context(), core.Event{QuestionID: q.ID, RunID: q.RunID, At: q.CreatedAt,
					Kind: core.EventRefused, Reason: "late"}); err != nil {
					t.Fatal(err)
				}
			}
			toks := &tokens{}
			toks.set(opAlice)
			c, err := console.New(svc, console.Options{Tokens: toks, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(c)
			t.Cleanup(func() { c.Drain(); srv.Close() })
			b := (&env{t: t}).browser(srv)
			if r := b.signIn(opAlice.secret); r.status != http.StatusSeeOther {
				t.Fatalf("sign in: %d", r.status)
			}
			for i, bound := range []int64{1100, 10} {
				st.read.Store(0)
				r := b.get("/")
				m := streamSince.FindStringSubmatch(r.body)
				if r.status != http.StatusOK || m == nil || m[1] != strconv.FormatInt(last.Seq, 10) {
					t.Fatalf("page %d: %d, stream %v, want it to start at %d", i+1, r.status, m, last.Seq)
				}
				if n := st.read.Load(); n > bound {
					t.Fatalf("page %d read %d events of the log to find its tail, want at most %d", i+1, n, bound)
				}
			}
		})
	}
}
