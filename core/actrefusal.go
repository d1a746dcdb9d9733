package core

// errMayNotAnswer is the refusal of someone the routes do not let in, in
// the words the chokepoint refuses them with (forbid), without the
// refused event an attempt records.
var errMayNotAnswer = Errorf(CodeForbidden, "answer", "you may not answer this question here")

// standIn is the text ActRefusal reads a button with: a button that
// takes text (an edit's arguments) is read only with some, and who may
// act never depends on what they type.
const standIn = "-"

// ActRefusal is the refusal the chokepoint would give d for doing what
// button r does on q now, for who they are (CodeForbidden), or nil when
// it would let them; it records nothing. A door that shows someone their
// choices (an action link's page and its menu) offers only those with
// none, so that no one fills in a form that could only be refused, and
// nothing it would record is kept from them (law 6).
//
// It asks the chokepoint's own checks rather than restating them: the
// one permission check of every act (allowed, as admit asks it), then
// the answer's own build (answerBuild) on the answer r stands for
// (AnswerFor), which refuses a standing approval to someone only an
// escalation let in. The build is pure, so asking it writes nothing;
// any refusal of it but CodeForbidden is about what was typed or how
// the question stands, which the act itself reports. Like MayAnswer it
// is never enough alone: the act is checked again when it comes.
func (s *Service) ActRefusal(q *Question, r Ref, d Decider) error {
	who := s.identify(d)
	if !s.allowed(q, who) {
		return errMayNotAnswer
	}
	in, err := AnswerFor(q, r, who.Decider, standIn)
	if err != nil {
		// Not an answer (a decline, which asks allowed alone), or a
		// button that does not fit: the act says what is wrong.
		return nil
	}
	if _, err := s.answerBuild(in)(s.counted(q), s.now()); ErrorCode(err) == CodeForbidden {
		return err
	}
	return nil
}
