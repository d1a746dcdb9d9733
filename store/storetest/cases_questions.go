package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register("AskStoresQuestionEventAndDeliveries", testAsk)
	register("ReopenKeepsQuestionAndDeliveries", testReopen)
	register("RaceHundredResolvers", testRace)
	register("FormAnsweredInTwoStepsAcrossRestart", testForm)
	registerDomain("DeclineAndCancel", testDeclineCancel)
	register("EndRunExpiresAndRefusesLateAnswers", testExpiry)
	registerDomain("UnauthorisedAttemptChangesNothing", testUnauthorised)
	registerDomain("ApprovalEchoesArgumentHash", testApproval)
	register("RecordMessageIsIdempotentAndCloseEditsCards", testMessages)
	register("CardRecordedAfterCloseIsEdited", testLateCard)
	register("CardsWithoutADeliveryKeyAreEachRecorded", testKeylessCards)
	register("EndRunNeedsARunID", testEndRunNeedsID)
	registerDomain("BadInputChangesNothing", testBadInput)
}

func testAsk(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	if !core.ValidID(q.ID) || q.State != core.StateOpen {
		t.Fatalf("asked question: id %q state %q", q.ID, q.State)
	}
	if diff := cmp.Diff(q, e.get(q.ID)); diff != "" {
		t.Fatalf("stored question differs (-asked +stored):\n%s", diff)
	}
	if got := coretest.Kinds(e.events(q.ID)); !cmp.Equal(got, []core.EventKind{core.EventAsked}) {
		t.Fatalf("events = %v, want [asked]", got)
	}
	for _, s := range []core.Surface{core.SurfaceSlack, core.SurfaceTelegram} {
		ds := e.claimAll(s, "c1")
		if len(ds) != 1 || ds[0].Kind != core.DeliverPost || ds[0].QuestionID != q.ID || ds[0].Key == "" {
			t.Fatalf("%s deliveries = %+v, want one post for %s", s, ds, q.ID)
		}
	}
	if ds := e.claimAll(core.SurfaceDiscord, "c1"); len(ds) != 0 {
		t.Fatalf("discord is not on the route, got %+v", ds)
	}
	// A second question for the same run is fine; ids never repeat.
	if q2 := e.ask(decision("ops")); q2.ID == q.ID {
		t.Fatal("two questions got the same id")
	}
}

func testReopen(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	e.restart()
	if diff := cmp.Diff(q, e.get(q.ID)); diff != "" {
		t.Fatalf("question changed across restart (-before +after):\n%s", diff)
	}
	ds := e.claimAll(core.SurfaceSlack, "after-restart")
	if len(ds) != 1 || ds[0].QuestionID != q.ID || ds[0].Kind != core.DeliverPost {
		t.Fatalf("deliveries after restart = %+v", ds)
	}
	open, _, err := e.svc.ListOpen(t.Context(), "", 10)
	if err != nil || len(open) != 1 || open[0].ID != q.ID {
		t.Fatalf("open after restart = %v, %v", open, err)
	}
}

// testRace is law 2: a hundred resolvers, one outcome, and every loser is
// told who won.
func testRace(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(clarification("run-race"))
	const n = 100
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		losers  []*core.ClosedError
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d := apiDecider(fmt.Sprintf("op-%d", i))
			o, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: d, Text: "eu-west-1 from " + d.ID})
			mu.Lock()
			defer mu.Unlock()
			var closed *core.ClosedError
			switch {
			case err == nil && o.Closed:
				winners = append(winners, d.ID)
			case errors.As(err, &closed):
				losers = append(losers, closed)
			default:
				t.Errorf("resolver %d: outcome %+v, err %v", i, o, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 || len(losers) != n-1 {
		t.Fatalf("winners %d, losers %d; want 1 and %d", len(winners), len(losers), n-1)
	}
	for _, l := range losers {
		r := l.Question.Resolution
		if l.Question.State != core.StateAnswered || r == nil || r.Decider.ID != winners[0] {
			t.Fatalf("a loser was told %+v, want closed by %s", r, winners[0])
		}
	}
	stored := e.get(q.ID)
	if stored.Resolution.Answer != "eu-west-1 from "+winners[0] {
		t.Fatalf("recorded answer %q is not the winner's", stored.Resolution.Answer)
	}
	counts := map[core.EventKind]int{}
	for _, ev := range e.events(q.ID) {
		counts[ev.Kind]++
	}
	if counts[core.EventAnswered] != 1 || counts[core.EventRefused] != n-1 {
		t.Fatalf("events %v, want 1 answered and %d refused", counts, n-1)
	}
}

func testForm(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(form())
	lead := core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Ada"}
	o, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: lead,
		Items: []core.ItemInput{{ItemID: "day", OptionID: "fri"}}})
	if err != nil || o.Closed || len(o.Question.Answers) != 1 || o.Question.State != core.StateOpen {
		t.Fatalf("first item: %+v, %v", o, err)
	}
	e.restart()
	half := e.get(q.ID)
	if half.State != core.StateOpen || len(half.Answers) != 1 || half.Answers[0].OptionID != "fri" || half.Answers[0].Decider.ID != "U1" {
		t.Fatalf("half-answered form after restart: state %s answers %+v", half.State, half.Answers)
	}
	// The same item cannot be answered twice, and the refusal changes nothing.
	_, err = e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: lead,
		Items: []core.ItemInput{{ItemID: "day", OptionID: "mon"}}})
	if core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("answering an answered item: %v, want conflict", err)
	}
	if again := e.get(q.ID); again.Answers[0].OptionID != "fri" {
		t.Fatalf("a refused item answer changed the record: %+v", again.Answers)
	}
	o, err = e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: lead,
		Items: []core.ItemInput{{ItemID: "notes", Text: "Short, and link the changelog"}}})
	if err != nil || !o.Closed {
		t.Fatalf("second item: %+v, %v", o, err)
	}
	done := e.get(q.ID)
	if done.State != core.StateAnswered || done.Resolution == nil || done.Resolution.Decider.ID != "U1" {
		t.Fatalf("closed form: %+v", done)
	}
	want := []core.ItemAnswer{
		{ItemID: "day", OptionID: "fri", Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Ada"}, At: epoch},
		{ItemID: "notes", Text: "Short, and link the changelog", Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Ada"}, At: epoch},
	}
	if diff := cmp.Diff(want, done.Answers); diff != "" {
		t.Fatalf("answers (-want +got):\n%s", diff)
	}
	wantKinds := []core.EventKind{core.EventAsked, core.EventItemAnswered, core.EventAnswered}
	if got := coretest.Kinds(e.events(q.ID)); !cmp.Equal(got, wantKinds) {
		t.Fatalf("events %v, want %v", got, wantKinds)
	}
}

func testDeclineCancel(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q1 := e.ask(clarification("run-1"))
	o, err := e.svc.Decline(t.Context(), q1.ID, apiDecider("op"))
	if err != nil || !o.Closed || o.Question.State != core.StateDeclined || o.Question.Resolution.Answer != "" {
		t.Fatalf("decline: %+v, %v", o, err)
	}
	q2 := e.ask(clarification("run-1"))
	// Another agent cannot see the question, let alone cancel it.
	if _, err := e.svc.Cancel(t.Context(), core.CancelInput{QuestionID: q2.ID, By: agentDecider("agent-b"), Owner: "agent-b"}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("cancel by another agent: %v, want not found", err)
	}
	o, err = e.svc.Cancel(t.Context(), core.CancelInput{QuestionID: q2.ID, By: agentDecider("agent-a"), Owner: "agent-a", Reason: "found the answer in the docs"})
	if err != nil || o.Question.State != core.StateCancelled || o.Question.Resolution.Reason != "found the answer in the docs" {
		t.Fatalf("cancel: %+v, %v", o, err)
	}
	if got := coretest.Kinds(e.events(q2.ID)); !cmp.Equal(got, []core.EventKind{core.EventAsked, core.EventCancelled}) {
		t.Fatalf("events %v", got)
	}
}

func testExpiry(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(clarification("run-x"))
	other := e.ask(clarification("run-y"))
	outs, err := e.svc.EndRun(t.Context(), core.Run{Agent: "agent-a", ID: "run-x"})
	if err != nil || len(outs) != 1 || outs[0].Question.ID != q.ID || outs[0].Question.State != core.StateExpired {
		t.Fatalf("end run: %+v, %v", outs, err)
	}
	if e.get(other.ID).State != core.StateOpen {
		t.Fatal("ending one run expired another run's question")
	}
	_, err = e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("late"), Text: "too late"})
	var closed *core.ClosedError
	if !errors.As(err, &closed) || closed.Question.State != core.StateExpired {
		t.Fatalf("late answer: %v, want a ClosedError saying expired", err)
	}
	evs := e.events(q.ID)
	if got := coretest.Kinds(evs); !cmp.Equal(got, []core.EventKind{core.EventAsked, core.EventExpired, core.EventRefused}) {
		t.Fatalf("events %v", got)
	}
	if evs[2].Reason == "" || evs[2].Actor == "" || evs[2].Actor == "late" {
		t.Fatalf("refused event must say why and name the actor by pseudonym: %+v", evs[2])
	}
	// The run stays ended: a new question for it is refused.
	if _, err := e.svc.Ask(t.Context(), clarification("run-x")); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("ask into an ended run: %v, want conflict", err)
	}
	// Runs are each agent's own: another agent's run of the same name is
	// neither expired nor closed to asks, and it cannot end agent-a's.
	b := clarification("run-y")
	b.Agent = "agent-b"
	qb := e.ask(b)
	if outs, err := e.svc.EndRun(t.Context(), core.Run{Agent: "agent-b", ID: "run-y"}); err != nil || len(outs) != 1 || outs[0].Question.ID != qb.ID {
		t.Fatalf("agent-b ending its run-y: %+v, %v", outs, err)
	}
	if e.get(other.ID).State != core.StateOpen {
		t.Fatal("agent-b's run end expired agent-a's question")
	}
	if _, err := e.svc.Ask(t.Context(), clarification("run-y")); err != nil {
		t.Fatalf("agent-a asking in its own run-y after agent-b ended theirs: %v", err)
	}
}

func testUnauthorised(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	stranger := core.Decider{Surface: core.SurfaceSlack, ID: "U666", Name: "Mallory"}
	_, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: stranger, OptionID: "pg"})
	if core.ErrorCode(err) != core.CodeForbidden {
		t.Fatalf("stranger's answer: %v, want forbidden", err)
	}
	// Discord is not listed on the route at all: everyone there is refused.
	_, err = e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: "pg",
		Decider: core.Decider{Surface: core.SurfaceDiscord, ID: "boss"}})
	if core.ErrorCode(err) != core.CodeForbidden {
		t.Fatalf("unlisted surface: %v, want forbidden", err)
	}
	if got := e.get(q.ID); got.State != core.StateOpen || got.Resolution != nil {
		t.Fatalf("a refused attempt changed the question: %+v", got)
	}
	if got := coretest.Kinds(e.events(q.ID)); !cmp.Equal(got, []core.EventKind{core.EventAsked, core.EventRefused, core.EventRefused}) {
		t.Fatalf("events %v", got)
	}
	// A group member may answer through their role.
	member := core.Decider{Surface: core.SurfaceSlack, ID: "U2", Name: "Grace", Roles: []string{"S-leads"}}
	o, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: member, OptionID: "ddb"})
	if err != nil || o.Question.Resolution.Answer != q.Options[1].Writeup || o.Question.Resolution.OptionID != "ddb" {
		t.Fatalf("role member's answer: %+v, %v", o, err)
	}
}

func testApproval(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Drop the staging table?",
		Reversibility: core.HardToReverse, Tool: "sql.exec", Arguments: []byte(`{"sql": "DROP TABLE t", "db":"staging"}`)}
	q := e.ask(in)
	// Canonical: key order and spacing do not change the hash.
	sum, _, err := core.HashArguments([]byte(`{"db":"staging","sql":"DROP TABLE t"}`))
	if err != nil || q.Call.ArgumentsSHA256 != sum {
		t.Fatalf("hash %q, want %q (%v)", q.Call.ArgumentsSHA256, sum, err)
	}
	o, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), OptionID: core.DenyOption, Text: "not on a Friday"})
	if err != nil {
		t.Fatal(err)
	}
	r := e.get(q.ID).Resolution
	if r.Approved == nil || *r.Approved || r.Reason != "not on a Friday" || r.ArgumentsSHA256 != sum || o.Question.Resolution.ArgumentsSHA256 != sum {
		t.Fatalf("resolution %+v", r)
	}
}

func testMessages(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	post := e.claimAll(core.SurfaceSlack, "c1")[0]
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700000000.000100", Delivery: post.Key}
	if err := e.svc.RecordMessage(t.Context(), q.ID, ref); err != nil {
		t.Fatal(err)
	}
	// A repeat of the same delivery is recognised, not recorded twice.
	ref2 := ref
	ref2.ID = "1700000000.000200"
	if err := e.svc.RecordMessage(t.Context(), q.ID, ref2); err != nil {
		t.Fatalf("repeat record: %v", err)
	}
	if got := e.get(q.ID); len(got.Messages) != 1 || got.Messages[0].ID != ref.ID {
		t.Fatalf("after a repeat record: %+v", got.Messages)
	}
	tg := core.MessageRef{Surface: core.SurfaceTelegram, Room: "-1001", ID: "42", Delivery: string(q.ID) + ":post:telegram:-1001"}
	if err := e.svc.RecordMessage(t.Context(), q.ID, tg); err != nil {
		t.Fatal(err)
	}
	if got := coretest.Kinds(e.events(q.ID)); !cmp.Equal(got, []core.EventKind{core.EventAsked, core.EventNotified, core.EventNotified}) {
		t.Fatalf("events %v", got)
	}
	e.claimAll(core.SurfaceTelegram, "c1")
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), OptionID: "pg"}); err != nil {
		t.Fatal(err)
	}
	// Closing enqueues an edit for every card, on its own surface.
	for _, want := range []core.MessageRef{ref, tg} {
		ds := e.claimAll(want.Surface, "c1")
		if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].Message == nil ||
			ds[0].Message.ID != want.ID || ds[0].Message.Room != want.Room || ds[0].QuestionID != q.ID {
			t.Fatalf("%s after close: %+v", want.Surface, ds)
		}
	}
}

// testKeylessCards: only a card's delivery key makes a repeat; two cards
// recorded without one are two cards.
func testKeylessCards(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	q := e.ask(decision("ops"))
	for _, id := range []string{"1.1", "1.2"} {
		ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: id, Kind: core.DeliverPost, At: e.clock.Now()}
		if err := e.store.RecordMessage(ctx, q.ID, ref, core.Event{QuestionID: q.ID, At: e.clock.Now(), Kind: core.EventNotified}); err != nil {
			t.Fatalf("record card %s: %v", id, err)
		}
	}
	got := e.get(q.ID)
	if len(got.Messages) != 2 || got.Messages[0].ID != "1.1" || got.Messages[1].ID != "1.2" {
		t.Fatalf("cards recorded without a delivery key: %+v", got.Messages)
	}
}

// testEndRunNeedsID: ending the run "" is refused, and ends nothing.
func testEndRunNeedsID(t *testing.T, h Harness) {
	e := newEnv(t, h)
	if ids, err := e.store.EndRun(t.Context(), "", e.clock.Now()); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("EndRun(\"\") = %v, %v; want invalid", ids, err)
	}
}

func testBadInput(t *testing.T, h Harness) {
	e := newEnv(t, h)
	bad := decision("ops")
	bad.Options[1].Recommended = true
	if _, err := e.svc.Ask(t.Context(), bad); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("two recommended options: %v, want invalid", err)
	}
	unknownRoute := clarification("run-1")
	unknownRoute.Route = "nowhere"
	if _, err := e.svc.Ask(t.Context(), unknownRoute); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("unknown route: %v, want invalid", err)
	}
	evs, err := e.store.Events(t.Context(), 0, 10)
	if err != nil || len(evs) != 0 {
		t.Fatalf("bad input left events: %v, %v", evs, err)
	}
	if ds := e.claimAll(core.SurfaceSlack, "c1"); len(ds) != 0 {
		t.Fatalf("bad input left deliveries: %+v", ds)
	}
	q := e.ask(decision("ops"))
	_, err = e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), OptionID: "mysql"})
	if core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("unknown option: %v, want invalid", err)
	}
	if _, err := e.svc.Get(t.Context(), "aaaaaaaaaaaaaaaaa"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if got := e.get(q.ID); got.State != core.StateOpen {
		t.Fatal("an invalid answer closed the question")
	}
}

// testLateCard: a card whose post raced the close is recorded after it, and
// must still be edited to show the outcome.
func testLateCard(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	e.claimAll(core.SurfaceSlack, "c")
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), OptionID: "pg"}); err != nil {
		t.Fatal(err)
	}
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700000000.000300", Delivery: string(q.ID) + ":post:slack:C1"}
	if err := e.svc.RecordMessage(t.Context(), q.ID, ref); err != nil {
		t.Fatalf("late record: %v", err)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || len(got.Messages) != 1 {
		t.Fatalf("after a late record: %+v", got)
	}
	ds := e.claimAll(core.SurfaceSlack, "c")
	if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].Message == nil || ds[0].Message.ID != ref.ID {
		t.Fatalf("deliveries after a late card: %+v", ds)
	}

	// The same for a form whose first item was answered while its card
	// was on the way: the card must come to show the progress.
	f := e.ask(form())
	e.claimAll(core.SurfaceSlack, "c")
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: f.ID, Decider: apiDecider("op"),
		Items: []core.ItemInput{{ItemID: "day", OptionID: "mon"}}}); err != nil {
		t.Fatal(err)
	}
	fref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700000000.000400", Delivery: string(f.ID) + ":post:slack:C1"}
	if err := e.svc.RecordMessage(t.Context(), f.ID, fref); err != nil {
		t.Fatal(err)
	}
	ds = e.claimAll(core.SurfaceSlack, "c")
	if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].Message == nil || ds[0].Message.ID != fref.ID {
		t.Fatalf("deliveries after a late form card: %+v", ds)
	}
}
