package redis_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestEarlierLayoutIsMigrated: questions written by earlier versions
// are rewritten into the current layout once, when a store opens on
// them, and then read, take cards, close (editing their cards) and are
// purged with their events like new ones. The oldest layout stores every
// counter, a "created" field and its event ids in a list of their own;
// the next keeps its event ids in the hash and no zero counters. Both
// keep the document in the hash, the whole open index member in "om",
// their cards as update-delivery fragments found by md:<key> fields,
// their events as JSON and the event counter as n alone, and were put in
// the created index at create. Two stores open on them at once; a third,
// opened with the layout key gone as after a kill before it was set,
// changes nothing more.
func TestEarlierLayoutIsMigrated(t *testing.T) {
	for _, oldest := range []bool{true, false} {
		t.Run(fmt.Sprintf("oldest=%v", oldest), func(t *testing.T) { testEarlierLayout(t, oldest) })
	}
}

// reopen deletes the layout keys of s's prefix, as a store of a version
// before the layout was kept would have left them, and opens n stores on
// it at once with opts, returning the first.
func reopen(t *testing.T, c goredis.UniversalClient, s *redisstore.Store, n int, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	ctx := t.Context()
	if err := c.Del(ctx, redisstore.LayoutKeys(s)...).Err(); err != nil {
		t.Fatal(err)
	}
	opts.Prefix = redisstore.Prefix(s)
	stores := make([]*redisstore.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			stores[i], errs[i] = redisstore.New(ctx, c, opts)
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("open %d on the earlier layout: %v", i, errs[i])
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	for _, k := range redisstore.LayoutKeys(s) {
		if v, err := c.Get(ctx, k).Result(); err != nil || v != strconv.Itoa(redisstore.LayoutVersion) {
			t.Fatalf("layout %s after the migration: %q, %v", k, v, err)
		}
	}
	return stores[0]
}

// dump is every key of a question's record, as Redis holds it.
func dump(t *testing.T, c goredis.UniversalClient, keys ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		switch typ := c.Type(t.Context(), k).Val(); typ {
		case "hash":
			for f, v := range c.HGetAll(t.Context(), k).Val() {
				out[k+" "+f] = v
			}
		case "string":
			out[k] = c.Get(t.Context(), k).Val()
		case "none":
		default:
			out[k] = typ
		}
	}
	return out
}

func testEarlierLayout(t *testing.T, oldest bool) {
	ctx := t.Context()
	c := newClient(t)
	s0 := newStoreOn(t, c, redisstore.Options{})
	q := question(0, "run-1", t0)
	q.Deadline = t0.Add(time.Hour)
	qk, listK, evK, seqK, openK, createdK, deadlineK, runK := redisstore.Keys(s0, q.ID)
	docK, resK := redisstore.DocumentKeys(s0, q.ID)
	doc, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	run := q.Run().Key()
	asked, _ := json.Marshal(event(q, core.EventAsked, t0))
	om := redisstore.OpenMember(q)
	ms := func(at time.Time) string { return strconv.FormatInt(at.UnixMilli(), 10) }
	card := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700.1", Delivery: string(q.ID) + ":post:slack:C1", Kind: core.DeliverPost, At: t0}
	frag, _ := json.Marshal(struct {
		Kind       core.DeliveryKind `json:"kind"`
		Surface    core.Surface      `json:"surface"`
		Room       string            `json:"room"`
		QuestionID string            `json:"question_id"`
		Message    core.MessageRef   `json:"message"`
	}{core.DeliverUpdate, card.Surface, card.Room, string(q.ID), card})
	fields := []any{"doc", doc, "state", "open", "run", run, "om", om, "deadline", ms(q.Deadline),
		"nm", 1, "m:1", string(frag[1 : len(frag)-1]), "ms:1", "slack", "md:" + card.Delivery, 1}
	if oldest {
		fields = append(fields, "created", ms(t0), "renot", 0, "ni", 0, "na", 0, "ver", 0)
	} else {
		fields = append(fields, "ev", "1-0")
	}
	_, err = c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, qk, fields...)
		p.Set(ctx, seqK, 1, 0)
		p.XAdd(ctx, &goredis.XAddArgs{Stream: evK, ID: "1-0", Values: []any{"e", string(asked)}})
		if oldest {
			p.RPush(ctx, listK, "1-0")
		}
		p.ZAdd(ctx, openK, goredis.Z{Member: om})
		p.ZAdd(ctx, createdK, goredis.Z{Score: float64(t0.UnixMilli()), Member: string(q.ID)})
		p.ZAdd(ctx, deadlineK, goredis.Z{Score: float64(q.Deadline.UnixMilli()), Member: string(q.ID)})
		p.ZAdd(ctx, runK, goredis.Z{Member: run + "\x00" + string(q.ID)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := reopen(t, c, s0, 2, redisstore.Options{})
	// The record is in the current layout: the document in its key, om
	// short, the event ids in "ev", the counter with its hash.
	f := c.HGetAll(ctx, qk).Val()
	if _, ok := f["doc"]; ok || len(f["om"]) != 18 || f["ev"] != "1-0" {
		t.Fatalf("hash after the migration: %v", f)
	}
	if v := c.Get(ctx, docK).Val(); v != string(doc) {
		t.Fatalf("document after the migration: %q", v)
	}
	if n := c.Exists(ctx, listK, resK).Val(); n != 0 {
		t.Fatalf("%d of the event list and the resolution after the migration", n)
	}
	if v := c.Get(ctx, seqK).Val(); v != "1 " {
		t.Fatalf("counter after the migration: %q", v)
	}
	migrated := dump(t, c, qk, docK, resK, listK, seqK)
	reopen(t, c, s, 1, redisstore.Options{})
	if diff := cmp.Diff(migrated, dump(t, c, qk, docK, resK, listK, seqK)); diff != "" {
		t.Fatalf("a second migration changed the record (-first +second):\n%s", diff)
	}
	want := *q
	want.Messages = []core.MessageRef{card}
	if diff := cmp.Diff(&want, mustGet(t, s, q.ID)); diff != "" {
		t.Fatalf("earlier record read back (-want +got):\n%s", diff)
	}
	// The card is recognised by its key; a second card is recorded.
	notified := event(q, core.EventNotified, t0)
	if err := s.RecordMessage(ctx, q.ID, card, notified); err != nil {
		t.Fatalf("repeat of the earlier card: %v", err)
	}
	if got := mustGet(t, s, q.ID); len(got.Messages) != 1 {
		t.Fatalf("after a repeat of the earlier card: %+v", got.Messages)
	}
	card2 := core.MessageRef{Surface: core.SurfaceTelegram, Room: "-100", ID: "42", Delivery: string(q.ID) + ":post:telegram:-100", Kind: core.DeliverPost, At: t0}
	if err := s.RecordMessage(ctx, q.ID, card2, notified); err != nil {
		t.Fatalf("a new card on the earlier record: %v", err)
	}
	if got := mustGet(t, s, q.ID); len(got.Messages) != 2 {
		t.Fatalf("after a new card on the earlier record: %+v", got.Messages)
	}
	want.Messages = append(want.Messages, card2)
	// Listed by created time, open and closed.
	between := func() {
		t.Helper()
		got, err := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Millisecond), 10)
		if err != nil || len(got) != 1 || got[0].ID != q.ID {
			t.Fatalf("between: %+v, %v", got, err)
		}
	}
	between()
	at := t0.Add(time.Minute)
	tr := answer(q, "ada", at)
	tr.Read = mustGet(t, s, q.ID)
	got, err := s.Resolve(ctx, tr)
	if err != nil || got.State != core.StateAnswered {
		t.Fatalf("close: %+v, %v", got, err)
	}
	if got := mustGet(t, s, q.ID); got.Resolution == nil || got.Resolution.Answer != tr.Resolution.Answer || len(got.Messages) != 2 {
		t.Fatalf("earlier record read back closed: %+v", got)
	}
	between()
	if got, err := s.Between(ctx, core.ByClosed, at, at.Add(time.Millisecond), 10); err != nil || len(got) != 1 || got[0].ID != q.ID {
		t.Fatalf("between by closed time: %+v, %v", got, err)
	}
	for _, m := range want.Messages {
		ds := drain(t, s, m.Surface)
		if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].Message == nil || *ds[0].Message != m || ds[0].QuestionID != q.ID {
			t.Fatalf("%s card's edit: %+v", m.Surface, ds)
		}
	}
	if diff := cmp.Diff([]core.EventKind{core.EventAsked, core.EventNotified, core.EventAnswered}, kinds(t, s, q.ID)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if n, err := s.Purge(ctx, at.Add(time.Hour), 0); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if evs, _ := s.Events(ctx, 0, 100); len(withoutCheckpoints(evs)) != 0 {
		t.Fatalf("events left after purge: %+v", evs)
	}
	for _, k := range []string{qk, listK, docK, resK} {
		if n, _ := c.Exists(ctx, k).Result(); n != 0 {
			t.Fatalf("%s left after purge", k)
		}
	}
	for _, k := range []string{deadlineK, runK, openK, createdK} {
		if n, _ := c.ZCard(ctx, k).Result(); n != 0 {
			t.Fatalf("%s still has %d members after purge", k, n)
		}
	}
}

// TestClosedRecordOfLayoutOneIsMigrated: a question closed by the version
// before layouts were kept has its resolution after its document, behind
// the record separator; the migration moves it to a key of its own, and
// the question reads, is found by its close time and is purged whole.
func TestClosedRecordOfLayoutOneIsMigrated(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	s0 := newStoreOn(t, c, redisstore.Options{})
	q := question(0, "run-1", t0)
	closedAt := t0.Add(time.Minute)
	q.State = core.StateAnswered
	q.Version = 1
	q.Resolution = &core.Resolution{State: core.StateAnswered, Answer: "eu-west-1", At: closedAt}
	qk, _, evK, seqK, openK, createdK, _, runK := redisstore.Keys(s0, q.ID)
	docK, resK := redisstore.DocumentKeys(s0, q.ID)
	closedK := strings.Replace(createdK, ":created", ":closed", 1)
	plain := *q
	plain.Resolution = nil
	doc, _ := json.Marshal(&plain)
	res, _ := json.Marshal(q.Resolution)
	asked, _ := json.Marshal(event(q, core.EventAsked, t0))
	om := redisstore.OpenMember(q)
	run := q.Run().Key()
	ms := strconv.FormatInt(closedAt.UnixMilli(), 10)
	_, err := c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, qk, "state", "answered", "run", run, "om", om[:18], "ev", "1-0", "ver", 1, "closed", ms)
		p.Set(ctx, docK, string(doc)+"\x1e"+string(res), 0)
		p.Set(ctx, seqK, "1 "+strings.Repeat("ab", 20), 0)
		p.XAdd(ctx, &goredis.XAddArgs{Stream: evK, ID: "1-0", Values: []any{"e", string(asked)}})
		p.ZAdd(ctx, createdK, goredis.Z{Score: float64(t0.UnixMilli()), Member: string(q.ID)})
		p.ZAdd(ctx, closedK, goredis.Z{Score: float64(closedAt.UnixMilli()), Member: string(q.ID)})
		p.ZAdd(ctx, runK, goredis.Z{Member: run + "\x00" + string(q.ID)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := reopen(t, c, s0, 2, redisstore.Options{})
	if d, r := c.Get(ctx, docK).Val(), c.Get(ctx, resK).Val(); d != string(doc) || r != string(res) {
		t.Fatalf("document %q and resolution %q after the migration", d, r)
	}
	if v := c.Get(ctx, seqK).Val(); v != "1 "+strings.Repeat("ab", 20) {
		t.Fatalf("a counter with its hash was changed: %q", v)
	}
	got := mustGet(t, s, q.ID)
	if got.State != core.StateAnswered || got.Resolution == nil || got.Resolution.Answer != "eu-west-1" || !got.Resolution.At.Equal(closedAt) {
		t.Fatalf("layout 1 closed record read back: %+v", got)
	}
	page, err := s.SearchClosed(ctx, core.ClosedQuery{}, "", 10, 0)
	if err != nil || len(page.Questions) != 1 || page.Questions[0].ID != q.ID {
		t.Fatalf("closed search: %+v, %v", page, err)
	}
	if n, err := s.Purge(ctx, closedAt.Add(time.Hour), 0); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if n := c.Exists(ctx, qk, docK, resK).Val(); n != 0 {
		t.Fatalf("%d of the record's keys left after purge", n)
	}
	for _, k := range []string{closedK, createdK, runK, openK} {
		if n := c.ZCard(ctx, k).Val(); n != 0 {
			t.Fatalf("%s still has %d members after purge", k, n)
		}
	}
}
