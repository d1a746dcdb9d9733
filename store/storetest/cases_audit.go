package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/internal/coretest"
)

// AuditKey is the audit key a harness opens its stores with, so that
// the suite can verify their chains: coretest's, which its stores use.
const AuditKey = coretest.AuditKey

func init() {
	register("AuditChainVerifiesAndSurvivesAPurge", testAuditChain)
}

// testAuditChain: every event a store appends, whatever wrote it (an
// ask, an answer, a refusal, a card recorded, a decline, a purge), is
// chained so that one verifier checks it, before and after a purge and a
// restart; the wrong key does not verify it.
func testAuditChain(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	key := audit.Key(AuditKey)
	verify := func(k audit.Key, when string) audit.Report {
		t.Helper()
		rep, err := audit.Verify(k, audit.StoreWalk(ctx, e.store), audit.Options{})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		return rep
	}
	by := core.Decider{Surface: core.SurfaceAPI, ID: "ops"}
	old := e.ask(clarification("run-1"))
	kept := e.ask(clarification("run-1"))
	if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: old.ID, Decider: by, Text: "yes"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: old.ID, Decider: by, Text: "again"}); err == nil {
		t.Fatal("a second answer was accepted")
	}
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1.2", Delivery: string(kept.ID) + ":post:slack:C1", Kind: core.DeliverPost, At: e.clock.Now()}
	if err := e.store.RecordMessage(ctx, kept.ID, ref, core.Event{QuestionID: kept.ID, At: e.clock.Now(), Kind: core.EventNotified}); err != nil {
		t.Fatal(err)
	}
	rep := verify(key, "before the purge")
	if rep.Break != nil || rep.Events < 5 || rep.Unchained != 0 {
		t.Fatalf("before the purge: %+v", rep)
	}
	if bad := verify(audit.Key("another key"), "under another key"); bad.Break == nil {
		t.Fatal("the chain verified under another key")
	}

	e.clock.Advance(31 * 24 * time.Hour) // old closed 31 days ago
	if n, err := e.svc.Purge(ctx); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if _, err := e.svc.Decline(ctx, kept.ID, by); err != nil {
		t.Fatal(err)
	}
	e.restart()
	rep = verify(key, "after the purge")
	if rep.Break != nil || rep.Checkpoints != 1 {
		t.Fatalf("after the purge: %+v", rep)
	}
	// The checkpoint holds its runs under the keyed digest too (its
	// payload), not only in the unkeyed link.
	evs, err := e.store.Events(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind != core.EventCheckpoint {
			continue
		}
		var p struct {
			Purged string `json:"purged"`
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil || ev.Chain == nil || p.Purged == "" || p.Purged != ev.Chain.Purged {
			t.Fatalf("the checkpoint's payload %s and its chain %+v: want the same runs in both", ev.Payload, ev.Chain)
		}
	}

	// A later purge drops the rest, the first checkpoint with them (it is
	// dated by the store's own clock, which the simulated one passes
	// here): the new checkpoint carries its runs, and the log verifies.
	e.clock.Advance(time.Since(e.clock.Now()) + 31*24*time.Hour)
	if n, err := e.svc.Purge(ctx); err != nil || n != 1 {
		t.Fatalf("second purge: %d, %v", n, err)
	}
	rep = verify(key, "after the second purge")
	if rep.Break != nil || rep.Checkpoints != 1 || rep.Events != 1 {
		t.Fatalf("after the second purge: %+v", rep)
	}
}
