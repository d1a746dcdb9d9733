package card

import (
	"encoding/json"
	"fmt"

	"github.com/askbridge/askbridge/core"
)

// editAction is an editable call's "Edit and approve" button: it collects
// the arguments, starting from those asked for.
func editAction(q *core.Question, pretty string) Action {
	return Action{Label: LabelEditApprove, Ref: core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit},
		Style: StyleDefault, Input: InputArguments, Prefill: pretty}
}

// shownCall is the arguments a card shows, with their hash: those asked
// for, or once approved with changes, those approved (what was approved
// is what matters afterwards; the outcome names the keys that changed).
func shownCall(q *core.Question) (json.RawMessage, string) {
	if r := q.Resolution; r != nil && r.Edit != nil {
		return r.Edit.Arguments, r.Edit.ArgumentsSHA256
	}
	return q.Call.Arguments, q.Call.ArgumentsSHA256
}

// standingActions are the buttons that approve and grant a standing
// approval, as far as the ask offers them.
func standingActions(q *core.Question) []Action {
	offer := q.Call.Standing
	if offer == nil {
		return nil
	}
	ref := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefStanding}
	out := []Action{{Label: LabelStandingRun, Ref: ref, Style: StyleDefault}}
	if offer.Hours > 0 {
		ref.Option = 1
		out = append(out, Action{Label: fmt.Sprintf(LabelStandingAgent, offer.Hours), Ref: ref, Style: StyleDefault})
	}
	return out
}

// standingNote is the private note after an approve that asked for a
// standing approval: what it grants, or, when none was granted (it could
// not be stored), that the approve alone counted.
func standingNote(q *core.Question, r core.Ref) string {
	if q == nil || q.Call == nil {
		return "Recorded: Approved"
	}
	if q.Resolution == nil || q.Resolution.Grants == nil {
		return "Recorded: Approved, this call alone: the standing approval could not be stored, so later asks still go to a person."
	}
	how := "for the rest of this run"
	if r.Option == 1 && q.Call.Standing != nil {
		how = fmt.Sprintf("for the next %d hours", q.Call.Standing.Hours)
	}
	return "Recorded: Approved. Later asks for " + q.Call.Tool + " by this agent are approved at once " + how + ", unless an operator revokes it."
}

// approvalBody is a single call's section: its tool, its arguments (as
// approved, once edited) and hash, and while open its buttons, the
// features' among them (edit, standing approvals).
func approvalBody(c *Card, q *core.Question, open bool) {
	if q.Call == nil {
		return
	}
	args, sum := shownCall(q)
	s := Section{Kind: SectionCall, Title: q.Call.Tool, Body: core.PrettyJSON(args)}
	if len(sum) >= hashShown {
		s.Hash = sum[:hashShown]
	}
	if open {
		s.Actions = []Action{
			{Label: LabelApprove, Ref: refOf(q, core.RefApprove, -1, 0), Style: StylePrimary},
			{Label: LabelDeny, Ref: refOf(q, core.RefDeny, -1, 0), Style: StyleDanger, Input: InputOptional},
		}
		if q.Call.Editable.Any() && q.Quorum <= 1 { // a vote takes no edit (core's approvalAnswer)
			s.Actions = append(s.Actions, editAction(q, s.Body))
		}
		s.Actions = append(s.Actions, standingActions(q)...)
	}
	c.Sections = append(c.Sections, s)
}

// approvalChoice is a single call's verdict, with its changes if edited.
func approvalChoice(q *core.Question) string {
	r := q.Resolution
	if r.Approved != nil && *r.Approved {
		if r.Edit != nil {
			return "Approved with changes: " + core.ChangesLine(r.Edit)
		}
		return "Approved"
	}
	return "Denied"
}
