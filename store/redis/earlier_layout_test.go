package redis_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestEarlierLayoutStillReads: questions written by earlier versions
// read, take cards, close (editing their cards) and are purged with their
// events like new ones. The oldest layout stores every counter, a
// "created" field and its event ids in a list of their own; the next
// keeps its event ids in the hash and no zero counters. Both keep the
// document in the hash, their cards as update-delivery fragments found
// by md:<key> fields and their events as JSON, and were put in the
// created index at create.
func TestEarlierLayoutStillReads(t *testing.T) {
	for _, oldest := range []bool{true, false} {
		t.Run(fmt.Sprintf("oldest=%v", oldest), func(t *testing.T) { testEarlierLayout(t, oldest) })
	}
}

func testEarlierLayout(t *testing.T, oldest bool) {
	ctx := t.Context()
	c := newClient(t)
	s := newStoreOn(t, c, redisstore.Options{})
	q := question(0, "run-1", t0)
	q.Deadline = t0.Add(time.Hour)
	qk, listK, evK, seqK, openK, createdK, deadlineK, runK := redisstore.Keys(s, q.ID)
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
	want := *q
	want.Messages = []core.MessageRef{card}
	if diff := cmp.Diff(&want, mustGet(t, s, q.ID)); diff != "" {
		t.Fatalf("earlier record read back (-want +got):\n%s", diff)
	}
	// The card is recognised by its key; a second card is recorded.
	notified := event(q, core.EventNotified, t0)
	if got, err := s.RecordMessage(ctx, q.ID, card, notified); err != nil || len(got.Messages) != 1 {
		t.Fatalf("repeat of the earlier card: %+v, %v", got, err)
	}
	card2 := core.MessageRef{Surface: core.SurfaceTelegram, Room: "-100", ID: "42", Delivery: string(q.ID) + ":post:telegram:-100", Kind: core.DeliverPost, At: t0}
	if got, err := s.RecordMessage(ctx, q.ID, card2, notified); err != nil || len(got.Messages) != 2 {
		t.Fatalf("a new card on the earlier record: %+v, %v", got, err)
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
	for _, k := range []string{qk, listK} {
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
