package redis_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestClosedIndexCaughtUpByReaders: a close leaves its question out of
// the closed index; the index's readers catch it up from the closes'
// marks, several replicas at once adding each close once, in close-time
// order, and a purge catches up before it picks what to drop.
func TestClosedIndexCaughtUpByReaders(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	s1 := newStoreOn(t, c, redisstore.Options{})
	s2 := newStoreOn(t, c, redisstore.Options{Prefix: redisstore.Prefix(s1)})
	var ids []core.QuestionID
	for i := range 3 {
		q := question(0, "run-1", t0.Add(time.Duration(i)*time.Second))
		mustCreate(t, s1, q)
		// Closed in the other order: the last asked closes first.
		if _, err := s1.Resolve(ctx, answer(q, "ada", t0.Add(time.Duration(10-i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
		ids = append([]core.QuestionID{q.ID}, ids...)
	}
	_, _, _, _, _, createdK, _, _ := redisstore.Keys(s1, ids[0])
	closedK := strings.Replace(createdK, ":created", ":closed", 1)
	if n := c.ZCard(ctx, closedK).Val(); n != 0 {
		t.Fatalf("closed index has %d members before any reader: the close wrote it", n)
	}
	var wg sync.WaitGroup
	pages := make([][]*core.Question, 2)
	errs := make([]error, 2)
	for i, s := range []*redisstore.Store{s1, s2} {
		wg.Go(func() {
			pages[i], errs[i] = s.Between(ctx, core.ByClosed, t0, t0.Add(time.Hour), 10)
		})
	}
	wg.Wait()
	for i := range pages {
		var got []core.QuestionID
		for _, q := range pages[i] {
			got = append(got, q.ID)
		}
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if diff := cmp.Diff(ids, got); diff != "" {
			t.Fatalf("replica %d: closed by time (-want +got):\n%s", i, diff)
		}
	}
	if n := c.ZCard(ctx, closedK).Val(); n != 3 {
		t.Fatalf("closed index has %d members after the catch-up", n)
	}
	// One more close, caught up by the purge, which drops all four.
	q := question(0, "run-1", t0.Add(time.Hour))
	mustCreate(t, s2, q)
	if _, err := s2.Resolve(ctx, answer(q, "ada", t0.Add(2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if n, err := s1.Purge(ctx, t0.Add(3*time.Hour), 0); err != nil || n != 4 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if n := c.ZCard(ctx, closedK).Val(); n != 0 {
		t.Fatalf("closed index has %d members after the purge", n)
	}
}
