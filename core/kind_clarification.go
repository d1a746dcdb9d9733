package core

import "github.com/askbridge/askbridge/fence"

// clarificationKind is a question answered in free text.
var clarificationKind = kind{
	ask: func(in AskInput) error {
		if in.hasOptions() || in.hasItems() || in.hasTool() {
			return Errorf(CodeInvalid, "ask", "a clarification takes no options, items, tool or arguments")
		}
		return nil
	},
	button: func(q *Question, r Ref, in AnswerInput, text string) (AnswerInput, error) {
		if r.Action != RefText || r.Item != -1 {
			return in, errNotFitting
		}
		in.Text = text
		return in, nil
	},
	answer: func(q *Question, in AnswerInput, res Resolution) (Resolution, []ItemAnswer, error) {
		const op = "answer"
		if blank(in.Text) {
			return res, nil, Errorf(CodeInvalid, op, "the answer must not be blank")
		}
		if in.OptionID != "" {
			return res, nil, Errorf(CodeInvalid, op, "a clarification takes a text answer, not an option")
		}
		if err := checkLen(op, "answer", in.Text, MaxAnswerLen); err != nil {
			return res, nil, err
		}
		res.Answer = in.Text
		return res, nil, nil
	},
	// A clarification closes with its answer, or a close without one
	// (resolve.go's systemClose). Every kind's rule takes every feature
	// (next_kinds.go): the stores' tests vote on clarifications.
	next: nextEveryFeature,
	resume: func(in *fence.ResumeInput, q *Question) {
		if q.State == StateAnswered {
			in.Body = q.Resolution.Answer
		}
	},
}
