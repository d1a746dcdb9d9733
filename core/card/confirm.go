package card

import (
	"slices"

	"github.com/askbridge/askbridge/core"
)

// NeedsConfirm reports whether in picks something on q that cannot be
// undone easily, so a surface that can show it back before recording it
// does (the console's confirmation, the CLI's prompt at a terminal): on
// a hard-to-reverse question, an option, an approve (of the call, edited,
// with a standing approval, or of a batch's calls) or a form's answers.
// A deny, a decline and a clarification's text take one step. One rule,
// so that no surface asks less of a person than another.
func NeedsConfirm(q *core.Question, in core.AnswerInput) bool {
	if q.Reversibility != core.HardToReverse {
		return false
	}
	switch q.Kind {
	case core.KindDecision:
		return in.OptionID != ""
	case core.KindForm:
		return len(in.Items) > 0
	case core.KindApproval:
		if in.OptionID == core.ApproveOption || in.Standing != nil || in.Arguments != nil {
			return true
		}
		return slices.ContainsFunc(in.Calls, func(c core.CallDecision) bool { return c.OptionID == core.ApproveOption })
	}
	return false
}
