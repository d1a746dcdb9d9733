package redis

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
)

// allSet fails the test if a field of v is zero: the cases below set
// every field, so a field added to the type later fails here until the
// packed form learns it.
func allSet(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Fatalf("%T.%s is not set: the packed form must carry every field", v, rv.Type().Field(i).Name)
		}
	}
}

var at = time.Date(2026, 3, 1, 9, 0, 0, 123456789, time.UTC)

// TestCardsPack: a card read back, and the update delivery a close
// enqueues for it, are what the JSON fragment earlier versions stored
// gives, whichever form it is stored in.
func TestCardsPack(t *testing.T) {
	const id = "aaaaaaaaaaaaaaaaa"
	full := core.MessageRef{Surface: core.SurfaceDiscord, Room: "1234567890123456789", ID: "9876543210987654321",
		Delivery: id + ":escalate:discord:1234567890123456789", Kind: core.DeliverEscalate, Repeat: true, At: at}
	allSet(t, full)
	with := func(f func(*core.MessageRef)) core.MessageRef { r := full; f(&r); return r }
	for name, tc := range map[string]struct {
		ref    core.MessageRef
		packed bool
	}{
		"discord, every field": {full, true},
		"slack": {with(func(r *core.MessageRef) {
			r.Surface, r.Room, r.ID, r.Kind, r.Repeat = "slack", "C0123456789", "1700000000.100200", "post", false
		}), true},
		"time with an offset":   {with(func(r *core.MessageRef) { r.At = at.In(time.FixedZone("", 7200)) }), true},
		"zero time":             {with(func(r *core.MessageRef) { r.At = time.Time{} }), true},
		"room with a separator": {with(func(r *core.MessageRef) { r.Room = "a\x1fb" }), false},
		"room starting a quote": {with(func(r *core.MessageRef) { r.Room = `"x` }), false},
		"id not UTF-8":          {with(func(r *core.MessageRef) { r.ID = "\xff" }), false},
		"key with a separator":  {with(func(r *core.MessageRef) { r.Delivery = "k\x1fk" }), true},
		"kind and room absent":  {with(func(r *core.MessageRef) { r.Kind, r.Room, r.Repeat = "", "", false }), true},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := storeCard(id, tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if isFragment(v) == tc.packed {
				t.Fatalf("stored as %q; packed: %v", v, tc.packed)
			}
			if tc.packed && name == "discord, every field" && len(v) > 64 {
				t.Errorf("packed card is %d bytes, more than a listpack value takes", len(v))
			}
			frag, err := renderCard(id, tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			var want cardFragment
			if err := json.Unmarshal([]byte("{"+frag+"}"), &want); err != nil {
				t.Fatal(err)
			}
			got, err := readCard(v, tc.ref.Delivery, tc.ref.Surface)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*want.Message, got); diff != "" {
				t.Fatalf("card read back (-fragment +packed):\n%s", diff)
			}
			k, created := id+"/update/3/1", `"2026-03-01T09:01:00Z"`
			wantD, err := cardUpdate(tc.ref.Surface, frag, k, created) // as enqueued from an earlier record
			if err != nil {
				t.Fatal(err)
			}
			gotD, err := cardUpdate(tc.ref.Surface, v+packSep+tc.ref.Delivery, k, created)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantD, gotD); diff != "" {
				t.Fatalf("update delivery (-fragment +packed):\n%s", diff)
			}
		})
	}
}

// TestEventsPack: an event read back is what its JSON gives, whichever
// form it is stored in.
func TestEventsPack(t *testing.T) {
	full := core.Event{Seq: 7, QuestionID: "aaaaaaaaaaaaaaaaa", RunID: "run-1", At: at, Kind: core.EventAnswered,
		Actor: "p-1", Surface: core.SurfaceSlack, Reason: "because <b> & so", Payload: json.RawMessage(` {"a": "<x>\u001f", "b":[1, 2]} `),
		Chain: &core.Chain{N: 7, Prev: "ab", Digest: "cd", Hash: "ef"}}
	allSet(t, full)
	with := func(f func(*core.Event)) core.Event { e := full; f(&e); return e }
	for name, tc := range map[string]struct {
		e      core.Event
		packed bool
	}{
		"every field":           {full, true},
		"few fields":            {core.Event{QuestionID: "q", At: at, Kind: core.EventAsked}, true},
		"time with an offset":   {with(func(e *core.Event) { e.At = at.In(time.FixedZone("", -3600)) }), true},
		"before 1970":           {with(func(e *core.Event) { e.At = time.Date(1960, 1, 1, 0, 0, 0, 5, time.UTC) }), true},
		"reason with separator": {with(func(e *core.Event) { e.Reason = "a\x1fb" }), false},
		"kind like JSON":        {with(func(e *core.Event) { e.Kind = "{x" }), false},
		"actor not UTF-8":       {with(func(e *core.Event) { e.Actor = "\xfe" }), false},
		"payload null":          {with(func(e *core.Event) { e.Payload = json.RawMessage("null") }), true},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := packEvent(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(v, "{") == tc.packed {
				t.Fatalf("stored as %q; packed: %v", v, tc.packed)
			}
			old := tc.e
			old.Seq = 0
			old.Chain = nil             // the entry keeps it in fields of its own (chain.go)
			b, err := json.Marshal(old) // as earlier versions stored it
			if err != nil {
				t.Fatal(err)
			}
			var want core.Event
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			got, err := readEvent(v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("event read back (-JSON +stored):\n%s", diff)
			}
		})
	}
	if _, err := packEvent(with(func(e *core.Event) { e.Payload = json.RawMessage("{") })); err == nil {
		t.Fatal("an event whose payload is not JSON was stored")
	}
}

// TestAppendPackedCard: a card packed straight into an update's bytes is
// the card as storeCard stores it, and what does not pack is left to
// storeCard.
func TestAppendPackedCard(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 123_000_000, time.UTC)
	for _, ref := range []core.MessageRef{
		{Surface: core.SurfaceSlack, Room: "C1", ID: "1700.1", Delivery: "k", Kind: core.DeliverPost, At: at},
		{Surface: core.SurfaceDiscord, Room: "123456789012345678", ID: "987654321098765432", Kind: core.DeliverEscalate, Repeat: true, At: at},
	} {
		want, err := storeCard("q1", ref)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendPackedCard(nil, ref)
		if !ok || string(got) != want {
			t.Errorf("%+v: packed %q (%v), want %q", ref, got, ok, want)
		}
	}
	for _, ref := range []core.MessageRef{
		{Surface: core.SurfaceSlack, Room: "C\x1f1", ID: "1", At: at},
		{Surface: core.SurfaceSlack, Room: `"C1`, ID: "1", At: at},
		{Surface: core.SurfaceSlack, Room: "C1", ID: "1", At: at.In(time.FixedZone("x", 3600))},
		{Surface: core.SurfaceTelegram, Room: "-100", ID: "42", At: time.Time{}.UTC()},
	} {
		if got, ok := appendPackedCard(nil, ref); ok {
			t.Errorf("%+v packed as %q; want it left to storeCard", ref, got)
		}
	}
}
