package core

// batchKind is an approval of several tool calls asked at once, decided
// call by call or all at once, and closed once every call is decided.
// Its rules live beside its other parts: batch.go (its calls, their
// check, the standing approvals and rules that decide some at the ask),
// batchanswer.go (its decisions and buttons), batchresult.go (its
// outcomes and resume). Edits and standing approvals plug in per call,
// in batchItems.
var batchKind = kind{
	ask:    checkBatchAsk,
	button: batchAnswerFor,
	// Items, edits and standing approvals of the whole are refused in
	// its own words (batchDecisions): they go on each call.
	takes:  answerFields{calls: true, items: true, edits: true},
	answer: batchAnswer,
	parts:  "calls",
	// A batch closes once every call is decided.
	next:   nextEveryFeature,
	resume: batchResume,
}

// checkBatchAsk checks a batch: calls, each with its own tool, arguments
// and editable keys, and nothing of a single call's.
func checkBatchAsk(in AskInput) error {
	const op = "ask"
	if in.hasOptions() || in.hasItems() {
		return Errorf(CodeInvalid, op, "an approval takes a tool and arguments, not options or items")
	}
	if in.Tool != "" || len(in.Arguments) > 0 || in.Editable != nil {
		return Errorf(CodeInvalid, op, "a batch takes calls, each with its own tool, arguments and editable keys, not tool or arguments of its own")
	}
	return validateCalls(in.Calls)
}

// batchAnswer reads the decisions an answer makes into the calls' item
// answers; res closes the batch once every call has one.
func batchAnswer(q *Question, in AnswerInput, res Resolution) (Resolution, []ItemAnswer, error) {
	ds, err := batchDecisions(q, in)
	if err != nil {
		return res, nil, err
	}
	items, err := batchItems(q, ds, in.Decider, res.At)
	return res, items, err
}
