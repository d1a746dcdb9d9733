package card

import (
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// Labels of a batch card's own buttons.
const (
	LabelApproveAll = "Approve all"
	LabelDenyAll    = "Deny all"
)

// batchSections are a batch card's calls: each with its tool, arguments
// (as approved, once edited) and hash, its decision once made, and while
// open and undecided its own buttons, numbered like a form's.
func batchSections(q *core.Question) []Section {
	var out []Section
	for i, co := range core.CallOutcomes(q) {
		args, sum := co.Call.Arguments, co.Call.ArgumentsSHA256
		if d := co.Decision; d != nil && d.Edit != nil {
			args, sum = d.Edit.Arguments, d.Edit.ArgumentsSHA256
		}
		s := Section{Kind: SectionCall, Index: i, Title: co.Call.Tool, Body: core.PrettyJSON(args)}
		if len(sum) >= hashShown {
			s.Hash = sum[:hashShown]
		}
		if d := co.Decision; d != nil {
			s.Answer = &ItemAnswered{Text: callVerdict(d), By: partBy(*d), Surface: d.Surface(), At: d.At}
		} else if q.Open() {
			num := fmt.Sprintf("%d. ", i+1)
			ref := core.Ref{QuestionID: q.ID, Item: i}
			ref.Action = core.RefApprove
			s.Actions = append(s.Actions, Action{Label: num + LabelApprove, Ref: ref, Style: StylePrimary})
			ref.Action = core.RefDeny
			s.Actions = append(s.Actions, Action{Label: num + LabelDeny, Ref: ref, Style: StyleDanger, Input: InputOptional})
			if co.Call.Editable.Any() {
				ref.Action = core.RefEdit
				s.Actions = append(s.Actions, Action{Label: num + LabelEditApprove, Ref: ref, Style: StyleDefault,
					Input: InputArguments, Prefill: s.Body})
			}
			if co.Call.Standing != nil {
				ref.Action = core.RefStanding
				s.Actions = append(s.Actions, Action{Label: num + LabelStandingRun, Ref: ref, Style: StyleDefault})
			}
		}
		out = append(out, s)
	}
	return out
}

// batchAllActions are "Approve all" and "Deny all": they decide every
// call still undecided.
func batchAllActions(q *core.Question) []Action {
	ref := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}
	all := []Action{{Label: LabelApproveAll, Ref: ref, Style: StylePrimary}}
	ref.Action = core.RefDeny
	return append(all, Action{Label: LabelDenyAll, Ref: ref, Style: StyleDanger, Input: InputOptional})
}

func batchProgress(q *core.Question) *FormProgress {
	return &FormProgress{Done: len(q.Answers), Total: len(q.Calls)}
}

// callVerdict is one decided call's verdict for people.
func callVerdict(a *core.ItemAnswer) string {
	switch {
	case a.OptionID == core.ApproveOption && a.Edit != nil:
		return "Approved with changes: " + core.ChangesLine(a.Edit)
	case a.OptionID == core.ApproveOption:
		return "Approved"
	}
	return "Denied"
}

// batchChoice is a closed batch's verdicts, one line per call.
func batchChoice(q *core.Question) string {
	var lines []string
	for i, co := range core.CallOutcomes(q) {
		v := "Not decided"
		if co.Decision != nil {
			v = callVerdict(co.Decision)
		}
		lines = append(lines, fmt.Sprintf("%d. %s: %s", i+1, co.Call.Tool, v))
	}
	return strings.Join(lines, "\n")
}

// batchNote is the private note after a click on a batch card.
func batchNote(q *core.Question, r core.Ref) string {
	p := batchProgress(q)
	if r.Item >= 0 && r.Item < len(q.Calls) {
		if a, ok := q.Answered(q.Calls[r.Item].ToolCallID); ok {
			note := fmt.Sprintf("Recorded (%s): %d. %s → %s", p, r.Item+1, q.Calls[r.Item].Tool, callVerdict(&a))
			if r.Action == core.RefStanding {
				note += "; later asks for " + q.Calls[r.Item].Tool + " by this agent in this run are approved at once"
			}
			return note
		}
	}
	if r.Action == core.RefDeny {
		return fmt.Sprintf("Recorded (%s): denied every call still undecided", p)
	}
	return fmt.Sprintf("Recorded (%s): approved every call still undecided", p)
}
