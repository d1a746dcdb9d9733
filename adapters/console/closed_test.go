package console_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

var apiOp = core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot", Name: "ops-bot"}

// closedSet asks and closes questions a minute apart: an approval of a
// terraform apply, approved; one denied; a clarification whose text a
// spreadsheet would run; and n plain answered ones. It returns the
// approval's and the formula's ids.
func closedSet(t *testing.T, e *env, n int) (tf, formula core.QuestionID) {
	t.Helper()
	ctx := t.Context()
	approve := func(text, tool, args, choice string) core.QuestionID {
		q := e.ask(core.AskInput{Kind: core.KindApproval, Text: text, Tool: tool, Arguments: []byte(args), Reversibility: core.HardToReverse})
		if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiOp, OptionID: choice}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Minute)
		return q.ID
	}
	for i := range n {
		q := e.ask(core.AskInput{Text: fmt.Sprintf("Plain question %d?", i)})
		if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiOp, Text: "yes"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Minute)
	}
	tf = approve("Apply the plan for prod?", "shell", `{"command":"terraform apply -auto-approve"}`, core.ApproveOption)
	approve("Delete the old bucket?", "shell", `{"command":"aws s3 rb s3://old"}`, core.DenyOption)
	q := e.ask(core.AskInput{Text: `=HYPERLINK("http://evil.example/","click")`})
	if _, err := e.svc.Decline(ctx, q.ID, apiOp); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	e.ask(core.AskInput{Text: "Still open: terraform apply on staging?"})
	return tf, q.ID
}

// TestClosedSearchFindsLastWeeksApproval: searching the history for a
// terraform apply that was approved finds it, linked to its page, and
// not the open one or the denied one; each filter narrows the list.
func TestClosedSearchFindsLastWeeksApproval(t *testing.T) {
	e := newEnv(t, nil)
	tf, formula := closedSet(t, e, 2)
	b := e.signedIn(watcher) // an observer may search
	r := b.get("/closed?q=terraform+APPLY&outcome=approved")
	if r.status != http.StatusOK {
		t.Fatalf("search: %d\n%s", r.status, r.body)
	}
	if got := strings.Count(r.body, `class="closed-row"`); got != 1 || !strings.Contains(r.body, `href="/q/`+string(tf)+`"`) {
		t.Fatalf("search for an approved terraform apply: %d rows\n%s", got, r.body)
	}
	for _, c := range []struct {
		query string
		rows  int
	}{
		{"", 5},
		{"kind=approval", 2},
		{"outcome=denied", 1},
		{"outcome=declined&closer=decline", 1},
		{"decider=ops-bot", 5},
		{"decider=someone-else", 0},
		{"route=default&agent=agent-a", 5},
		{"agent=agent-z", 0},
		{"from=2026-11-30&to=2026-11-30", 5},
		{"to=2026-11-29", 0},
	} {
		r := b.get("/closed?" + c.query)
		if got := strings.Count(r.body, `class="closed-row"`); r.status != http.StatusOK || got != c.rows {
			t.Errorf("%q: %d, %d rows, want %d", c.query, r.status, got, c.rows)
		}
	}
	if !strings.Contains(b.get("/closed").body, `href="/q/`+string(formula)+`"`) {
		t.Fatal("the declined question is not listed")
	}
	for _, bad := range []string{"kind=poll", "outcome=won", "from=yesterday", "from=2026-12-02&to=2026-12-01", "after=forged"} {
		if r := b.get("/closed?" + bad); r.status != http.StatusBadRequest || !strings.Contains(r.body, `id="problem"`) {
			t.Errorf("%q: %d, want 400 with the problem shown", bad, r.status)
		}
	}
}

// TestClosedPagesWithOlder: a long history pages, newest first, every
// question once, each page's Older link keeping the filters.
func TestClosedPagesWithOlder(t *testing.T) {
	e := newEnv(t, nil)
	closedSet(t, e, 60)
	b := e.signedIn(watcher)
	seen := map[string]bool{}
	path, pages := "/closed?kind=clarification", 0
	for path != "" {
		r := b.get(path)
		pages++
		for _, m := range rowID.FindAllStringSubmatch(r.body, -1) {
			if seen[m[1]] {
				t.Fatalf("%s listed twice", m[1])
			}
			seen[m[1]] = true
		}
		path = ""
		if m := olderLink.FindStringSubmatch(r.body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
			if !strings.Contains(path, "kind=clarification") {
				t.Fatalf("the Older link lost the filter: %s", path)
			}
		}
	}
	if len(seen) != 61 || pages != 2 {
		t.Fatalf("%d questions over %d pages, want 61 over 2", len(seen), pages)
	}
}

// TestClosedExportIsCSVWithoutFormulas: the export has a header row and
// one row per question the filters keep, and a cell that starts like a
// formula is made text.
func TestClosedExportIsCSVWithoutFormulas(t *testing.T) {
	e := newEnv(t, nil)
	tf, formula := closedSet(t, e, 3)
	b := e.signedIn(watcher)
	r := b.get("/closed.csv")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: %d %v", r.status, r.header)
	}
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 || rows[0][0] != "id" || rows[0][11] != "question" {
		t.Fatalf("export rows: %q", rows)
	}
	byID := map[string][]string{}
	for _, row := range rows[1:] {
		byID[row[0]] = row
	}
	if got := byID[string(formula)][11]; got != `'=HYPERLINK("http://evil.example/","click")` {
		t.Fatalf("a formula cell reads %q", got)
	}
	if got := byID[string(tf)]; got[8] != "approved" || got[9] != "person" || got[13] != "/q/"+string(tf) || !strings.HasPrefix(got[10], "Answered by ops-bot") {
		t.Fatalf("the approval's row: %q", got)
	}
	r = b.get("/closed.csv?" + url.Values{"q": {"terraform"}}.Encode())
	if rows, _ := csv.NewReader(strings.NewReader(r.body)).ReadAll(); len(rows) != 2 || rows[1][0] != string(tf) {
		t.Fatalf("filtered export: %q", rows)
	}
	if r := b.get("/closed.csv?outcome=won"); r.status != http.StatusBadRequest {
		t.Fatalf("a bad filter exported: %d", r.status)
	}
	signedOut := e.browser(e.srv)
	if r := signedOut.get("/closed.csv"); r.status != http.StatusUnauthorized || strings.Contains(r.body, string(tf)) {
		t.Fatalf("signed out export: %d", r.status)
	}
}

var (
	rowID     = regexp.MustCompile(`class="closed-row" data-qid="([^"]+)"`)
	olderLink = regexp.MustCompile(`href="([^"]+)" id="older"`)
)

// TestClosedExportDefusesEveryFormulaStart: a cell starting with any of
// the characters a spreadsheet reads as a formula is made text; others
// are left as they are.
func TestClosedExportDefusesEveryFormulaStart(t *testing.T) {
	e := newEnv(t, nil)
	want := map[string]string{}
	for _, text := range []string{"+1+1", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1", "=1+1", "Plain, with a comma"} {
		q := e.ask(core.AskInput{Text: text})
		if _, err := e.svc.Decline(t.Context(), q.ID, apiOp); err != nil {
			t.Fatal(err)
		}
		want[string(q.ID)] = "'" + text
		if text[0] == 'P' {
			want[string(q.ID)] = text
		}
	}
	rows, err := csv.NewReader(strings.NewReader(e.signedIn(watcher).get("/closed.csv").body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want)+1 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, row := range rows[1:] {
		// encoding/csv reads a lone \r in a quoted field as \n.
		if got := strings.ReplaceAll(row[11], "\n", "\r"); got != want[row[0]] {
			t.Errorf("%s: %q, want %q", row[0], row[11], want[row[0]])
		}
	}
}
