package adaptertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// CardFixture is one card that every chat renderer is checked on. All
// three platforms render the same fixtures into golden files side by side
// (testdata/cards/<name>.<surface>.golden beside this file), so a reviewer
// can diff one card across platforms.
type CardFixture struct {
	Name string
	Card card.Card
	// Room is the room the card or reminder is posted in; ReplyTo, when a
	// reminder has one, is in the same room.
	Room string
}

// fixtureID is every fixture's question id, so golden files are stable.
const fixtureID = "b234567abcdefghij"

var (
	fixtureAsked = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	fixtureAlice = core.Decider{Surface: core.SurfaceSlack, ID: "U111", Name: "Alice"}
	fixtureBob   = core.Decider{Surface: core.SurfaceTelegram, ID: "222", Name: "Bob"}
)

func fixtureQ(kind core.Kind) *core.Question {
	q := &core.Question{
		ID: fixtureID, Kind: kind, Agent: "deploy-bot", RunID: "run-1", ToolCallID: "toolu_1",
		Labels:        core.Labels{Project: "billing", Task: "ledger <migration>"},
		Reversibility: core.Reversible, Route: "ops",
		CreatedAt: fixtureAsked, Deadline: fixtureAsked.Add(24 * time.Hour), State: core.StateOpen,
	}
	switch kind {
	case core.KindClarification:
		q.Text = "Which region for the bucket? <!channel> & *friends*"
		q.Context = "The app servers run in eu-west-1; the _old_ bucket was us_east_1."
	case core.KindDecision:
		q.Reversibility = core.HardToReverse
		q.Text = "Which database for the ledger?"
		q.Context = "Write-heavy, 2 TB, & growing 10% a month."
		q.Options = []core.Option{
			{ID: "pg", Title: "PostgreSQL", Writeup: "Known to the team; sharding later is work.", Recommended: true},
			{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out; ad-hoc queries are constrained."},
		}
	case core.KindApproval:
		q.Reversibility = core.HardToReverse
		q.Text = "May I drop the staging tables?"
		q.Call = &core.ToolCall{Tool: "sql.exec", Arguments: json.RawMessage(`{"sql":"DROP TABLE a, b","target":"staging"}`),
			ArgumentsSHA256: "3f2a9c1b7d5e4f60a1b2c3d4e5f60718293a4b5c6d7e8f9012345678abcdef01"}
	case core.KindForm:
		q.Text = "Release plan"
		q.Items = []core.FormItem{
			{ID: "day", Question: "Which day?", Options: []core.FormOption{
				{ID: "mon", Label: "Monday", Description: "Quiet traffic", Recommended: true}, {ID: "fri", Label: "Friday"}}},
			{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
		}
	}
	return q
}

// asStored is raw as a question read back from a store holds it:
// encoding/json wrote it, escaping &, < and > in a json.RawMessage.
func asStored(raw string) json.RawMessage {
	b, err := json.Marshal(core.ToolCall{Arguments: json.RawMessage(raw)})
	if err != nil {
		panic(err)
	}
	var c core.ToolCall
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return c.Arguments
}

func closed(q *core.Question, st core.State, d core.Decider, set func(*core.Resolution)) *core.Question {
	q.State = st
	q.Resolution = &core.Resolution{State: st, Decider: d, At: fixtureAsked.Add(7 * time.Minute)}
	if set != nil {
		set(q.Resolution)
	}
	return q
}

// CardFixtures are the cards every renderer's golden files are made of:
// each kind open, a form part answered, each way of closing, the markers
// (on open and on closed cards, which is what an edit shows), and the two
// kinds of reminder.
func CardFixtures() []CardFixture {
	// Numbers, so every platform can read them (a Telegram chat and message
	// id must be; a Slack channel and ts need not look like this).
	const room = "-1001234567890"
	post := core.MessageRef{Room: room, ID: "844397162624450620", Kind: core.DeliverPost}
	escalated := core.MessageRef{Room: room, ID: "844397162624450621", Kind: core.DeliverEscalate}
	again := core.MessageRef{Room: room, ID: "844397162624450622", Kind: core.DeliverPost, Repeat: true}
	yes, no := true, false

	half := fixtureQ(core.KindForm)
	half.Answers = []core.ItemAnswer{{ItemID: "day", OptionID: "fri", Decider: fixtureAlice, At: fixtureAsked.Add(time.Minute)}}
	full := fixtureQ(core.KindForm)
	full.Answers = []core.ItemAnswer{
		{ItemID: "day", OptionID: "fri", Decider: fixtureAlice, At: fixtureAsked.Add(time.Minute)},
		{ItemID: "notes", Text: "Only the *security* fixes", Decider: fixtureBob, At: fixtureAsked.Add(2 * time.Minute)},
	}
	full = closed(full, core.StateAnswered, fixtureBob, nil)
	unclassified := fixtureQ(core.KindClarification)
	unclassified.Reversibility = core.Unclassified
	editable := fixtureQ(core.KindApproval)
	editable.Call.Editable = &core.Editable{Keys: []string{"target"}}
	edited := closed(fixtureQ(core.KindApproval), core.StateAnswered, fixtureAlice, func(r *core.Resolution) {
		r.Approved, r.ArgumentsSHA256 = &yes, "3f2a9c1b7d5e4f60a1b2c3d4e5f60718293a4b5c6d7e8f9012345678abcdef01"
		r.Edit = &core.ArgumentEdit{Arguments: json.RawMessage(`{"sql":"DROP TABLE a, b","target":"scratch"}`),
			ArgumentsSHA256:      "9c1b7d5e4f60a1b2c3d4e5f60718293a4b5c6d7e8f9012345678abcdef013f2a",
			AskedArgumentsSHA256: r.ArgumentsSHA256,
			Changes:              []core.KeyChange{{Key: "target", Change: core.KeyChanged}}}
	})
	// Arguments people must read as written: shell operators, markup,
	// quotes and non-ASCII text, read back from a store, which escapes
	// &, < and > in them (the card must not show \u0026).
	shell := fixtureQ(core.KindApproval)
	shell.Text = "May I run the deploy?"
	shell.Call = &core.ToolCall{Tool: "shell.run",
		Arguments:       asStored(`{"cmd":"make test && ./deploy.sh > deploy.log","note":"say \"hi\" to Zoë — 東京 <ops>","retries":2}`),
		ArgumentsSHA256: "5e4f60a1b2c3d4e5f60718293a4b5c6d7e8f9012345678abcdef013f2a9c1b7d",
		Editable:        &core.Editable{Keys: []string{"cmd"}}}
	standing := fixtureQ(core.KindApproval)
	standing.Reversibility = core.Reversible
	standing.Call.Standing = &core.StandingOffer{Hours: 8}
	batch := fixtureQ(core.KindApproval)
	batch.Reversibility, batch.Text, batch.Call = core.Reversible, "May I write these three files?", nil
	for i, p := range []string{"a.txt", "b.txt", "c <d>.txt"} {
		batch.Calls = append(batch.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%d", i+1), ToolCall: core.ToolCall{
			Tool: "write_file", Arguments: json.RawMessage(`{"path":"` + p + `"}`), ArgumentsSHA256: fmt.Sprintf("%064d", i+1)}})
	}
	batch.Calls[2].Editable = &core.Editable{All: true}
	batch.Answers = []core.ItemAnswer{{ItemID: "toolu_2", OptionID: core.DenyOption, Text: "not b", Decider: fixtureAlice, At: fixtureAsked.Add(time.Minute)}}
	batchDone := closed(fixtureQ(core.KindApproval), core.StateTimedOut, core.System, func(r *core.Resolution) { r.Reason = core.TimeoutReason })
	batchDone.Reversibility, batchDone.Text, batchDone.Call, batchDone.Calls, batchDone.Answers = batch.Reversibility, batch.Text, nil, batch.Calls, batch.Answers
	// Batches closed by standing approvals: every call by one granted
	// before the ask (nobody looked at them), and one call so, the others
	// by people.
	grant := core.StandingUse{ID: "st-1", GrantedBy: fixtureAlice, GrantedAt: fixtureAsked.Add(-time.Hour)}
	byStanding := func(id string) core.ItemAnswer {
		d := grant.GrantedBy
		d.Name = core.StandingLabel(core.Standing{GrantedBy: grant.GrantedBy, GrantedAt: grant.GrantedAt})
		g := grant
		return core.ItemAnswer{ItemID: id, OptionID: core.ApproveOption, Decider: d, At: fixtureAsked, Standing: &g}
	}
	batchStanding := closed(fixtureQ(core.KindApproval), core.StateAnswered, core.Decider{}, func(r *core.Resolution) { r.ClosedBy = core.CloserParts })
	batchStanding.Reversibility, batchStanding.Text, batchStanding.Call, batchStanding.Calls = batch.Reversibility, batch.Text, nil, batch.Calls
	batchStanding.Answers = []core.ItemAnswer{byStanding("toolu_1"), byStanding("toolu_2"), byStanding("toolu_3")}
	batchStanding.Resolution.Decider, batchStanding.Resolution.At = batchStanding.Answers[2].Decider, fixtureAsked
	batchMixed := closed(fixtureQ(core.KindApproval), core.StateAnswered, fixtureBob, func(r *core.Resolution) { r.ClosedBy = core.CloserParts })
	batchMixed.Reversibility, batchMixed.Text, batchMixed.Call, batchMixed.Calls = batch.Reversibility, batch.Text, nil, batch.Calls
	batchMixed.Answers = []core.ItemAnswer{byStanding("toolu_1"), batch.Answers[0],
		{ItemID: "toolu_3", OptionID: core.ApproveOption, Decider: fixtureBob, At: fixtureAsked.Add(7 * time.Minute)}}
	// A form that timed out with one item answered: the answer stays on
	// the card, as it goes to the agent.
	formHalfDone := closed(fixtureQ(core.KindForm), core.StateTimedOut, core.System, func(r *core.Resolution) { r.Reason = core.TimeoutReason })
	formHalfDone.Answers = half.Answers
	withCard := fixtureQ(core.KindDecision)
	withCard.Messages = []core.MessageRef{{Surface: core.SurfaceSlack, Room: room, ID: "844397162624450620", Kind: core.DeliverPost}}

	cards := []struct {
		name string
		q    *core.Question
		m    core.MessageRef
	}{
		{"clarification_open", fixtureQ(core.KindClarification), post},
		{"clarification_unclassified", unclassified, post},
		{"decision_open", fixtureQ(core.KindDecision), post},
		{"decision_escalated", fixtureQ(core.KindDecision), escalated},
		{"decision_posted_again", fixtureQ(core.KindDecision), again},
		{"approval_open", fixtureQ(core.KindApproval), post},
		{"approval_editable", editable, post},
		{"approval_edited", edited, post},
		{"approval_shell_text", shell, post},
		{"approval_standing_offered", standing, post},
		{"batch_partly_decided", batch, post},
		{"batch_timed_out", batchDone, post},
		{"batch_standing", batchStanding, post},
		{"batch_standing_and_people", batchMixed, post},
		{"form_open", fixtureQ(core.KindForm), post},
		{"form_progress", half, post},
		{"clarification_answered", closed(fixtureQ(core.KindClarification), core.StateAnswered, fixtureAlice, func(r *core.Resolution) {
			r.Answer = "eu-west-1, <b>next</b> to the app servers"
		}), post},
		{"decision_answered", closed(fixtureQ(core.KindDecision), core.StateAnswered, fixtureAlice, func(r *core.Resolution) {
			r.OptionID, r.Answer = "ddb", "Scales out; ad-hoc queries are constrained."
		}), post},
		{"decision_escalated_answered", closed(fixtureQ(core.KindDecision), core.StateAnswered, fixtureBob, func(r *core.Resolution) {
			r.OptionID = "pg"
		}), escalated},
		{"decision_answered_via_api", closed(fixtureQ(core.KindDecision), core.StateAnswered,
			core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "ops"}, func(r *core.Resolution) { r.OptionID = "pg" }), post},
		{"approval_approved", closed(fixtureQ(core.KindApproval), core.StateAnswered, fixtureAlice, func(r *core.Resolution) {
			r.Approved = &yes
		}), post},
		{"approval_standing_approved", closed(fixtureQ(core.KindApproval), core.StateAnswered, core.Decider{}, func(r *core.Resolution) {
			g := grant
			r.Decider = core.Decider{Surface: fixtureAlice.Surface, ID: fixtureAlice.ID,
				Name: core.StandingLabel(core.Standing{GrantedBy: g.GrantedBy, GrantedAt: g.GrantedAt})}
			r.ClosedBy, r.Approved, r.Standing, r.At = core.CloserStanding, &yes, &g, fixtureAsked
		}), post},
		{"approval_denied", closed(fixtureQ(core.KindApproval), core.StateAnswered, fixtureAlice, func(r *core.Resolution) {
			r.Approved, r.Reason = &no, "not on a Friday"
		}), post},
		{"form_answered", full, post},
		{"form_timed_out_half_answered", formHalfDone, post},
		{"clarification_declined", closed(fixtureQ(core.KindClarification), core.StateDeclined, fixtureAlice, func(r *core.Resolution) {
			r.Reason = core.DeclineReason
		}), post},
		{"decision_timed_out", closed(fixtureQ(core.KindDecision), core.StateTimedOut, core.System, func(r *core.Resolution) {
			r.Reason = core.TimeoutReason
		}), post},
		{"decision_expired", closed(fixtureQ(core.KindDecision), core.StateExpired, core.System, func(r *core.Resolution) {
			r.Reason = core.ExpiredReason
		}), post},
	}
	var out []CardFixture
	for _, c := range cards {
		out = append(out, CardFixture{Name: c.name, Card: card.New(c.q, c.m), Room: room})
	}
	// A section kind no renderer knows yet (a quorum's tally, say) shows
	// its title and body: new kinds of body part need no renderer first.
	future := card.New(fixtureQ(core.KindApproval), post)
	future.Sections = append(future.Sections, card.Section{Kind: "tally", Title: "Approvals", Body: "1 of 2 approvals: Alice"})
	out = append(out, CardFixture{Name: "approval_unknown_section", Card: future, Room: room})
	// A quorum of two: one vote in, then both and closed. The tally shows
	// who voted, with names as untrusted as any.
	voting := fixtureQ(core.KindApproval)
	voting.Quorum = 2
	voting.Votes = []core.Vote{{Key: "person:alice", Choice: core.ApproveOption, Decider: fixtureAlice, At: voting.CreatedAt.Add(time.Minute)}}
	voted := closed(fixtureQ(core.KindApproval), core.StateAnswered, fixtureBob, func(r *core.Resolution) { r.Approved = &yes })
	voted.Quorum = 2
	voted.Votes = append(append([]core.Vote(nil), voting.Votes...),
		core.Vote{Key: "person:bob", Choice: core.ApproveOption, Text: "<b>ok</b>", Decider: fixtureBob, At: voting.CreatedAt.Add(2 * time.Minute)})
	// A quorum of two on a decision: Alice and Bob for DynamoDB, ops for
	// PostgreSQL; both of those for DynamoDB are named, not only the last.
	decided := closed(fixtureQ(core.KindDecision), core.StateAnswered, fixtureBob, func(r *core.Resolution) { r.OptionID = "ddb" })
	decided.Quorum = 2
	decided.Votes = []core.Vote{
		{Key: "person:alice", Choice: "ddb", Decider: fixtureAlice, At: decided.CreatedAt.Add(time.Minute)},
		{Key: "api:ops", Choice: "pg", Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "ops"}, At: decided.CreatedAt.Add(2 * time.Minute)},
		{Key: "person:bob", Choice: "ddb", Decider: fixtureBob, At: decided.CreatedAt.Add(3 * time.Minute)},
	}
	out = append(out,
		CardFixture{Name: "approval_quorum_one_vote", Card: card.New(voting, post), Room: room},
		CardFixture{Name: "approval_quorum_approved", Card: card.New(voted, post), Room: room},
		CardFixture{Name: "decision_quorum_decided", Card: card.New(decided, post), Room: room},
	)
	// A reminder that calls on people and a role (Service.Reminder fills
	// these from the route; ids that are not plain are left out).
	calling := card.NewReminder(withCard, core.SurfaceSlack, room)
	calling.Mentions = []core.Mention{{ID: "U111", Name: "Alice"}, {ID: "S0LEADS", Role: true}, {ID: "<!channel>"}}
	out = append(out, CardFixture{Name: "reminder_calling_on", Card: calling, Room: room})
	// Reminders: one in a room that holds the card, one in a room that
	// does not. A reminder has the same shape on every surface; the card
	// it points to is found among the surface's own, Slack's stands in.
	out = append(out,
		CardFixture{Name: "reminder_with_card", Card: card.NewReminder(withCard, core.SurfaceSlack, room), Room: room},
		CardFixture{Name: "reminder_without_card", Card: card.NewReminder(fixtureQ(core.KindDecision), core.SurfaceSlack, room), Room: room},
	)
	return out
}

// Golden compares got with the golden file of fixture name on surface
// (with update, it rewrites the file instead).
func Golden(t *testing.T, update bool, surface core.Surface, name string, got []byte) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	GoldenFile(t, update, filepath.Join(filepath.Dir(here), "testdata", "cards", name+"."+string(surface)+".golden"), got)
}

// GoldenFile compares got with the file at path, or with update rewrites
// it: the one golden-file check every renderer's tests use.
func GoldenFile(t *testing.T, update bool, path string, got []byte) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking the change):\n%s", path, got)
	}
}

// ReadableLinks is got, a one-way door's rendered card, with each action
// link's token (after "/act/") replaced by what it opens at at, checked
// with signer: "{<ref> for <recipient>}", or "{<ref> for <recipient>,
// menu}". Tokens are sealed with a random nonce, so the golden files hold
// this instead, and say which link does what.
func ReadableLinks(t *testing.T, signer *actionlink.Signer, got []byte, at time.Time) []byte {
	t.Helper()
	return actLink.ReplaceAllFunc(got, func(m []byte) []byte {
		c, err := signer.Verify(string(m[len("/act/"):]), at)
		if err != nil {
			t.Errorf("the link %s does not open: %v", m, err)
			return m
		}
		menu := ""
		if c.Menu {
			menu = ", menu"
		}
		return fmt.Appendf(nil, "/act/{%s for %s%s}", c.Ref.Encode(), c.To, menu)
	})
}

// actLink is an action link's path from "/act/" on, its token whole.
var actLink = regexp.MustCompile(`/act/[A-Za-z0-9_-]+`)

// LinkRefs reads one-way doors' action links for a driver, as a person
// reads a button's label: it returns, for a link (a URL ending in its
// token) sealed under serverKey, expired or not, the encoded ref of its
// action, and "" for any other link.
func LinkRefs(serverKey []byte) (func(link string) string, error) {
	signer, err := actionlink.NewSigner(serverKey)
	if err != nil {
		return nil, err
	}
	return func(link string) string {
		// The zero time: a link reads the same whether or not it has expired.
		c, err := signer.Verify(link[strings.LastIndexByte(link, '/')+1:], time.Time{})
		if err != nil {
			return ""
		}
		return c.Ref.Encode()
	}, nil
}
