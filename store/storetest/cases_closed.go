package storetest

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register("SearchClosedPagesNewestFirst", testSearchClosedPages)
	register("SearchClosedFilters", testSearchClosedFilters)
	register("SearchClosedScanIsBounded", testSearchClosedScan)
}

// closedHistory closes questions of several kinds, routes and outcomes,
// a minute apart, and three in one millisecond (a tie in the closed
// index); it returns their ids, newest close first, and the open one.
func closedHistory(t *testing.T, e *env) (closed []core.QuestionID, open core.QuestionID) {
	t.Helper()
	ctx := t.Context()
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var ids []core.QuestionID
	q := e.ask(clarification("run-1"))
	_, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), Text: "eu-west"})
	check("answer", err)
	ids = append(ids, q.ID)

	e.clock.Advance(time.Minute)
	q = e.ask(approvalOn("two"))
	_, err = e.vote(q.ID, aliceOn(core.SurfaceSlack), core.ApproveOption, "")
	check("first vote", err)
	_, err = e.vote(q.ID, bobTelegram, core.ApproveOption, "")
	check("second vote", err)
	ids = append(ids, q.ID)

	e.clock.Advance(time.Minute)
	q = e.ask(approvalOn(core.DefaultRoute))
	_, err = e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), OptionID: core.DenyOption, Text: "not today"})
	check("deny", err)
	ids = append(ids, q.ID)

	e.clock.Advance(time.Minute)
	for range 3 { // one millisecond, three closes
		q = e.ask(decision(core.DefaultRoute))
		_, err = e.svc.Decline(ctx, q.ID, apiDecider("someone"))
		check("decline", err)
		ids = append(ids, q.ID)
	}

	e.clock.Advance(time.Minute)
	in := clarification("run-2")
	in.Agent, in.Timeout = "agent-b", time.Minute
	q = e.ask(in)
	e.clock.Advance(time.Minute)
	e.tick()
	ids = append(ids, q.ID)

	open = e.ask(clarification("run-3")).ID
	// Newest close first; the three of one millisecond by id, descending.
	slices.Reverse(ids)
	slices.SortStableFunc(ids[1:4], func(a, b core.QuestionID) int { return -strings.Compare(string(a), string(b)) })
	return ids, open
}

func searchAll(t *testing.T, e *env, cq core.ClosedQuery, limit int) []core.QuestionID {
	t.Helper()
	var ids []core.QuestionID
	cursor := ""
	for range 100 {
		p, err := e.svc.SearchClosed(t.Context(), cq, cursor, limit)
		if err != nil {
			t.Fatalf("search %+v: %v", cq, err)
		}
		if limit > 0 && len(p.Questions) > limit {
			t.Fatalf("a page of %d holds %d", limit, len(p.Questions))
		}
		for _, q := range p.Questions {
			ids = append(ids, q.ID)
		}
		if p.Next == "" {
			return ids
		}
		cursor = p.Next
	}
	t.Fatal("search never ended")
	return nil
}

// testSearchClosedPages: every closed question once, newest close first,
// through pages of any size, ties in one millisecond included; the open
// one never; a cursor the store did not make is refused.
func testSearchClosedPages(t *testing.T, h Harness) {
	e := newEnv(t, h)
	want, open := closedHistory(t, e)
	for _, limit := range []int{1, 2, 3, 50} {
		got := searchAll(t, e, core.ClosedQuery{}, limit)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("pages of %d (-want +got):\n%s", limit, d)
		}
		if slices.Contains(got, open) {
			t.Fatal("an open question was listed as closed")
		}
	}
	// After a restart the index reads the same.
	e.restart()
	if d := cmp.Diff(want, searchAll(t, e, core.ClosedQuery{}, 4)); d != "" {
		t.Fatalf("after a restart (-want +got):\n%s", d)
	}
	if _, err := e.svc.SearchClosed(t.Context(), core.ClosedQuery{}, "not-a-cursor!", 5); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("a forged cursor: %v, want invalid", err)
	}
	// A cursor is read from a URL: whatever it holds, it is refused as
	// invalid or read as a place in the index, never a failure of the
	// store, and a page never holds an open question.
	for _, raw := range []string{"", "|", "x|", "9|", "-1|", "99999999999999999999|a", "1|" + strings.Repeat("z", 300),
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00", strings.Repeat("\xff", 40)} {
		cursor := base64.RawURLEncoding.EncodeToString([]byte(raw))
		p, err := e.svc.SearchClosed(t.Context(), core.ClosedQuery{}, cursor, 5)
		if err != nil && core.ErrorCode(err) != core.CodeInvalid {
			t.Fatalf("cursor of %q: %v", raw, err)
		}
		for _, q := range p.Questions {
			if q.Open() {
				t.Fatalf("cursor of %q listed an open question", raw)
			}
		}
	}
}

// testSearchClosedFilters: each filter keeps what it says, and together
// they must all hold.
func testSearchClosedFilters(t *testing.T, h Harness) {
	e := newEnv(t, h)
	all, _ := closedHistory(t, e)
	timedOut, declined, denied, quorum, answered := all[0], all[1:4], all[4], all[5], all[6]
	at := func(i int) time.Time { return e.get(all[i]).Resolution.At }
	cases := []struct {
		name string
		cq   core.ClosedQuery
		want []core.QuestionID
	}{
		{"route", core.ClosedQuery{Route: "two"}, []core.QuestionID{quorum}},
		{"kind", core.ClosedQuery{Kind: core.KindDecision}, declined},
		{"agent", core.ClosedQuery{Agent: "agent-b"}, []core.QuestionID{timedOut}},
		{"approved", core.ClosedQuery{Outcome: core.ClosedApproved}, []core.QuestionID{quorum}},
		{"denied", core.ClosedQuery{Outcome: core.ClosedDenied}, []core.QuestionID{denied}},
		{"declined", core.ClosedQuery{Outcome: core.ClosedDeclined}, declined},
		{"answered", core.ClosedQuery{Outcome: core.ClosedAnswered}, []core.QuestionID{answered}},
		{"timed out", core.ClosedQuery{Outcome: core.ClosedTimedOut}, []core.QuestionID{timedOut}},
		{"closer", core.ClosedQuery{Closer: core.CloserQuorum}, []core.QuestionID{quorum}},
		{"closer person", core.ClosedQuery{Closer: core.CloserPerson}, []core.QuestionID{denied, answered}},
		{"a person who voted", core.ClosedQuery{Decider: "alice"}, []core.QuestionID{quorum}},
		{"a person by their other account", core.ClosedQuery{Decider: "bob"}, []core.QuestionID{quorum}},
		{"an account", core.ClosedQuery{Decider: "op"}, []core.QuestionID{denied, answered}},
		{"nobody decides a timeout", core.ClosedQuery{Decider: "askbridge"}, nil},
		{"text ignores case", core.ClosedQuery{Text: "STAGING table"}, []core.QuestionID{denied, quorum}},
		{"text in arguments", core.ClosedQuery{Text: "drop table t"}, []core.QuestionID{denied, quorum}},
		{"text in option titles", core.ClosedQuery{Text: "dynamodb"}, declined},
		{"from", core.ClosedQuery{From: at(4)}, all[:5]},
		{"to", core.ClosedQuery{To: at(4)}, all[5:]},
		{"range", core.ClosedQuery{From: at(5), To: at(1)}, all[4:6]},
		{"together", core.ClosedQuery{Kind: core.KindApproval, Text: "staging", Outcome: core.ClosedDenied}, []core.QuestionID{denied}},
		{"nothing", core.ClosedQuery{Route: "two", Outcome: core.ClosedDenied}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, limit := range []int{1, 50} {
				if d := cmp.Diff(c.want, searchAll(t, e, c.cq, limit)); d != "" {
					t.Fatalf("%+v, pages of %d (-want +got):\n%s", c.cq, limit, d)
				}
			}
		})
	}
	for _, bad := range []core.ClosedQuery{
		{Kind: "poll"}, {Outcome: "won"}, {Closer: "nobody"}, {From: at(0), To: at(6)},
	} {
		if _, err := e.svc.SearchClosed(t.Context(), bad, "", 5); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("%+v: %v, want invalid", bad, err)
		}
	}
}

// testSearchClosedScan: a page reads at most scan questions, so a search
// whose one match is the oldest close returns short pages, each saying
// how far it has read, until it reaches it.
func testSearchClosedScan(t *testing.T, h Harness) {
	e := newEnv(t, h)
	all, _ := closedHistory(t, e)
	oldest := all[len(all)-1]
	cq := core.ClosedQuery{Text: "Which region", Outcome: core.ClosedAnswered}
	var found []core.QuestionID
	cursor, pages := "", 0
	var readTo time.Time
	for {
		p, err := e.store.SearchClosed(t.Context(), cq, cursor, 10, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, q := range p.Questions {
			found = append(found, q.ID)
		}
		if p.Next == "" {
			break
		}
		if !readTo.IsZero() && p.ReadTo.After(readTo) {
			t.Fatalf("a later page read newer closes: %v after %v", p.ReadTo, readTo)
		}
		readTo = p.ReadTo
		cursor = p.Next
	}
	if d := cmp.Diff([]core.QuestionID{oldest}, found); d != "" {
		t.Fatalf("found (-want +got):\n%s", d)
	}
	// Seven closes, two read a page: four pages.
	if pages != 4 {
		t.Fatalf("%d pages, want 4", pages)
	}
}
