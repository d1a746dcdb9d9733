package core

import (
	"fmt"
	"time"

	"github.com/askbridge/askbridge/fence"
)

// formKind is one to four items, each answered by one of its options or
// free text, by one person or several, and closed once every item has an
// answer.
var formKind = kind{
	ask: func(in AskInput) error {
		if in.hasOptions() || in.hasTool() {
			return Errorf(CodeInvalid, "ask", "a form takes items, not options, tool or arguments")
		}
		return validateItems(in.Items)
	},
	button: func(q *Question, r Ref, in AnswerInput, text string) (AnswerInput, error) {
		switch {
		case r.Action == RefOption && r.Item >= 0:
			if r.Item >= len(q.Items) || r.Option >= len(q.Items[r.Item].Options) {
				return in, errNoOption
			}
			in.Items = []ItemInput{{ItemID: q.Items[r.Item].ID, OptionID: q.Items[r.Item].Options[r.Option].ID}}
		case r.Action == RefText && r.Item >= 0 && r.Item < len(q.Items):
			in.Items = []ItemInput{{ItemID: q.Items[r.Item].ID, Text: text}}
		default:
			return in, errNotFitting
		}
		return in, nil
	},
	takes: answerFields{items: true},
	answer: func(q *Question, in AnswerInput, res Resolution) (Resolution, []ItemAnswer, error) {
		items, err := formItems(q, in, in.Decider, res.At)
		return res, items, err
	},
	parts: "items",
	// A form closes once every item has an answer.
	next: nextEveryFeature,
	resume: func(in *fence.ResumeInput, q *Question) {
		// Every item answered so far, by whom: all of them once the form
		// is answered, those given before it closed otherwise.
		for _, a := range q.Answers {
			in.Items = append(in.Items, fence.ItemAnswer{ItemID: a.ItemID, OptionID: a.OptionID, Text: a.Text,
				DecidedBy: closers[a.DecidedBy()], Decider: DeciderLabel(a.Decider)})
		}
		in.People = people(q.Answers)
	},
}

// formItems checks a form answer: each item exists, is not answered yet,
// and gets exactly one existing option or non-blank free text.
func formItems(q *Question, in AnswerInput, d Decider, now time.Time) ([]ItemAnswer, error) {
	const op = "answer"
	if in.Text != "" || in.OptionID != "" {
		return nil, Errorf(CodeInvalid, op, "a form is answered item by item")
	}
	if len(in.Items) == 0 {
		return nil, Errorf(CodeInvalid, op, "the answer must name at least one form item")
	}
	seen := map[string]bool{}
	out := make([]ItemAnswer, 0, len(in.Items))
	for _, ii := range in.Items {
		item, ok := q.Item(ii.ItemID)
		if !ok {
			return nil, Errorf(CodeInvalid, op, "item %q is not one of this form's items", ii.ItemID)
		}
		if seen[ii.ItemID] {
			return nil, Errorf(CodeInvalid, op, "item %q is answered twice", ii.ItemID)
		}
		seen[ii.ItemID] = true
		if prev, done := q.Answered(ii.ItemID); done {
			// An agent's host answers forms too (the MCP door), and
			// reads this unfenced.
			return nil, decidedFirst(op, fmt.Sprintf("item %q", ii.ItemID), "answered", prev)
		}
		switch {
		case ii.OptionID != "" && ii.Text != "":
			return nil, Errorf(CodeInvalid, op, "item %q takes an option or free text, not both", ii.ItemID)
		case ii.OptionID != "":
			found := false
			for _, o := range item.Options {
				found = found || o.ID == ii.OptionID
			}
			if !found {
				return nil, Errorf(CodeInvalid, op, "option %q is not one of item %q's options", ii.OptionID, ii.ItemID)
			}
		case blank(ii.Text):
			return nil, Errorf(CodeInvalid, op, "item %q: the answer must not be blank", ii.ItemID)
		default:
			if err := checkLen(op, "items.text", ii.Text, MaxAnswerLen); err != nil {
				return nil, err
			}
		}
		out = append(out, ItemAnswer{ItemID: ii.ItemID, OptionID: ii.OptionID, Text: ii.Text, Decider: publicDecider(d), At: now})
	}
	return out, nil
}
