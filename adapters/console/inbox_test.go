package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

var nextLink = regexp.MustCompile(`<a href="([^"]+)" rel="next"`)

// TestInboxPagesFromTheStore: the inbox is a page of folded rows with the
// total of every match; the next page starts where the last ended, with
// the filters kept, and no row is shown twice.
func TestInboxPagesFromTheStore(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	for i := range 120 {
		in := core.AskInput{Text: fmt.Sprintf("question %03d\nmore lines that the row leaves out", i)}
		if i%2 == 1 {
			in.Labels.Project = "odd"
		}
		e.ask(in)
		e.clock.Advance(time.Second)
	}
	seen := map[string]bool{}
	path := "/?project=odd"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		r := b.get(path)
		if r.status != http.StatusOK || !strings.Contains(r.body, `<span id="open-count">60</span> open`) {
			t.Fatalf("%s: %d, without the total of 60", path, r.status)
		}
		for _, m := range regexp.MustCompile(`<span class="row-text">(question \d+)</span>`).FindAllStringSubmatch(r.body, -1) {
			if seen[m[1]] {
				t.Fatalf("%s repeats %s", path, m[1])
			}
			seen[m[1]] = true
		}
		if strings.Contains(r.body, "more lines that the row leaves out</span>") {
			t.Fatal("the folded row shows more than the first line")
		}
		path = ""
		if m := nextLink.FindStringSubmatch(r.body); m != nil {
			path = html.UnescapeString(m[1])
			if !strings.Contains(path, "project=odd") {
				t.Fatalf("the next page drops the filter: %s", path)
			}
		}
	}
	if len(seen) != 60 {
		t.Fatalf("the pages showed %d questions, want 60", len(seen))
	}
	for _, bad := range []string{"/?after=%25%25", "/?from=0", "/?from=x"} {
		if r := b.get(bad); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, r.status)
		}
	}
}

// TestRowEndpoint: a row alone, for the page to swap in; 204 when the
// page's filters leave its question out.
func TestRowEndpoint(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Row me", Labels: core.Labels{Project: "p"}})
	if r := b.get("/rows/" + string(q.ID) + "?project=p"); r.status != http.StatusOK || !strings.HasPrefix(r.body, `<details class="qrow card"`) || !strings.Contains(r.body, "Row me") {
		t.Fatalf("row: %d\n%s", r.status, r.body)
	}
	if r := b.get("/rows/" + string(q.ID) + "?project=other"); r.status != http.StatusNoContent {
		t.Fatalf("a row the filter leaves out: %d", r.status)
	}
	if r := b.get("/rows/" + strings.Repeat("z", 12)); r.status != http.StatusNotFound {
		t.Fatalf("an unknown row: %d", r.status)
	}
}

// TestHardToReverseAsksOnce: a choice on a hard-to-reverse question is
// shown back before anything is recorded, then recorded by the second
// submit exactly as first given; a reversible one, and a deny, are one
// tap.
func TestHardToReverseAsksOnce(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	dec := e.ask(core.AskInput{Kind: core.KindDecision, Text: "Drop the old region?", Reversibility: core.HardToReverse, Options: []core.Option{
		{ID: "drop", Title: "Drop it", Writeup: "frees the budget", Recommended: true}, {ID: "keep", Title: "Keep it", Writeup: "costs more"},
	}})
	events := e.eventCount()
	r := b.post("/q/"+string(dec.ID)+"/answer", url.Values{"option": {"drop"}, "text": {"after the audit"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Hard to reverse: record this?") || !strings.Contains(r.body, "Drop it") ||
		!strings.Contains(r.body, "after the audit") || !strings.Contains(r.body, `name="confirm" value="yes"`) {
		t.Fatalf("the confirm step: %d\n%s", r.status, r.body)
	}
	// A page of its own, it has one <h1>, its heading.
	if n := strings.Count(r.body, "<h1"); n != 1 || !strings.Contains(r.body, `tabindex="-1">Hard to reverse: record this?</h1>`) {
		t.Fatalf("the confirmation page has %d <h1>, want its heading as the one", n)
	}
	if !e.get(dec.ID).Open() || e.eventCount() != events {
		t.Fatal("the first submit recorded something")
	}
	r = b.post("/q/"+string(dec.ID)+"/answer", url.Values{"option": {"drop"}, "text": {"after the audit"}, "confirm": {"yes"}})
	if res := e.get(dec.ID).Resolution; r.status != http.StatusOK || res == nil || res.OptionID != "drop" || res.Reason != "after the audit" {
		t.Fatalf("confirmed: %d %+v", r.status, res)
	}

	hard := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Delete?", Reversibility: core.HardToReverse, Tool: "rm", Arguments: []byte(`{"p":"/x"}`)})
	if r := b.post("/q/"+string(hard.ID)+"/answer", url.Values{"option": {"deny"}}); r.status != http.StatusOK || e.get(hard.ID).Open() {
		t.Fatalf("a deny asked for a confirmation: %d", r.status)
	}
	soft := e.ask(core.AskInput{Kind: core.KindApproval, Text: "List?", Tool: "ls", Arguments: []byte(`{"p":"/x"}`)})
	if r := b.post("/q/"+string(soft.ID)+"/answer", url.Values{"option": {"approve"}}); r.status != http.StatusOK || e.get(soft.ID).Open() {
		t.Fatalf("a reversible approve asked for a confirmation: %d", r.status)
	}

	// In place: the confirmation comes back as a fragment, marked.
	hard2 := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Delete again?", Reversibility: core.HardToReverse, Tool: "rm", Arguments: []byte(`{"p":"/y"}`)})
	r = b.post("/q/"+string(hard2.ID)+"/answer", url.Values{"option": {"approve"}}, "X-Askbridge-Fetch", "row")
	if r.status != http.StatusOK || r.header.Get("X-Askbridge-Step") != "confirm" || strings.Contains(r.body, "<html") || !e.get(hard2.ID).Open() {
		t.Fatalf("in place confirm: %d %q", r.status, r.header.Get("X-Askbridge-Step"))
	}
	if strings.Contains(r.body, "<h1") || !strings.Contains(r.body, "record this?</h2>") {
		t.Fatal("in a row, below the inbox's <h1>, the confirmation's heading is not an <h2>")
	}
	r = b.post("/q/"+string(hard2.ID)+"/answer", url.Values{"option": {"approve"}, "confirm": {"yes"}}, "X-Askbridge-Fetch", "row")
	if r.status != http.StatusOK || r.header.Get("X-Askbridge-Step") != "recorded" || !strings.HasPrefix(r.body, `<details class="qrow card hard closed"`) ||
		!strings.Contains(r.body, "Recorded. This is what askbridge now holds:") {
		t.Fatalf("in place record: %d %q\n%s", r.status, r.header.Get("X-Askbridge-Step"), r.body)
	}
	// A loser in place is told on the row, with the status of the
	// refusal; here the one who answered first, so that answer stands.
	r = b.post("/q/"+string(hard2.ID)+"/answer", url.Values{"option": {"deny"}}, "X-Askbridge-Fetch", "row")
	if r.status != http.StatusConflict || r.header.Get("X-Askbridge-Step") != "refused" || !strings.Contains(r.body, "That answer stands; nothing more was recorded.") {
		t.Fatalf("in place loser: %d %q", r.status, r.header.Get("X-Askbridge-Step"))
	}
}

// TestOneSubmitForFormsAndBatches: every item of a form, and several calls
// of a batch, in one post; one item alone still works.
func TestOneSubmitForFormsAndBatches(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	items := []core.FormItem{
		{ID: "region", Question: "Region?", Options: []core.FormOption{{ID: "eu", Label: "EU"}, {ID: "us", Label: "US"}}},
		{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "Small"}, {ID: "l", Label: "Large"}}},
	}
	form := e.ask(core.AskInput{Kind: core.KindForm, Text: "Set-up", Items: items})
	if page := b.get("/").body; strings.Count(page, "Region?") != 1 {
		t.Fatalf("the form lists its item %d times", strings.Count(page, "Region?"))
	}
	r := b.post("/q/"+string(form.ID)+"/answer", url.Values{"item_option.region": {"eu"}, "item_text.size": {"medium"}})
	if got := e.get(form.ID); r.status != http.StatusOK || got.State != core.StateAnswered || len(got.Answers) != 2 {
		t.Fatalf("one submit: %d %s %+v", r.status, got.State, got.Answers)
	}
	one := e.ask(core.AskInput{Kind: core.KindForm, Text: "Set-up again", Items: items})
	r = b.post("/q/"+string(one.ID)+"/answer", url.Values{"item": {"size"}, "item_option.size": {"l"}, "item_option.region": {"us"}})
	if got := e.get(one.ID); r.status != http.StatusOK || !got.Open() || len(got.Answers) != 1 || got.Answers[0].ItemID != "size" {
		t.Fatalf("one item alone: %d %+v", r.status, got.Answers)
	}

	batch := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Three writes", Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "write", Arguments: []byte(`{"p":1}`)},
		{ToolCallID: "c2", Tool: "write", Arguments: []byte(`{"p":2}`)},
		{ToolCallID: "c3", Tool: "chmod", Arguments: []byte(`{"p":3}`)},
	}})
	r = b.post("/q/"+string(batch.ID)+"/answer", url.Values{"call_option.c1": {"approve"}, "call_option.c2": {""}, "call_option.c3": {"deny"}, "call_text.c3": {"not now"}})
	got := e.get(batch.ID)
	if r.status != http.StatusOK || !got.Open() || len(got.Answers) != 2 {
		t.Fatalf("two calls in one submit: %d %s %+v", r.status, got.State, got.Answers)
	}
	for _, a := range got.Answers {
		if a.ItemID == "c3" && (a.OptionID != core.DenyOption || a.Text != "not now") {
			t.Fatalf("c3: %+v", a)
		}
	}
}

// TestObserverSeesReadOnly: the header and each open row say so.
func TestObserverSeesReadOnly(t *testing.T) {
	e := newEnv(t, nil)
	e.ask(core.AskInput{Text: "Look only"})
	page := e.signedIn(watcher).get("/").body
	if !strings.Contains(page, `<span class="readonly-badge">read only</span>`) || !strings.Contains(page, "Read only: this account may look but not answer.") {
		t.Fatal("the observer is not told the account is read only")
	}
	if strings.Contains(e.signedIn(opAlice).get("/").body, "readonly-badge") {
		t.Fatal("an operator is told the account is read only")
	}
}

// TestHardToReverseBatchEditConfirmsTheArguments: "Edit and approve" on
// one call of a hard-to-reverse batch is shown back with the arguments as
// edited, as a single approval's edit is, before anything is recorded;
// the confirming submit records exactly those.
func TestHardToReverseBatchEditConfirmsTheArguments(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	batch := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Two deletes", Reversibility: core.HardToReverse, Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "rm", Arguments: []byte(`{"path":"/srv/old"}`), Editable: &core.Editable{Keys: []string{"path"}}},
		{ToolCallID: "c2", Tool: "rm", Arguments: []byte(`{"path":"/srv/tmp"}`), Editable: &core.Editable{Keys: []string{"path"}}},
	}})
	form := url.Values{"call": {"c1"}, "call_option": {"approve"}, "arguments": {`{"path":"/srv/old/cache-only"}`}}
	r := b.post("/q/"+string(batch.ID)+"/answer", form)
	// What the person reads, not the hidden fields that post it again.
	shown := regexp.MustCompile(`(?s)<dl class="recorded">.*?</dl>`).FindString(r.body)
	if r.status != http.StatusOK || !strings.Contains(r.body, "Hard to reverse: record this?") ||
		!strings.Contains(shown, "<dt>Approved arguments</dt>") || !strings.Contains(shown, "/srv/old/cache-only") {
		t.Fatalf("the confirm step does not show the edited arguments: %d\n%s", r.status, r.body)
	}
	if got := e.get(batch.ID); len(got.Answers) != 0 {
		t.Fatalf("the first submit recorded %+v", got.Answers)
	}
	form.Set("confirm", "yes")
	if r := b.post("/q/"+string(batch.ID)+"/answer", form); r.status != http.StatusOK {
		t.Fatalf("confirmed: %d\n%s", r.status, r.body)
	}
	got := e.get(batch.ID)
	if len(got.Answers) != 1 || got.Answers[0].Edit == nil || !strings.Contains(string(got.Answers[0].Edit.Arguments), "/srv/old/cache-only") {
		t.Fatalf("recorded %+v", got.Answers)
	}
}
