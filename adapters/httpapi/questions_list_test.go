package httpapi_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

func TestList(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx()
	var ids []core.QuestionID
	for i := 0; i < 5; i++ {
		req := clarification("run-1")
		req.ToolCallID = nextCall()
		req.Reversibility = core.Reversible
		if i == 3 {
			req.Reversibility = core.HardToReverse
		}
		q, err := e.as(agentA).Ask(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.ID)
	}
	var got []core.QuestionID
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := e.as(observer).List(ctx, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Questions) > 2 || pages > 5 {
			t.Fatalf("page of %d", len(page.Questions))
		}
		for _, q := range page.Questions {
			got = append(got, q.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if got[0] != ids[3] || len(got) != 5 {
		t.Fatalf("list order %v; asked %v (the hard-to-reverse one is %s)", got, ids, ids[3])
	}

	for _, c := range []struct{ query, want string }{
		{"state=answered", "only state=open"},
		{"limit=0", "limit"},
		{"limit=501", "limit"},
		{"limit=ten", "limit"},
	} {
		r := e.do("GET", "/v1/questions?"+c.query, &operator, "")
		if r.status != 400 || !strings.Contains(errorOf(t, r).Message, c.want) {
			t.Errorf("%s: %d %s", c.query, r.status, r.body)
		}
	}
	r := e.do("GET", "/v1/questions", &operator, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"next_cursor":""`) {
		t.Errorf("list without parameters: %d %s", r.status, r.body)
	}
}
