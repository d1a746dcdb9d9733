package slack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// TestCardWorstCaseFitsSlack fills every field to core's maximum, with
// characters that grow when escaped or count double, and checks every
// Block Kit limit and the message's total size.
func TestCardWorstCaseFitsSlack(t *testing.T) {
	long := func(n int) string { return repeatRunes("&<😀>é", n) }
	ids := func(i int) string { return strings.Repeat("x", core.MaxIDLen-3) + string(rune('a'+i)) + "zz" }
	var opts []core.Option
	for i := range core.MaxOptions {
		opts = append(opts, core.Option{ID: ids(i), Title: long(core.MaxTitleLen), Writeup: long(core.MaxWriteupLen), Recommended: i == 3})
	}
	var items []core.FormItem
	for i := range core.MaxItems {
		var fo []core.FormOption
		for j := range core.MaxItemOptions {
			fo = append(fo, core.FormOption{ID: ids(j), Label: long(core.MaxTitleLen), Description: long(core.MaxWriteupLen), Recommended: j == 0})
		}
		items = append(items, core.FormItem{ID: ids(i), Question: long(core.MaxTextLen), Options: fo})
	}
	args, _ := json.Marshal(map[string]string{"k": long(core.MaxArgumentsLen / 8)})
	mk := func(kind core.Kind) *core.Question {
		q := base(kind)
		q.Agent, q.Labels = core.AgentID(long(core.MaxIDLen)), core.Labels{Project: long(core.MaxIDLen), Task: long(core.MaxIDLen)}
		q.Text, q.Context, q.Reversibility = long(core.MaxTextLen), long(core.MaxContextLen), core.HardToReverse
		return q
	}
	dec, form, appr, clar := mk(core.KindDecision), mk(core.KindForm), mk(core.KindApproval), mk(core.KindClarification)
	dec.Options, form.Items = opts, items
	appr.Call = &core.ToolCall{Tool: long(core.MaxToolLen), Arguments: args, ArgumentsSHA256: strings.Repeat("a", 64)}
	big := core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: long(200)}
	halfForm := *form
	for i := range 3 {
		halfForm.Answers = append(halfForm.Answers, core.ItemAnswer{ItemID: items[i].ID, Text: long(core.MaxAnswerLen), Decider: big, At: t0})
	}
	closedClar := *clar
	closedClar.State = core.StateAnswered
	closedClar.Resolution = &core.Resolution{State: core.StateAnswered, Decider: big, At: t0, Answer: long(core.MaxAnswerLen), Reason: long(core.MaxReasonLen)}
	closedForm := *form
	closedForm.State = core.StateAnswered
	closedForm.Resolution = &core.Resolution{State: core.StateAnswered, Decider: big, At: t0}
	for i := range items {
		closedForm.Answers = append(closedForm.Answers, core.ItemAnswer{ItemID: items[i].ID, Text: long(core.MaxAnswerLen), Decider: big, At: t0})
	}
	cards := map[string]*core.Question{"decision": dec, "form": form, "form_half": &halfForm, "approval": appr,
		"clarification": clar, "closed_clarification": &closedClar, "closed_form": &closedForm}
	for name, q := range worstBatches(mk, long, big) {
		cards[name] = q
	}
	for name, q := range cards {
		t.Run(name, func(t *testing.T) {
			m := cardFor(q, true)
			checkLimits(t, m)
			if n := jsonLen(m.Blocks); n > maxBlocksJSON {
				t.Fatalf("blocks are %d characters of JSON; keep them under %d", n, maxBlocksJSON)
			}
			if q.IsBatch() && q.Open() {
				checkCrowded(t, q, m)
			}
		})
	}
	var many []*core.Question
	for range 40 {
		many = append(many, dec)
	}
	checkLimits(t, Digest(core.Digest{From: t0, To: t0.Add(time.Hour), Asked: many, Open: many}))
	checkLimits(t, Reminder(card.NewReminder(dec, core.SurfaceSlack, "C1")))
	checkLimits(t, Note(long(5000)))
}

// worstBatches are batches of core.MaxBatchCalls calls, each as large as
// core allows (tool name, arguments as asked and as edited, reasons and
// names), with every per-call button, open and closed: undecided, half
// decided in every way a call can be (edited, denied with a reason, by a
// standing approval, by a policy rule), all decided, denied as a whole,
// declined and timed out.
func worstBatches(mk func(core.Kind) *core.Question, long func(int) string, big core.Decider) map[string]*core.Question {
	// Arguments near core's limit whose shown text doubles as JSON (quotes
	// and backslashes) or grows when escaped, over many lines.
	kv := map[string]string{}
	for i := 0; ; i++ {
		kv[fmt.Sprintf("k%03d", i)] = repeatRunes(`"\&<😀>é`, 60)
		if raw, _ := json.Marshal(kv); len(raw) > core.MaxArgumentsLen-600 {
			delete(kv, fmt.Sprintf("k%03d", i))
			break
		}
	}
	args, _ := json.Marshal(kv)
	var changes []core.KeyChange
	for k := range kv {
		changes = append(changes, core.KeyChange{Key: k + long(40), Change: core.KeyChanged})
	}
	open := mk(core.KindApproval)
	open.Call = nil
	for i := range core.MaxBatchCalls {
		open.Calls = append(open.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i), ToolCall: core.ToolCall{
			Tool: long(core.MaxToolLen), Arguments: args, ArgumentsSHA256: strings.Repeat("a", 64),
			Editable: &core.Editable{All: true}, Standing: &core.StandingOffer{Hours: 8}}})
	}
	decide := func(i int) core.ItemAnswer {
		a := core.ItemAnswer{ItemID: open.Calls[i].ToolCallID, OptionID: core.ApproveOption, Decider: big, At: t0}
		switch i % 4 {
		case 0:
			a.Edit = &core.ArgumentEdit{Arguments: args, ArgumentsSHA256: strings.Repeat("b", 64),
				AskedArgumentsSHA256: strings.Repeat("a", 64), Changes: changes}
		case 1:
			a.OptionID, a.Text = core.DenyOption, long(core.MaxReasonLen)
		case 2:
			a.Standing = &core.StandingUse{ID: "st-1", GrantedBy: big, GrantedAt: t0}
		case 3:
			a.Policy = &core.RuleUse{Route: long(core.MaxIDLen), Index: 3, Name: long(core.MaxIDLen), Decide: core.DecideDeny}
			a.OptionID, a.Text = core.DenyOption, long(core.MaxReasonLen)
		}
		return a
	}
	closed := func(st core.State, closer core.Closer, decided int, reason string) *core.Question {
		q := *open
		q.Answers = nil
		for i := range decided {
			q.Answers = append(q.Answers, decide(i))
		}
		if st != core.StateOpen {
			q.State = st
			q.Resolution = &core.Resolution{State: st, ClosedBy: closer, Decider: big, At: t0, Reason: reason}
		}
		return &q
	}
	return map[string]*core.Question{
		"batch":                closed(core.StateOpen, "", 0, ""),
		"batch_half":           closed(core.StateOpen, "", core.MaxBatchCalls/2, ""),
		"batch_one_left":       closed(core.StateOpen, "", core.MaxBatchCalls-1, ""),
		"closed_batch":         closed(core.StateAnswered, core.CloserParts, core.MaxBatchCalls, ""),
		"closed_batch_denied":  closed(core.StateAnswered, core.CloserPerson, core.MaxBatchCalls, long(core.MaxReasonLen)),
		"closed_batch_decline": closed(core.StateDeclined, "", core.MaxBatchCalls/2, ""),
		"closed_batch_timeout": closed(core.StateTimedOut, "", core.MaxBatchCalls/2, core.TimeoutReason),
	}
}

func repeatRunes(unit string, n int) string {
	rs := []rune(unit)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[i%len(rs)]
	}
	return string(out)
}

// jsonLen is the size of the blocks' JSON as Slack counts it: without Go's
// HTML escaping, in UTF-16 units.
func jsonLen(blocks []slack.Block) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(blocks)
	// slack-go's block types marshal themselves with HTML escaping.
	return textLen(strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(buf.String()))
}

// checkLimits enforces Block Kit's documented limits on a rendered
// message.
func checkLimits(t *testing.T, m Message) {
	t.Helper()
	if len(m.Blocks) > maxBlocks {
		t.Fatalf("%d blocks", len(m.Blocks))
	}
	if textLen(m.Text) > maxFallback {
		t.Fatalf("fallback text is %d characters", textLen(m.Text))
	}
	ids := map[string]bool{}
	for _, b := range m.Blocks {
		raw, _ := json.Marshal(b)
		var v struct {
			BlockID string `json:"block_id"`
		}
		_ = json.Unmarshal(raw, &v)
		if v.BlockID == "" || len(v.BlockID) > maxActionID || ids[v.BlockID] {
			t.Fatalf("block_id %q empty, too long or repeated", v.BlockID)
		}
		ids[v.BlockID] = true
		switch b := b.(type) {
		case *slack.SectionBlock:
			if n := textLen(b.Text.Text); n > maxSectionText {
				t.Fatalf("section %s text is %d characters", b.BlockID, n)
			}
		case *slack.ContextBlock:
			for _, el := range b.ContextElements.Elements {
				if tx, ok := el.(*slack.TextBlockObject); ok && textLen(tx.Text) > maxSectionText {
					t.Fatalf("context %s is %d characters", b.BlockID, textLen(tx.Text))
				}
			}
		case *slack.ActionBlock:
			if n := len(b.Elements.ElementSet); n > 25 {
				t.Fatalf("actions %s has %d elements", b.BlockID, n)
			}
		}
	}
	actionIDs := map[string]bool{}
	for _, b := range buttons(m.Blocks) {
		if textLen(b.Text.Text) > maxButtonText || len(b.ActionID) > maxActionID || len(b.Value) > maxValue || actionIDs[b.ActionID] {
			t.Fatalf("button %+v breaks a limit or repeats an action_id", b)
		}
		actionIDs[b.ActionID] = true
	}
}
