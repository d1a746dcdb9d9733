package console_test

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// editable asks for an approval whose path alone may change.
func (e *env) editable() *core.Question {
	return e.ask(core.AskInput{Kind: core.KindApproval, Text: "Write the file?", Tool: "write_file",
		Arguments: []byte(`{"path":"/tmp/a","mode":"w"}`), Editable: &core.Editable{Keys: []string{"path"}}})
}

func TestEditAndApproveGoesThroughCore(t *testing.T) {
	e := newEnv(t, nil)
	q := e.editable()
	b := e.signedIn(opAlice)

	page := b.get("/q/" + string(q.ID)).body
	prefill := `name="arguments" rows="8" class="editor" spellcheck="false">{` + "\n" + `  &#34;mode&#34;: &#34;w&#34;,` + "\n" + `  &#34;path&#34;: &#34;/tmp/a&#34;` + "\n}</textarea>"
	if !strings.Contains(page, prefill) || !strings.Contains(page, card.LabelEditApprove) || !strings.Contains(page, "only path may change") {
		t.Fatalf("the editor is missing or not prefilled with the pretty arguments:\n%s", page)
	}
	// A plain approval has no editor.
	plain := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Read it?", Tool: "read_file", Arguments: []byte(`{"path":"/tmp/a"}`)})
	if row := b.get("/rows/" + string(plain.ID)).body; strings.Contains(row, `name="arguments"`) || strings.Contains(row, card.LabelEditApprove) {
		t.Fatal("an approval without editable arguments offers an editor")
	}

	// Observers see no editor and are refused.
	w := e.signedIn(watcher)
	if row := w.get("/rows/" + string(q.ID)).body; strings.Contains(row, `name="arguments"`) {
		t.Fatal("an observer is offered the editor")
	}
	edited := `{"path":"/tmp/b","mode":"w"}`
	before := e.eventCount()
	if r := w.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}, "arguments": {edited}}); r.status != http.StatusForbidden {
		t.Fatalf("observer edit: %d", r.status)
	}
	// No CSRF token, no edit.
	if r := b.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}, "arguments": {edited}, "csrf": {"forged"}}); r.status != http.StatusForbidden {
		t.Fatalf("edit without CSRF: %d", r.status)
	}

	for _, c := range []struct{ name, args, want string }{
		{"a key that may not change", `{"path":"/tmp/a","mode":"a"}`, "argument &#34;mode&#34; may not be changed: it is not one of the editable keys"},
		{"a key added", `{"path":"/tmp/a","mode":"w","force":true}`, "argument &#34;force&#34; may not be changed"},
		{"invalid JSON", `{"path": "/tmp/b",`, "the edited arguments are not valid JSON"},
		{"not an object", `["/tmp/b"]`, "the edited arguments must be a JSON object"},
		{"nothing", "   ", "the edited arguments are missing"},
	} {
		r := b.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}, "arguments": {c.args}})
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, c.want) || !strings.Contains(r.body, "Nothing was recorded.") {
			t.Fatalf("%s: %d, want the refusal %q:\n%s", c.name, r.status, c.want, r.body)
		}
	}
	if got := e.get(q.ID); !got.Open() || got.Resolution != nil {
		t.Fatalf("a refused edit changed the question: %s", got.State)
	}
	if n := e.eventCount(); n != before {
		t.Fatalf("refused edits recorded %d events", n-before)
	}

	r := b.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}, "arguments": {"{\n  \"mode\": \"w\",\n  \"path\": \"/tmp/b\"\n}"}, "text": {"use b"}})
	res := e.get(q.ID).Resolution
	if r.status != http.StatusOK || res == nil || res.Approved == nil || !*res.Approved || res.Edit == nil {
		t.Fatalf("edit and approve: %d %+v", r.status, res)
	}
	if string(res.Edit.Arguments) != `{"mode":"w","path":"/tmp/b"}` || res.Edit.AskedArgumentsSHA256 != q.Call.ArgumentsSHA256 ||
		core.ChangesLine(res.Edit) != "path changed" || res.Reason != "use b" {
		t.Fatalf("recorded edit: %+v", res.Edit)
	}
	for _, want := range []string{"Approved with changes: path changed", res.Edit.ArgumentsSHA256, "As asked: SHA-256 <code>" + q.Call.ArgumentsSHA256, "&#34;path&#34;: &#34;/tmp/b&#34;"} {
		if !strings.Contains(r.body, want) {
			t.Fatalf("the closed card lacks %q:\n%s", want, r.body)
		}
	}
	if row := b.get("/rows/" + string(q.ID)).body; !strings.Contains(row, "Approved with changes: path changed") || strings.Contains(row, `name="arguments"`) {
		t.Fatal("the closed card does not show the changes, or still offers the editor")
	}
}

// batch asks for four calls; the third may have its path edited.
func (e *env) batch() *core.Question {
	return e.ask(core.AskInput{Kind: core.KindApproval, Text: "Apply these writes?", Calls: []core.CallInput{
		{ToolCallID: "call_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "call_2", Tool: "delete_file", Arguments: []byte(`{"path":"/b"}`)},
		{ToolCallID: "call_3", Tool: "write_file", Arguments: []byte(`{"path":"/c","mode":"w"}`), Editable: &core.Editable{Keys: []string{"path"}}},
		{ToolCallID: "call_4", Tool: "chmod", Arguments: []byte(`{"path":"/d"}`)},
	}})
}

func TestABatchIsDecidedCallByCallThenAllAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	q := e.batch()
	alice, bob, w := e.signedIn(opAlice), e.signedIn(opBob), e.signedIn(watcher)

	page := alice.get("/q/" + string(q.ID)).body
	for _, c := range q.Calls {
		for _, want := range []string{`data-call="` + c.ToolCallID + `"`, `name="call" value="` + c.ToolCallID + `"`, c.ArgumentsSHA256, "<code class=\"tool\">" + c.Tool + "</code>"} {
			if !strings.Contains(page, want) {
				t.Fatalf("the batch card lacks %q for %s", want, c.ToolCallID)
			}
		}
	}
	if strings.Count(page, `name="arguments"`) != 1 || !strings.Contains(page, card.LabelApproveAll) || !strings.Contains(page, card.LabelDenyAll) {
		t.Fatal("the batch card should offer one editor (call_3's) and approve all / deny all")
	}

	if r := w.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_1"}, "call_option": {"approve"}}); r.status != http.StatusForbidden || len(e.get(q.ID).Answers) != 0 {
		t.Fatalf("an observer decided a call: %d", r.status)
	}
	if r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_1"}, "call_option": {"approve"}, "csrf": {"x"}}); r.status != http.StatusForbidden || len(e.get(q.ID).Answers) != 0 {
		t.Fatalf("a call decided without CSRF: %d", r.status)
	}

	r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_1"}, "call_option": {"approve"}})
	got := e.get(q.ID)
	if r.status != http.StatusOK || !got.Open() || len(got.Answers) != 1 || got.Answers[0].ItemID != "call_1" || got.Answers[0].OptionID != core.ApproveOption {
		t.Fatalf("approve one call: %d %+v", r.status, got.Answers)
	}
	if !strings.Contains(r.body, "Answered 1/4") {
		t.Fatal("the card does not show the batch's progress")
	}
	// Bob sees alice's decision on call_1, and no buttons for it.
	card := bob.get("/rows/" + string(q.ID)).body
	if !strings.Contains(card, `<bdi>Approved</bdi> <span class="by">by <bdi>ops-alice</bdi> via console`) || strings.Contains(card, `name="call" value="call_1"`) {
		t.Fatalf("call_1's outcome is not shown to others:\n%s", card)
	}
	if r := bob.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_1"}, "call_option": {"deny"}}); r.status != http.StatusConflict ||
		!strings.Contains(r.body, "already decided") {
		t.Fatalf("deciding a decided call again: %d", r.status)
	}
	if r := bob.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_2"}, "call_option": {"deny"}, "call_text": {"keep /b"}}); r.status != http.StatusOK {
		t.Fatalf("deny call_2: %d", r.status)
	}

	before := e.eventCount()
	if r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_3"}, "call_option": {"approve"}, "arguments": {`{"path":"/c","mode":"a"}`}}); r.status != http.StatusBadRequest ||
		!strings.Contains(r.body, "argument &#34;mode&#34; may not be changed") {
		t.Fatalf("a non-editable key of a call: %d\n%s", r.status, r.body)
	}
	if r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_4"}, "call_option": {"approve"}, "arguments": {`{"path":"/z"}`}}); r.status != http.StatusBadRequest ||
		!strings.Contains(r.body, "not editable") {
		t.Fatalf("editing a call that is not editable: %d", r.status)
	}
	if len(e.get(q.ID).Answers) != 2 || e.eventCount() != before {
		t.Fatal("a refused call edit recorded something")
	}
	r = alice.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_3"}, "call_option": {"approve"}, "arguments": {`{"path":"/c2","mode":"w"}`}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Approved with changes: path changed") {
		t.Fatalf("edit call_3: %d\n%s", r.status, r.body)
	}

	r = bob.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}})
	got = e.get(q.ID)
	if r.status != http.StatusOK || got.State != core.StateAnswered || len(got.Answers) != 4 {
		t.Fatalf("approve all: %d %s %d", r.status, got.State, len(got.Answers))
	}
	want := map[string]string{"call_1": "approve/ops-alice", "call_2": "deny/ops-bob", "call_3": "approve/ops-alice", "call_4": "approve/ops-bob"}
	for _, co := range core.CallOutcomes(got) {
		if d := co.Decision; d == nil || d.OptionID+"/"+d.Decider.ID != want[co.Call.ToolCallID] {
			t.Fatalf("%s: %+v, want %s", co.Call.ToolCallID, co.Decision, want[co.Call.ToolCallID])
		}
	}
	if d, _ := got.Answered("call_3"); d.Edit == nil || string(d.Edit.Arguments) != `{"mode":"w","path":"/c2"}` {
		t.Fatalf("call_3's edit: %+v", d.Edit)
	}
	results, err := core.CallResultsOf(got)
	if err != nil || len(results) != 4 || results[3].ToolCallID != "call_4" {
		t.Fatalf("call results: %v %d", err, len(results))
	}
	for _, want := range []string{"1. write_file: Approved", "2. delete_file: Denied", "3. write_file: Approved with changes: path changed", "4. chmod: Approved", "keep /b"} {
		if !strings.Contains(r.body, want) {
			t.Fatalf("the closed batch lacks %q:\n%s", want, r.body)
		}
	}
}

// standingRoutes let approvers grant standing approvals for the run, or
// for the agent for four hours.
func standingRoutes() map[string]core.Route {
	r := openRoutes()
	route := r[core.DefaultRoute]
	route.StandingHours = 4
	r[core.DefaultRoute] = route
	return r
}

func TestStandingApprovalsAreGrantedListedAndRevoked(t *testing.T) {
	e := newEnv(t, standingRoutes())
	alice, w := e.signedIn(opAlice), e.signedIn(watcher)
	write := core.AskInput{Kind: core.KindApproval, Text: "Write?", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)}

	hard := write
	hard.Reversibility = core.HardToReverse
	hq := e.ask(hard)
	if row := alice.get("/rows/" + string(hq.ID)).body; strings.Contains(row, `name="standing"`) {
		t.Fatal("a hard-to-reverse approval offers a standing approval")
	}

	q := e.ask(write)
	row := alice.get("/rows/" + string(q.ID)).body
	if !strings.Contains(row, `value="run" class="standing standing-run">`+template.HTMLEscapeString(card.LabelStandingRun)) ||
		!strings.Contains(row, `value="agent"`) || !strings.Contains(row, "for this agent for 4 hours") {
		t.Fatalf("the standing choices are missing:\n%s", row)
	}
	if r := w.post("/q/"+string(q.ID)+"/answer", url.Values{"standing": {"run"}}); r.status != http.StatusForbidden {
		t.Fatalf("observer standing: %d", r.status)
	}
	r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"standing": {"run"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Standing approval granted: st-") {
		t.Fatalf("approve with a standing approval: %d\n%s", r.status, r.body)
	}
	all, err := e.svc.ListStandings(t.Context())
	if err != nil || len(all) != 1 || all[0].Tool != "write_file" || all[0].Scope != core.StandingRun || all[0].GrantedBy.ID != "ops-alice" {
		t.Fatalf("standings: %v %+v", err, all)
	}
	st := all[0]

	covered := e.ask(write)
	if covered.State != core.StateAnswered {
		t.Fatalf("a matching ask was not covered: %s", covered.State)
	}

	page := w.get("/standing")
	if page.status != http.StatusOK || !strings.Contains(page.body, st.ID) || !strings.Contains(page.body, "the rest of run run-1") ||
		strings.Contains(page.body, "/standing/"+st.ID+"/revoke") || strings.Contains(page.body, "Covers nothing now") {
		t.Fatalf("the observer's standing page: %d\n%s", page.status, page.body)
	}
	forbidding := standingRoutes()
	r0 := forbidding[core.DefaultRoute]
	r0.Standing, r0.StandingHours = new(false), 0
	forbidding[core.DefaultRoute] = r0
	if err := e.svc.Reconfigure(core.Config{Routes: forbidding, ActorKey: []byte("test-actor-key")}); err != nil {
		t.Fatal(err)
	}
	if page := w.get("/standing"); !strings.Contains(page.body, "Covers nothing now: route default no longer allows standing approvals") {
		t.Fatalf("a standing approval its route no longer allows is not marked as covering nothing:\n%s", page.body)
	}
	if err := e.svc.Reconfigure(core.Config{Routes: standingRoutes(), ActorKey: []byte("test-actor-key")}); err != nil {
		t.Fatal(err)
	}
	if r := w.post("/standing/"+st.ID+"/revoke", nil); r.status != http.StatusForbidden {
		t.Fatalf("observer revoke: %d", r.status)
	}
	if !strings.Contains(alice.get("/standing").body, `action="/standing/`+st.ID+`/revoke"`) {
		t.Fatal("an operator is not offered Revoke")
	}
	if r := alice.post("/standing/"+st.ID+"/revoke", url.Values{"csrf": {"forged"}}); r.status != http.StatusForbidden {
		t.Fatalf("revoke without CSRF: %d", r.status)
	}
	if all, _ := e.svc.ListStandings(t.Context()); len(all) != 1 {
		t.Fatal("a refused revoke revoked")
	}
	r = alice.post("/standing/"+st.ID+"/revoke", nil)
	if r.status != http.StatusOK || !strings.Contains(r.body, "Revoked "+st.ID) || !strings.Contains(r.body, "There are no standing approvals.") {
		t.Fatalf("revoke: %d\n%s", r.status, r.body)
	}
	if again := e.ask(write); again.State != core.StateOpen {
		t.Fatalf("a revoked standing approval still covers: %s", again.State)
	}
	if r := alice.post("/standing/"+st.ID+"/revoke", nil); r.status != http.StatusNotFound {
		t.Fatalf("revoking twice: %d", r.status)
	}
	evs, err := e.svc.QuestionEvents(t.Context(), q.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
	}
	if j, _ := json.Marshal(kinds); !strings.Contains(string(j), `"standing_granted"`) || !strings.Contains(string(j), `"standing_revoked"`) {
		t.Fatalf("the granting question's log: %s", j)
	}
}

func TestABatchCallCanGrantAStandingApproval(t *testing.T) {
	e := newEnv(t, standingRoutes())
	q := e.batch()
	alice := e.signedIn(opAlice)
	row := alice.get("/rows/" + string(q.ID)).body
	if strings.Count(row, `value="run" class="standing standing-run">`+template.HTMLEscapeString(card.LabelStandingRun)) != 4 {
		t.Fatalf("each call should offer a standing approval for the run:\n%s", row)
	}
	r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"call": {"call_4"}, "standing": {"run"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Standing approval granted: st-") {
		t.Fatalf("standing on a call: %d\n%s", r.status, r.body)
	}
	all, _ := e.svc.ListStandings(t.Context())
	if d, ok := e.get(q.ID).Answered("call_4"); !ok || d.OptionID != core.ApproveOption || len(all) != 1 || all[0].Tool != "chmod" {
		t.Fatalf("call_4: %+v, standings %+v", d, all)
	}
}
