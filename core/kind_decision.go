package core

import (
	"strings"

	"github.com/askbridge/askbridge/fence"
)

// decisionKind is a question answered by choosing one of its options,
// by one person or by a quorum's vote.
var decisionKind = kind{
	ask: func(in AskInput) error {
		if in.hasItems() || in.hasTool() {
			return Errorf(CodeInvalid, "ask", "a decision takes options, not items, tool or arguments")
		}
		return validateOptions(in.Options)
	},
	button: func(q *Question, r Ref, in AnswerInput, text string) (AnswerInput, error) {
		if r.Action != RefOption || r.Item != -1 {
			return in, errNotFitting
		}
		if r.Option >= len(q.Options) {
			return in, errNoOption
		}
		in.OptionID, in.Text = q.Options[r.Option].ID, text
		return in, nil
	},
	answer: func(q *Question, in AnswerInput, res Resolution) (Resolution, []ItemAnswer, error) {
		const op = "answer"
		if in.OptionID == "" {
			return res, nil, Errorf(CodeInvalid, op, "a decision is answered by choosing an option")
		}
		opt, ok := q.Option(in.OptionID)
		if !ok {
			return res, nil, Errorf(CodeInvalid, op, "option %q is not one of this question's options", in.OptionID)
		}
		if err := checkLen(op, "note", in.Text, MaxReasonLen); err != nil {
			return res, nil, err
		}
		res.OptionID, res.Answer, res.Reason = opt.ID, opt.Writeup, strings.TrimSpace(in.Text)
		return res, nil, nil
	},
	votes: true,
	next:  nextEveryFeature,
	resume: func(in *fence.ResumeInput, q *Question) {
		if q.State == StateAnswered {
			in.Body = q.Resolution.Answer
			in.Structured.ChosenOptionID = q.Resolution.OptionID
		}
	},
}
