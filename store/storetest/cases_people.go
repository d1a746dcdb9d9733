package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

func init() {
	registerDomain("PersonAnswersFromEverySurfaceAsOneActor", testPersonEverySurface)
	registerDomain("GroupMembersMayAnswer", testGroupMembers)
	register("DigestPerPerson", testDigestPerson)
}

// alice on each of her accounts, with whatever name the platform reports:
// the configured display name must win.
func aliceOn(s core.Surface) core.Decider {
	ids := map[core.Surface]string{core.SurfaceSlack: "U-alice", core.SurfaceDiscord: "1001",
		core.SurfaceTelegram: "2001", core.SurfaceAPI: "alice-token"}
	return core.Decider{Surface: s, ID: ids[s], Name: "al1ce (platform name)"}
}

func testPersonEverySurface(t *testing.T, h Harness) {
	e := newEnv(t, h)
	var actor string
	for _, sf := range []core.Surface{core.SurfaceSlack, core.SurfaceDiscord, core.SurfaceTelegram, core.SurfaceAPI} {
		in := decision("leads")
		q := e.ask(in)
		o, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: aliceOn(sf), OptionID: "pg"})
		if err != nil {
			t.Fatalf("alice on %s: %v", sf, err)
		}
		d := o.Question.Resolution.Decider
		if d.Person != "alice" || d.Name != "Alice Example" || d.Surface != sf {
			t.Fatalf("alice on %s recorded as %+v, want person alice named Alice Example", sf, d)
		}
		// The stored record says the same after a read.
		if got := e.get(q.ID).Resolution.Decider; !cmp.Equal(got, d) {
			t.Fatalf("stored decider %+v, returned %+v", got, d)
		}
		evs := e.events(q.ID)
		last := evs[len(evs)-1]
		if last.Kind != core.EventAnswered || last.Actor == "" {
			t.Fatalf("close event %+v", last)
		}
		if actor == "" {
			actor = last.Actor
		} else if last.Actor != actor {
			t.Fatalf("alice's %s answer has actor %s, her first %s: one person, one actor", sf, last.Actor, actor)
		}
	}
	// The actor is the person's, not any one account's.
	if raw := core.Pseudonym([]byte(coretest.ActorKey), core.Decider{Surface: core.SurfaceSlack, ID: "U-alice"}); raw == actor {
		t.Fatal("alice's actor is her Slack account's pseudonym, not her own")
	}

	// A stranger is refused on every surface, and claiming to be Alice
	// changes nothing: core decides who a person is.
	q := e.ask(decision("leads"))
	for _, d := range []core.Decider{
		{Surface: core.SurfaceSlack, ID: "U-stranger"},
		{Surface: core.SurfaceSlack, ID: "U-stranger", Person: "alice", Name: "Alice Example"},
		{Surface: core.SurfaceTelegram, ID: "U-alice"}, // her Slack id, on another surface
	} {
		if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: "pg"}); core.ErrorCode(err) != core.CodeForbidden {
			t.Fatalf("%+v answered alice's question: %v", d, err)
		}
	}
	evs := e.events(q.ID)
	for _, ev := range evs[1:] {
		if ev.Kind != core.EventRefused || ev.Actor == actor {
			t.Fatalf("refusal %+v: want refused, not under alice's actor", ev)
		}
	}
	if got := e.get(q.ID); !got.Open() {
		t.Fatalf("refused attempts closed the question: %s", got.State)
	}
}

func testGroupMembers(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("leads"))
	carol := core.Decider{Surface: core.SurfaceDiscord, ID: "1003"}
	bobSlack := core.Decider{Surface: core.SurfaceSlack, ID: "U-bob"}
	bobDiscord := core.Decider{Surface: core.SurfaceDiscord, ID: "U-bob"} // not Bob's: he has no Discord id
	for _, c := range []struct {
		d    core.Decider
		want bool
	}{{carol, true}, {bobSlack, true}, {bobDiscord, false}, {aliceOn(core.SurfaceTelegram), true}} {
		if got := e.svc.MayAnswer(q, c.d); got != c.want {
			t.Fatalf("MayAnswer(%+v) = %v, want %v", c.d, got, c.want)
		}
	}
	// Routes that name accounts still work alongside: ops lists U1 on
	// Slack, and people are not let in there by being people.
	ops := e.ask(decision("ops"))
	if e.svc.MayAnswer(ops, bobSlack) {
		t.Fatal("bob may answer on ops, which names no people")
	}
	o, err := e.svc.Decline(t.Context(), q.ID, carol)
	if err != nil || o.Question.Resolution.Decider.Person != "carol" {
		t.Fatalf("carol's decline: %v %+v", err, o.Question)
	}
}

func testDigestPerson(t *testing.T, h Harness) {
	e := newEnv(t, h)
	leads := e.ask(decision("leads"))
	ops := e.ask(decision("ops"))
	def := e.ask(clarification("run-9"))
	e.clock.Advance(time.Minute)
	digest := func(dq core.DigestQuery) []core.QuestionID {
		t.Helper()
		dq.From = epoch
		d, err := e.svc.Digest(t.Context(), dq)
		if err != nil {
			t.Fatalf("digest %+v: %v", dq, err)
		}
		var ids []core.QuestionID
		for _, q := range d.Open {
			ids = append(ids, q.ID)
		}
		return ids
	}
	// Alice may answer on leads (by name), and on ops and the default
	// route through her API token, as anyone with a token may.
	if got := digest(core.DigestQuery{Person: "alice"}); !sameSet(got, leads.ID, ops.ID, def.ID) {
		t.Fatalf("alice's digest %v, want all three", got)
	}
	// Bob and Carol are infra, without API tokens: leads alone.
	for _, p := range []string{"bob", "carol"} {
		if got := digest(core.DigestQuery{Person: p}); !sameSet(got, leads.ID) {
			t.Fatalf("%s's digest %v, want %s", p, got, leads.ID)
		}
	}
	// A decider's roles count: S-leads may answer on ops.
	lead := core.Decider{Surface: core.SurfaceSlack, ID: "U-someone", Roles: []string{"S-leads"}}
	if got := digest(core.DigestQuery{Decider: &lead}); !sameSet(got, ops.ID) {
		t.Fatalf("role holder's digest %v, want %s", got, ops.ID)
	}
	if _, err := e.svc.Digest(t.Context(), core.DigestQuery{From: epoch, Person: "mallory"}); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("digest of an unknown person: %v, want invalid", err)
	}
}

func sameSet(got []core.QuestionID, want ...core.QuestionID) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[core.QuestionID]bool{}
	for _, g := range got {
		seen[g] = true
	}
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}
