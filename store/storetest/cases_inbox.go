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
	want := append(append([]core.QuestionID{}, hard...), soft...)
	var got []core.QuestionID
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		p, err := e.svc.OpenPage(t.Context(), f, cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Questions) > 3 || p.Total != len(want) {
			t.Fatalf("page of %d with total %d, want at most 3 of %d", len(p.Questions), p.Total, len(want))
		}
		for _, q := range p.Questions {
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
