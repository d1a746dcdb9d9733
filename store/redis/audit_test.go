package redis_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

var auditKey = audit.Key("redis audit key")

// auditedLog writes a log of six events through a store and returns the
// store and its event stream's key.
func auditedLog(t *testing.T, c *goredis.Client) (*redisstore.Store, string) {
	t.Helper()
	ctx := t.Context()
	s := newStoreOn(t, c, redisstore.Options{AuditKey: auditKey})
	q1, q2, q3 := question(0, "run-1", t0), question(0, "run-1", t0.Add(time.Second)), question(0, "run-2", t0.Add(2*time.Second))
	for _, q := range []*core.Question{q1, q2, q3} {
		mustCreate(t, s, q)
	}
	if _, err := s.Resolve(ctx, answer(q1, "ann", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, core.Event{QuestionID: q2.ID, Kind: core.EventRefused, Actor: "p-bob", At: t0.Add(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, answer(q2, "ann", t0.Add(3*time.Minute))); err != nil {
		t.Fatal(err)
	}
	_, _, events, _, _, _, _, _ := redisstore.Keys(s, q1.ID)
	return s, events
}

func verifyStore(t *testing.T, s *redisstore.Store) audit.Report {
	t.Helper()
	rep, err := audit.Verify(auditKey, audit.StoreWalk(t.Context(), s), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// rewrite replaces the stream by its entries as edit leaves them, under
// the same ids: what someone who can write to Redis, and has not the
// key, can do to a stream whose entries cannot be edited in place.
func rewrite(t *testing.T, c *goredis.Client, stream string, edit func([]goredis.XMessage)) {
	t.Helper()
	ctx := t.Context()
	msgs, err := c.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	edit(msgs)
	if err := c.Del(ctx, stream).Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.ID == "" {
			continue // dropped by edit
		}
		if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: stream, ID: m.ID, Values: m.Values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAuditVerifyFindsTamperingInRedis: an event altered, deleted or
// moved in its stream, with the go-redis client, is named by its seq;
// the log as written verifies. Cases name the event by its place in the
// log (from 1): its seq follows the server's clock.
func TestAuditVerifyFindsTamperingInRedis(t *testing.T) {
	c := newClient(t)
	s, _ := auditedLog(t, c)
	if rep := verifyStore(t, s); rep.Break != nil || rep.Events != 6 || rep.Witnessed != 5 {
		t.Fatalf("clean log: %+v", rep)
	}
	for name, tc := range map[string]struct {
		edit   func(t *testing.T, stream string)
		at     int    // the place of the event the break is at, from 1
		reason string // when set, what the break must say
	}{
		"altered": {func(t *testing.T, stream string) {
			rewrite(t, c, stream, func(msgs []goredis.XMessage) {
				body := msgs[4].Values["e"].(string)
				if !strings.Contains(body, "p-bob") {
					t.Fatalf("entry 5 is not the refusal: %q", body)
				}
				msgs[4].Values["e"] = strings.Replace(body, "p-bob", "p-eve", 1)
			})
		}, 5, ""},
		"deleted": {func(t *testing.T, stream string) {
			msgs, err := c.XRange(t.Context(), stream, "-", "+").Result()
			if err != nil || len(msgs) != 6 {
				t.Fatalf("the log: %d events, %v", len(msgs), err)
			}
			if err := c.XDel(t.Context(), stream, msgs[2].ID).Err(); err != nil {
				t.Fatal(err)
			}
		}, 4, ""},
		// The links are unkeyed (SHA-1, what a script can compute): one
		// who recomputes them after a deletion is caught by the next
		// event's keyed witness of the chain as it was.
		"deleted and relinked": {func(t *testing.T, stream string) {
			rewrite(t, c, stream, func(msgs []goredis.XMessage) {
				// c is "<prev> <witness> <digest> <hash>" (common.lua).
				prev := strings.Fields(msgs[1].Values["c"].(string))[3]
				for _, m := range msgs[3:] {
					n, _, _ := strings.Cut(m.ID, "-")
					seq, _ := strconv.ParseInt(n, 10, 64)
					c := strings.Fields(m.Values["c"].(string))
					c[0], c[3] = prev, audit.Link(prev, seq, c[2], "")
					m.Values["c"], prev = strings.Join(c, " "), c[3]
				}
				copy(msgs[2:], msgs[3:])
				msgs[len(msgs)-1] = goredis.XMessage{}
			})
		}, 4, "witnesses is missing"},
		"reordered": {func(t *testing.T, stream string) {
			rewrite(t, c, stream, func(msgs []goredis.XMessage) {
				msgs[1].Values, msgs[3].Values = msgs[3].Values, msgs[1].Values
			})
		}, 2, ""},
	} {
		t.Run(name, func(t *testing.T) {
			s, stream := auditedLog(t, c)
			written, err := s.Events(t.Context(), 0, 0)
			if err != nil || len(written) != 6 {
				t.Fatalf("the log: %d events, %v", len(written), err)
			}
			seq := written[tc.at-1].Seq
			tc.edit(t, stream)
			rep := verifyStore(t, s)
			if rep.Break == nil || rep.Break.Seq != seq || !strings.Contains(rep.Break.Reason, tc.reason) {
				t.Fatalf("report %+v; want a break at seq %d, event %d (%q)", rep, seq, tc.at, tc.reason)
			}
		})
	}
}

// TestAuditChainsOnFromAnEarlierCounter: a shard whose event counter was
// written before the counter kept the chain's head beside it (the number
// alone) gets the stream's newest entry's hash beside it when a store
// opens on it (the migration), its next event links to that, and the log
// verifies whole across the change.
func TestAuditChainsOnFromAnEarlierCounter(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	s, _ := auditedLog(t, c)
	_, _, _, seqK, _, _, _, _ := redisstore.Keys(s, "any")
	head, err := c.Get(ctx, seqK).Result()
	if err != nil {
		t.Fatal(err)
	}
	n, hash, ok := strings.Cut(head, " ")
	if !ok || len(hash) != 40 {
		t.Fatalf("counter %q; want <n> <hash>", head)
	}
	if err := c.Set(ctx, seqK, n, 0).Err(); err != nil { // as an earlier version left it
		t.Fatal(err)
	}
	s = reopen(t, c, s, 2, redisstore.Options{AuditKey: auditKey}) // migrates the counter
	if v := c.Get(ctx, seqK).Val(); v != head {
		t.Fatalf("counter migrated to %q, not %q", v, head)
	}
	q := question(0, "run-3", t0.Add(4*time.Second))
	mustCreate(t, s, q)
	if _, err := s.Resolve(ctx, answer(q, "ann", t0.Add(5*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if rep := verifyStore(t, s); rep.Break != nil || rep.Events != 8 {
		t.Fatalf("log across the earlier counter: %+v", rep)
	}
	after, err := c.Get(ctx, seqK).Result()
	if err != nil {
		t.Fatal(err)
	}
	if m, h, ok := strings.Cut(after, " "); !ok || len(h) != 40 || h == hash || m == n {
		t.Fatalf("counter after two more events %q (before %q)", after, head)
	}
}
