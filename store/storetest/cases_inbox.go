package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("open page filters, counts and pages in the open order", testOpenPage)
	register("open page refuses a bad filter or cursor", testOpenPageRefuses)
	register("open page with no filter lists and counts every open question", testOpenPageAll)
}

// testOpenPage is the inbox's read: the matches of a filter, in ListOpen's
// order, a page at a time, with the total of every page together; closed
// questions and those the filter leaves out are neither listed nor
// counted.
func testOpenPage(t *testing.T, h Harness) {
	e := newEnv(t, h)
	var hard, soft []core.QuestionID
	for i := range 9 {
		in := clarification("run-1")
		if i%3 == 0 {
			in.Reversibility = core.Reversible
		}
		if i == 4 {
			in.Agent = "agent-b"
		}
		q := e.ask(in)
		if in.Agent != "agent-a" {
			e.clock.Advance(time.Second)
			continue
		}
		if i%3 == 0 {
			soft = append(soft, q.ID)
		} else {
			hard = append(hard, q.ID)
		}
		e.clock.Advance(time.Second)
	}
	other := e.ask(decision("ops")) // another kind, agent-a
	closed := e.ask(clarification("run-1"))
	if _, err := e.svc.Decline(t.Context(), closed.ID, apiDecider("op")); err != nil {
		t.Fatal(err)
	}
	f := core.OpenFilter{Kind: string(core.KindClarification), Agent: "agent-a"}
	pageThrough(t, e, f, 3, append(append([]core.QuestionID{}, hard...), soft...))
	p, err := e.svc.OpenPage(t.Context(), core.OpenFilter{Reversibility: core.Reversible}, "", 0)
	if err != nil || p.Total != len(soft) || p.Next != "" {
		t.Fatalf("reversible ones: total %d next %q, %v; want %d", p.Total, p.Next, err, len(soft))
	}
	p, err = e.svc.OpenPage(t.Context(), core.OpenFilter{Route: "ops"}, "", 0)
	if err != nil || p.Total != 1 || p.Questions[0].ID != other.ID {
		t.Fatalf("route ops: %+v, %v", p, err)
	}
}

func testOpenPageRefuses(t *testing.T, h Harness) {
	e := newEnv(t, h)
	e.ask(clarification("run-1"))
	for name, f := range map[string]core.OpenFilter{"kind": {Kind: "poll"}, "reversibility": {Reversibility: "maybe"}} {
		if _, err := e.svc.OpenPage(t.Context(), f, "", 10); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("bad %s: %v, want invalid", name, err)
		}
	}
	if _, err := e.svc.OpenPage(t.Context(), core.OpenFilter{}, "%%", 10); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("bad cursor: %v, want invalid", err)
	}
}

// testOpenPageAll is the inbox as it opens, with no filter: every open
// question in ListOpen's order, a page at a time, each page counting all
// of them; the closed ones (which the Redis store's index may still hold)
// neither listed nor counted. A store may count these without reading
// each question, so it is a case of its own.
func testOpenPageAll(t *testing.T, h Harness) {
	e := newEnv(t, h)
	for i := range 7 {
		in := clarification("run-1")
		if i%2 == 0 {
			in.Reversibility = core.Reversible
		}
		q := e.ask(in)
		if i%3 == 1 {
			if _, err := e.svc.Decline(t.Context(), q.ID, apiDecider("op")); err != nil {
				t.Fatal(err)
			}
		}
		e.clock.Advance(time.Second)
	}
	open, _, err := e.svc.ListOpen(t.Context(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var want []core.QuestionID
	for _, q := range open {
		want = append(want, q.ID)
	}
	if len(want) != 5 {
		t.Fatalf("%d open, want 5", len(want))
	}
	pageThrough(t, e, core.OpenFilter{}, 2, want)
	p, err := e.svc.OpenPage(t.Context(), core.OpenFilter{}, "", 0)
	if err != nil || p.Total != len(want) || len(p.Questions) != len(want) || p.Next != "" {
		t.Fatalf("one page of all: %d listed, total %d, next %q, %v", len(p.Questions), p.Total, p.Next, err)
	}
}

// pageThrough reads every page of f's open questions, limit at a time,
// and fails unless they are want, in order, each page no longer than
// limit, counting all of them and saying whether another follows.
func pageThrough(t *testing.T, e *env, f core.OpenFilter, limit int, want []core.QuestionID) {
	t.Helper()
	var got []core.QuestionID
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		p, err := e.svc.OpenPage(t.Context(), f, cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Questions) > limit || p.Total != len(want) || (p.Next == "") != (len(got)+len(p.Questions) == len(want)) {
			t.Fatalf("page of %d, total %d, next %q after %d; want at most %d of %d", len(p.Questions), p.Total, p.Next, len(got), limit, len(want))
		}
		for _, q := range p.Questions {
			if !q.Open() || q.Text == "" {
				t.Fatalf("listed %s: state %s, text %q", q.ID, q.State, q.Text)
			}
			got = append(got, q.ID)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("open page order (-want +got):\n%s", diff)
	}
}
