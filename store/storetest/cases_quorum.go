package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

func init() {
	registerDomain("QuorumApprovalAcrossSurfaces", testQuorumApproval)
	register("QuorumDoubleVoteCountsOnce", testQuorumDoubleVote)
	registerDomain("QuorumVetoAndCount", testQuorumDeny)
	registerDomain("QuorumDecision", testQuorumDecision)
	registerDomain("QuorumAskWithinRoute", testQuorumAsk)
	registerDomain("QuorumTimeoutSaysHowFarItGot", testQuorumTimeout)
	register("QuorumRaceFiftyVotersThreeReplicas", testQuorumRace)
}

func approvalOn(route string) core.AskInput {
	return core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: nextCall(), Route: route,
		Text: "Drop the staging table?", Reversibility: core.HardToReverse,
		Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`)}
}

func (e *env) vote(id core.QuestionID, d core.Decider, choice, text string) (core.Outcome, error) {
	e.t.Helper()
	return e.svc.Answer(e.t.Context(), core.AnswerInput{QuestionID: id, Decider: d, OptionID: choice, Text: text})
}

var (
	bobTelegram = core.Decider{Surface: core.SurfaceTelegram, ID: "2002", Name: "bob on telegram"}
	bobSlack    = core.Decider{Surface: core.SurfaceSlack, ID: "U-bob", Name: "bob on slack"}
	carol       = core.Decider{Surface: core.SurfaceDiscord, ID: "1003", Name: "carol"}
)

// testQuorumApproval: Alice on Slack and Bob on Telegram approve; the
// first vote changes the cards, the second closes, and the resume says
// who voted what, fenced.
func testQuorumApproval(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(approvalOn("two"))
	if q.Quorum != 2 {
		t.Fatalf("quorum %d, want the route's 2", q.Quorum)
	}
	if err := e.svc.RecordMessage(t.Context(), q.ID, core.MessageRef{Surface: core.SurfaceSlack, Room: "C", ID: "1.1", Delivery: "d1"}); err != nil {
		t.Fatal(err)
	}
	e.claimAll(core.SurfaceSlack, "c")
	o, err := e.vote(q.ID, aliceOn(core.SurfaceSlack), core.ApproveOption, "fine by me")
	if err != nil || o.Closed || o.Question.State != core.StateOpen {
		t.Fatalf("first vote: %+v, %v; want the question still open", o, err)
	}
	if got := core.TallyOf(o.Question).Lines; !cmp.Equal(got, []string{"1 of 2 approvals: Alice Example"}) {
		t.Fatalf("tally after one vote %q", got)
	}
	// Every card is edited to show the vote.
	if ds := e.claimAll(core.SurfaceSlack, "c"); len(ds) != 1 || ds[0].Kind != core.DeliverUpdate {
		t.Fatalf("deliveries after a vote: %+v, want one card update", ds)
	}
	o, err = e.vote(q.ID, bobTelegram, core.ApproveOption, "")
	if err != nil || !o.Closed {
		t.Fatalf("second vote: %+v, %v; want it closed", o, err)
	}
	got := e.get(q.ID)
	r := got.Resolution
	if got.State != core.StateAnswered || r.Approved == nil || !*r.Approved || r.Decider.Person != "bob" {
		t.Fatalf("closed as %s %+v", got.State, r)
	}
	if len(got.Votes) != 2 || got.Votes[0].Key != "person:alice" || got.Votes[0].Text != "fine by me" || got.Votes[1].Key != "person:bob" {
		t.Fatalf("votes %+v", got.Votes)
	}
	res, err := core.ResumeOf(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Alice Example", "Bob", "fine by me", "2 voted"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("the resume does not say %q:\n%s", want, res.Text)
		}
	}
	if len(res.Structured.Votes) != 2 || res.Structured.Votes[0].Choice != core.ApproveOption {
		t.Fatalf("structured votes %+v", res.Structured.Votes)
	}
	kinds := coretest.Kinds(e.events(q.ID))
	want := []core.EventKind{core.EventAsked, core.EventNotified, core.EventVoted, core.EventAnswered}
	if !cmp.Equal(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if ds := e.claimAll(core.SurfaceSlack, "c"); len(ds) != 1 || ds[0].Kind != core.DeliverUpdate {
		t.Fatalf("deliveries after the close: %+v, want one card update", ds)
	}
	// A third vote is too late, and told so.
	if _, err := e.vote(q.ID, carol, core.ApproveOption, ""); !strings.Contains(fmt.Sprint(err), "already") {
		t.Fatalf("a vote after the close: %v", err)
	}
}

// testQuorumDoubleVote: Bob votes on Telegram, then on Slack: one vote,
// the second attempt told it already counted, and a refusal recorded.
func testQuorumDoubleVote(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(approvalOn("two"))
	if _, err := e.vote(q.ID, bobTelegram, core.ApproveOption, ""); err != nil {
		t.Fatal(err)
	}
	_, err := e.vote(q.ID, bobSlack, core.ApproveOption, "again")
	if core.ErrorCode(err) != core.CodeConflict || core.ErrorMessage(err) != core.AlreadyCountedMessage {
		t.Fatalf("a second vote by the same person: %v", err)
	}
	got := e.get(q.ID)
	if !got.Open() || len(got.Votes) != 1 {
		t.Fatalf("after a double vote: %s with %d votes", got.State, len(got.Votes))
	}
	kinds := coretest.Kinds(e.events(q.ID))
	if kinds[len(kinds)-1] != core.EventRefused {
		t.Fatalf("events %v: want the second attempt refused", kinds)
	}
	// The store refuses it on its own too, for the vote that raced past
	// the chokepoint's check: computed from the question as read before
	// Bob's first vote, it is stale.
	stale := *q
	c, err := core.Next(&stale, core.Transition{QuestionID: q.ID, Now: epoch,
		Vote: &core.Vote{Key: "person:bob", Choice: core.ApproveOption, Decider: bobSlack, At: epoch}, Needed: 2,
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: bobSlack, At: epoch}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.store.Commit(t.Context(), c)
	var staleErr *core.StaleError
	if core.ErrorCode(err) != core.CodeConflict || !errors.As(err, &staleErr) {
		t.Fatalf("the store took a second vote by one voter: %v", err)
	}
	if got := e.get(q.ID); len(got.Votes) != 1 || !got.Open() {
		t.Fatalf("after the store's refusal: %s with %d votes", got.State, len(got.Votes))
	}
}

func testQuorumDeny(t *testing.T, h Harness) {
	e := newEnv(t, h)
	// Veto: one deny closes it denied, whatever approvals came first.
	q := e.ask(approvalOn("two"))
	if _, err := e.vote(q.ID, aliceOn(core.SurfaceAPI), core.ApproveOption, ""); err != nil {
		t.Fatal(err)
	}
	o, err := e.vote(q.ID, carol, core.DenyOption, "not before the backup")
	if err != nil || !o.Closed || o.Question.Resolution.Approved == nil || *o.Question.Resolution.Approved {
		t.Fatalf("a veto: %+v, %v", o.Question, err)
	}
	// Count: a deny is counted; the question stays open while approval
	// can still reach two of three, and closes denied when it cannot.
	q = e.ask(approvalOn("two-count"))
	if o, err := e.vote(q.ID, carol, core.DenyOption, "no"); err != nil || o.Closed {
		t.Fatalf("one counted deny: %+v, %v; want still open", o.Question, err)
	}
	if lines := core.TallyOf(e.get(q.ID)).Lines; !cmp.Equal(lines, []string{"0 of 2 approvals", "1 deny: Carol"}) {
		t.Fatalf("tally %q", lines)
	}
	o, err = e.vote(q.ID, bobSlack, core.DenyOption, "")
	if err != nil || !o.Closed || *o.Question.Resolution.Approved {
		t.Fatalf("second counted deny: %+v, %v; want closed denied", o.Question, err)
	}
	// Count, approved: one deny, then two approvals.
	q = e.ask(approvalOn("two-count"))
	for i, v := range []struct {
		d      core.Decider
		choice string
	}{{carol, core.DenyOption}, {bobSlack, core.ApproveOption}, {aliceOn(core.SurfaceDiscord), core.ApproveOption}} {
		o, err := e.vote(q.ID, v.d, v.choice, "")
		if err != nil || o.Closed != (i == 2) {
			t.Fatalf("vote %d: closed %v, %v", i, o.Closed, err)
		}
	}
	if r := e.get(q.ID).Resolution; r.Approved == nil || !*r.Approved {
		t.Fatalf("two approvals under count: %+v", r)
	}
}

func testQuorumDecision(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("two"))
	for i, v := range []struct {
		d   core.Decider
		opt string
	}{{aliceOn(core.SurfaceSlack), "pg"}, {carol, "ddb"}, {bobTelegram, "ddb"}} {
		o, err := e.vote(q.ID, v.d, v.opt, "note "+v.d.ID)
		if err != nil || o.Closed != (i == 2) {
			t.Fatalf("vote %d: closed %v, %v", i, o.Closed, err)
		}
	}
	got := e.get(q.ID)
	if got.Resolution.OptionID != "ddb" || len(got.Votes) != 3 {
		t.Fatalf("decision closed with %+v and %d votes", got.Resolution, len(got.Votes))
	}
	lines := core.TallyOf(got).Lines
	if !cmp.Equal(lines, []string{"1 of 2 for PostgreSQL: Alice Example", "2 of 2 for DynamoDB: Bob, Carol"}) {
		t.Fatalf("tally %q", lines)
	}
	res, err := core.ResumeOf(got)
	if err != nil || res.Structured.ChosenOptionID != "ddb" || len(res.Structured.Votes) != 3 {
		t.Fatalf("resume %+v, %v", res.Structured, err)
	}
}

func testQuorumAsk(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := approvalOn("two")
	in.Quorum = 3
	if q := e.ask(in); q.Quorum != 3 {
		t.Fatalf("asked for 3, got %d", q.Quorum)
	}
	for _, c := range []struct {
		route  string
		kind   core.Kind
		quorum int
	}{{"two", core.KindApproval, 4}, {"two", core.KindApproval, 1}, {"ops", core.KindApproval, 2}, {"two", core.KindClarification, 2}} {
		in := approvalOn(c.route)
		if c.kind == core.KindClarification {
			in = clarification("run-1")
			in.Route = c.route
		}
		in.Quorum = c.quorum
		if _, err := e.svc.Ask(t.Context(), in); core.ErrorCode(err) != core.CodeInvalid {
			t.Fatalf("quorum %d on %s (%s): %v, want invalid", c.quorum, c.route, c.kind, err)
		}
	}
	// The route's quorum does not apply to kinds that are not voted on.
	cl := clarification("run-1")
	cl.Route = "two"
	if q := e.ask(cl); q.Quorum != 0 {
		t.Fatalf("a clarification on a quorum route has quorum %d", q.Quorum)
	}
}

func testQuorumTimeout(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := approvalOn("two")
	in.Timeout = time.Hour
	q := e.ask(in)
	if _, err := e.vote(q.ID, aliceOn(core.SurfaceSlack), core.ApproveOption, ""); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if rep := e.tick(); rep.TimedOut != 1 {
		t.Fatalf("tick: %+v", rep)
	}
	got := e.get(q.ID)
	if got.State != core.StateTimedOut || !strings.Contains(got.Resolution.Reason, "1 of 2 approvals: Alice Example") {
		t.Fatalf("timed out with %+v", got.Resolution)
	}
	if line := card.OutcomeLine(got); !strings.Contains(line, "1 of 2 approvals") {
		t.Fatalf("the card's outcome line %q does not say how far it got", line)
	}
}

// testQuorumRace: 50 people vote at once through three replicas (three
// Services, each on a store of its own over the same data where the store
// allows it) on a quorum of 25; the question closes exactly once, at the
// 25th approval, and every vote before it is kept.
func testQuorumRace(t *testing.T, h Harness) {
	const voters, quorum = 50, 25
	ppl := map[string]core.Person{}
	var members []string
	for i := range voters {
		name := fmt.Sprintf("p%02d", i)
		ppl[name] = core.Person{DisplayName: "Person " + name, IDs: map[core.Surface][]string{
			core.ChatSurfaces[i%len(core.ChatSurfaces)]: {"id-" + name},
		}}
		members = append(members, name)
	}
	o := coretest.Options{
		Routes: map[string]core.Route{"crowd": {People: []string{"group:crowd"}, Quorum: quorum}},
		People: ppl, Groups: map[string]core.Group{"crowd": {Members: members}},
		Clock: core.NewSimClock(epoch),
	}
	st := h.Open(t)
	t.Cleanup(func() { st.Close() })
	replicas := []*core.Service{coretest.Service(t, st, o)}
	for range 2 {
		other := st
		if h.Replica != nil {
			other = h.Replica(t, st)
		}
		replicas = append(replicas, coretest.Service(t, other, o))
	}
	in := approvalOn("crowd")
	q, err := replicas[0].Ask(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg                    sync.WaitGroup
		mu                    sync.Mutex
		closed, counted, lost int
	)
	start := make(chan struct{})
	for i := range voters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("p%02d", i)
			d := core.Decider{Surface: core.ChatSurfaces[i%len(core.ChatSurfaces)], ID: "id-" + name}
			<-start
			out, err := replicas[i%len(replicas)].Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: core.ApproveOption})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && out.Closed:
				closed++
				counted++
			case err == nil:
				counted++
			case core.ErrorCode(err) == core.CodeConflict:
				lost++ // closed before this vote arrived
			default:
				t.Errorf("%s: %v", name, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if closed != 1 || counted != quorum || lost != voters-quorum {
		t.Fatalf("closed %d times, %d votes counted, %d too late; want 1, %d, %d", closed, counted, lost, quorum, voters-quorum)
	}
	got, err := replicas[1].Get(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != core.StateAnswered || len(got.Votes) != quorum || !*got.Resolution.Approved {
		t.Fatalf("after the race: %s with %d votes", got.State, len(got.Votes))
	}
	seen := map[string]bool{}
	for _, v := range got.Votes {
		if seen[v.Key] {
			t.Fatalf("%s voted twice", v.Key)
		}
		seen[v.Key] = true
	}
	kinds := coretest.Kinds(coretest.EventsOf(t, st, q.ID))
	var voted, answered int
	for _, k := range kinds {
		switch k {
		case core.EventVoted:
			voted++
		case core.EventAnswered:
			answered++
		}
	}
	if voted != quorum-1 || answered != 1 {
		t.Fatalf("%d voted and %d answered events, want %d and 1", voted, answered, quorum-1)
	}
}
