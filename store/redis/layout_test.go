package redis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestQuestionIsCompact: a question with its cards keeps its hash in
// Redis's listpack encoding (every value at most 64 bytes), its document
// and its resolution in keys of their own; closed, every value but its
// list of event ids still fits one. That list ("ev") takes 19 bytes an
// event, as event numbers follow the server's clock in µs (common.lua's
// append_event), so a question of up to three events stays a listpack
// and one of four or more (this one, closed) is a hashtable. Its close
// leaves its open index member, which the next listing drops.
func TestQuestionIsCompact(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	s := newStoreOn(t, c, redisstore.Options{})
	q := question(0, "run-1", t0)
	q.Text = strings.Repeat("Which region should the new cluster run in? ", 4)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C0123456789"))
	now := time.Date(2026, 3, 1, 9, 0, 1, 123456789, time.UTC) // a wall clock's nanoseconds
	for _, ref := range []core.MessageRef{
		{Surface: core.SurfaceSlack, Room: "C0123456789", ID: "1700000000.100200", Delivery: string(q.ID) + ":post:slack:C0123456789", Kind: core.DeliverPost, At: now},
		{Surface: core.SurfaceDiscord, Room: "1234567890123456789", ID: "1234567890123456789",
			Delivery: string(q.ID) + ":escalate:discord:1234567890123456789", Kind: core.DeliverEscalate, Repeat: true, At: now},
	} {
		if err := s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, now)); err != nil {
			t.Fatal(err)
		}
	}
	qk, _, _, _, openK, _, _, _ := redisstore.Keys(s, q.ID)
	if enc, err := c.ObjectEncoding(ctx, qk).Result(); err != nil || enc != "listpack" {
		t.Fatalf("open question's hash is %q (%v), not listpack", enc, err)
	}
	doc := strings.Replace(qk, ":q:", ":d:", 1)
	if v, err := c.Get(ctx, doc).Result(); err != nil || !strings.Contains(v, q.Text) {
		t.Fatalf("document key %s: %q, %v", doc, v, err)
	}
	if n, _ := c.ZCard(ctx, openK).Result(); n != 1 {
		t.Fatalf("open index has %d members", n)
	}
	tr := answer(q, "ada", t0.Add(time.Minute))
	tr.Resolution.Answer = strings.Repeat("eu-west-1, for the users. ", 4)
	if _, err := s.Resolve(ctx, tr); err != nil {
		t.Fatal(err)
	}
	fields, err := c.HGetAll(ctx, qk).Result()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		if k != "ev" && len(v) > 64 {
			t.Errorf("closed question's field %s is %d bytes, more than a listpack value takes", k, len(v))
		}
	}
	if ids := strings.Fields(fields["ev"]); len(ids) != 4 {
		t.Fatalf("closed question's events %q; want four", fields["ev"])
	}
	got := mustGet(t, s, q.ID)
	if got.State != core.StateAnswered || got.Resolution == nil || got.Resolution.Answer != tr.Resolution.Answer ||
		!got.Resolution.At.Equal(tr.Resolution.At) || got.Text != q.Text {
		t.Fatalf("closed question read back: %+v", got)
	}
	docK, resK := redisstore.DocumentKeys(s, q.ID)
	if v := c.Get(ctx, resK).Val(); !strings.Contains(v, tr.Resolution.Answer) || strings.Contains(c.Get(ctx, docK).Val(), tr.Resolution.Answer) {
		t.Fatalf("resolution key %q; the document holds it: %v", v, strings.Contains(c.Get(ctx, docK).Val(), tr.Resolution.Answer))
	}
	if n, _ := c.ZCard(ctx, openK).Result(); n != 1 {
		t.Fatalf("open index has %d members after the close, not its one left to the readers", n)
	}
	if qs, _, err := s.ListOpen(ctx, "", 10); err != nil || len(qs) != 0 {
		t.Fatalf("open list after the close: %+v, %v", qs, err)
	}
	if n, _ := c.ZCard(ctx, openK).Result(); n != 0 {
		t.Fatalf("open index has %d members after a listing met the closed one", n)
	}
}

// TestBetweenCreatedOpenAndClosed: by created time, open and closed
// questions of both classes and shards come in one order, before 1970
// too, each once, up to the limit.
func TestBetweenCreatedOpenAndClosed(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, redisstore.Options{Shards: 2})
	start := time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)
	var want []core.QuestionID
	for i := range 8 {
		q := question(i%2, "run-1", start.Add(time.Duration(i)*15*time.Second))
		if i%3 == 0 {
			q.Reversibility = core.HardToReverse
		}
		mustCreate(t, s, q)
		if i%2 == 1 {
			if _, err := s.Resolve(ctx, answer(q, "ada", t0)); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, q.ID)
	}
	ids := func(from, to time.Time, limit int) []core.QuestionID {
		t.Helper()
		qs, err := s.Between(ctx, core.ByCreated, from, to, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []core.QuestionID
		for _, q := range qs {
			out = append(out, q.ID)
		}
		return out
	}
	end := start.Add(2 * time.Minute)
	if diff := cmp.Diff(want, ids(start, end, 0)); diff != "" {
		t.Fatalf("all (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:3], ids(start, end, 3)); diff != "" {
		t.Fatalf("limit 3 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[2:6], ids(start.Add(30*time.Second), start.Add(90*time.Second), 10)); diff != "" {
		t.Fatalf("[30s, 90s) (-want +got):\n%s", diff)
	}
}

// TestHeldSecondCard: the held update of a card that is not the first
// (the close reads its packed fields apart from the rest) is, once due,
// the card as recorded, and the other card is edited at once.
func TestHeldSecondCard(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(t0)
	s := newStore(t, redisstore.Options{Now: clock.Now})
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	tg := core.MessageRef{Surface: core.SurfaceTelegram, Room: "-1001", ID: "42", Delivery: string(q.ID) + ":post:telegram:-1001", Kind: core.DeliverPost, At: t0}
	dc := core.MessageRef{Surface: core.SurfaceDiscord, Room: "1234567890123456789", ID: "9876543210987654321",
		Delivery: string(q.ID) + ":post:discord:1234567890123456789", Kind: core.DeliverPost, At: t0}
	for _, ref := range []core.MessageRef{tg, dc} {
		if err := s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, t0)); err != nil {
			t.Fatal(err)
		}
	}
	read := mustGet(t, s, q.ID)
	tr := answer(q, "ada", t0.Add(time.Minute))
	tr.Read = read
	tr.Shown = &core.ShownCard{Surface: core.SurfaceDiscord, MessageID: dc.ID}
	if _, err := s.Resolve(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if ds := drain(t, s, core.SurfaceTelegram); len(ds) != 1 || ds[0].Message == nil || *ds[0].Message != tg {
		t.Fatalf("telegram card's edit: %+v", ds)
	}
	if ds := drain(t, s, core.SurfaceDiscord); len(ds) != 0 {
		t.Fatalf("held update claimed before its hold passed: %+v", ds)
	}
	clock.Advance(core.ShownHold)
	ds := drain(t, s, core.SurfaceDiscord)
	if len(ds) != 1 || ds[0].Key != core.UpdateKey(q.ID, read.Version+1, 1) || ds[0].Kind != core.DeliverUpdate || ds[0].QuestionID != q.ID ||
		ds[0].Room != dc.Room || ds[0].Message == nil || *ds[0].Message != dc {
		t.Fatalf("held update once due: %+v", ds)
	}
}
