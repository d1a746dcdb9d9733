package core

import (
	"encoding/json"
	"testing"
)

// BenchmarkAnswerBuild is what an answer's build costs, per kind: the
// pure part of a close that the kinds' homes dispatch (kind.go). Its
// yardstick, in the same run, is one json.Marshal of the answer's
// resolution.
func BenchmarkAnswerBuild(b *testing.B) {
	s := nextService(&testing.T{})
	rows := []struct {
		name string
		q    *Question
		in   AnswerInput
	}{
		{"clarification", seed(KindClarification), AnswerInput{Text: "eu-west-1"}},
		{"decision", seed(KindDecision), AnswerInput{OptionID: "pg"}},
		{"approval", seed(KindApproval), AnswerInput{OptionID: ApproveOption, Text: "ok"}},
		{"batch", seed(KindApproval, batch), AnswerInput{OptionID: ApproveOption}},
		{"form", seed(KindForm), AnswerInput{Items: []ItemInput{{ItemID: "day", OptionID: "mon"}}}},
	}
	for _, r := range rows {
		in := r.in
		in.QuestionID, in.Decider = r.q.ID, s.identify(apiAda).Decider
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.answerBuild(in)(r.q, nextNow); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("yardstick-json", func(b *testing.B) {
		res := Resolution{State: StateAnswered, ClosedBy: CloserPerson, Answer: "eu-west-1", At: nextNow}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
