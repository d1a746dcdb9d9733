package fence

import (
	"fmt"
	"strconv"
)

// Closer is who or what closed a question, as the server recorded it. It
// is a server-made value, never a person's words, so the sentences it
// picks are trusted text; the opening of every resume is worded from it
// (and from the parts' own closers), not guessed from the verb.
type Closer string

// The closers.
const (
	// CloserPerson: one person answered the question as a whole.
	CloserPerson Closer = "person"
	// CloserQuorum: several people voted, and their votes settled it.
	CloserQuorum Closer = "quorum"
	// CloserStanding: a standing approval approved it at once; nobody
	// looked at it. DeciderName is whoever granted the standing approval.
	CloserStanding Closer = "standing"
	// CloserParts: every form item or batch call got its own answer, each
	// from its own decider (ItemAnswer.DecidedBy, CallOutcome.DecidedBy).
	CloserParts Closer = "parts"
	// CloserPolicy: nobody answered, and the question's policy supplied
	// the outcome (an approval, an option, an answer).
	CloserPolicy Closer = "policy"
	// CloserTimeout: the deadline passed without an answer.
	CloserTimeout Closer = "timeout"
	// CloserDecline: a person declined to answer.
	CloserDecline Closer = "decline"
	// CloserAgentCancel: the asking agent withdrew the question.
	CloserAgentCancel Closer = "agent_cancel"
	// CloserOperatorCancel: an operator withdrew the question.
	CloserOperatorCancel Closer = "operator_cancel"
	// CloserBridgeCancel: askbridge itself withdrew the question, for the
	// agent that asked it, on its own account (a door's wait for an
	// answer ran out, the server was stopping); not the agent's doing.
	CloserBridgeCancel Closer = "bridge_cancel"
	// CloserExpiry: the run the question was bound to ended.
	CloserExpiry Closer = "expiry"
	// CloserRule: a policy rule the server's operator configured decided
	// the gated tool call at the ask, allowing or denying it; nobody
	// looked at it. Reason, when given, is the rule's reason.
	CloserRule Closer = "rule"
)

// closerVerb is the one verb each closer closes a question with.
var closerVerb = map[Closer]Verb{
	CloserPerson:         VerbAnswered,
	CloserQuorum:         VerbAnswered,
	CloserStanding:       VerbAnswered,
	CloserParts:          VerbAnswered,
	CloserPolicy:         VerbTimedOut,
	CloserTimeout:        VerbTimedOut,
	CloserDecline:        VerbDeclined,
	CloserAgentCancel:    VerbCancelled,
	CloserOperatorCancel: VerbCancelled,
	CloserBridgeCancel:   VerbCancelled,
	CloserExpiry:         VerbExpired,
	CloserRule:           VerbAnswered,
}

// Closers lists every closer, for callers that map their own onto these
// and for tests.
func Closers() []Closer {
	return []Closer{CloserPerson, CloserQuorum, CloserStanding, CloserParts, CloserPolicy, CloserTimeout,
		CloserDecline, CloserAgentCancel, CloserOperatorCancel, CloserExpiry, CloserRule, CloserBridgeCancel}
}

// Verb is the verb a question closed by c closes with; "" for no closer.
func (c Closer) Verb() Verb { return closerVerb[c] }

// named reports whether a person acted on the question as a whole under
// c, so that their display name (DeciderName) is part of the resume.
func (c Closer) named() bool {
	return c == CloserPerson || c == CloserDecline || c == CloserOperatorCancel || c == CloserStanding
}

// checkCloser refuses a closer the text could not word honestly: one that
// does not fit the verb, a name where no person acted, parts decided by
// no one, a standing approval that denies, a timeout that approves.
func checkCloser(in ResumeInput) error {
	v, ok := closerVerb[in.Closer]
	if !ok {
		return fmt.Errorf("%w: closer %q is not one of %v", ErrInvalid, in.Closer, Closers())
	}
	if v != in.Verb {
		return fmt.Errorf("%w: a question closed by %s is %s, not %s", ErrInvalid, in.Closer, v, in.Verb)
	}
	if in.DeciderName != "" && !in.Closer.named() {
		return fmt.Errorf("%w: a question closed by %s names no decider", ErrInvalid, in.Closer)
	}
	st := in.Structured
	if (st.Standing != nil) != (in.Closer == CloserStanding) {
		return fmt.Errorf("%w: a standing note goes with the standing closer, and only with it", ErrInvalid)
	}
	if in.Closer == CloserStanding && (st.Approved == nil || !*st.Approved) {
		return fmt.Errorf("%w: a standing approval only approves", ErrInvalid)
	}
	if a := st.Approved; a != nil && *a && !approves(in.Closer) {
		return fmt.Errorf("%w: nobody approved a question closed by %s", ErrInvalid, in.Closer)
	}
	if in.Closer == CloserRule && (st.Approved == nil || len(st.Calls) > 0 || st.Edited) {
		return fmt.Errorf("%w: a policy rule decides one tool call, unedited, and nothing else", ErrInvalid)
	}
	if (in.Escalated || in.Reasked > 0) && v != VerbTimedOut {
		return fmt.Errorf("%w: escalations and re-asks are told only of a timeout", ErrInvalid)
	}
	for i, it := range in.Items {
		if it.DecidedBy != "" && it.DecidedBy != CloserPerson {
			return fmt.Errorf("%w: items[%d]: a form item is answered by a person", ErrInvalid, i)
		}
	}
	return checkCalls(in.Closer, st.Calls)
}

// checkCalls refuses a batch's calls that the text could not word
// honestly: an outcome without a decider or a decider without one, a
// decider that cannot decide a call, a rule's reason or a standing note
// on a call decided otherwise, a standing approval that denies, and a
// call left undecided by a batch answered in parts.
func checkCalls(closer Closer, calls []CallOutcome) error {
	for i, c := range calls {
		switch {
		case (c.Approved == nil) != (c.DecidedBy == ""):
			return fmt.Errorf("%w: calls[%d]: a call has an outcome exactly when it has a decider", ErrInvalid, i)
		case c.DecidedBy != "" && c.DecidedBy != CloserPerson && c.DecidedBy != CloserStanding && c.DecidedBy != CloserRule:
			return fmt.Errorf("%w: calls[%d]: a call is decided by a person, a standing approval or a policy rule, not %q", ErrInvalid, i, c.DecidedBy)
		case c.RuleReason != "" && c.DecidedBy != CloserRule:
			return fmt.Errorf("%w: calls[%d]: a rule's reason goes with a call a policy rule decided", ErrInvalid, i)
		case (c.Standing != nil) != (c.DecidedBy == CloserStanding):
			return fmt.Errorf("%w: calls[%d]: a standing note goes with a call a standing approval decided", ErrInvalid, i)
		case c.DecidedBy == CloserStanding && !*c.Approved:
			return fmt.Errorf("%w: calls[%d]: a standing approval only approves", ErrInvalid, i)
		case c.Approved == nil && closer == CloserParts:
			return fmt.Errorf("%w: calls[%d]: a batch answered in parts has every call decided", ErrInvalid, i)
		}
		if n := c.Standing; n != nil {
			if err := checkStandingNote(*n); err != nil {
				return fmt.Errorf("%w: calls[%d]: %v", ErrInvalid, i, err)
			}
		}
	}
	return nil
}

// approves reports whether a question closed by c can have approved a
// tool call: people, a standing approval, a policy, or parts (each call
// decided by a person or a standing approval).
func approves(c Closer) bool {
	return c == CloserPerson || c == CloserQuorum || c == CloserStanding || c == CloserParts || c == CloserPolicy || c == CloserRule
}

// progress is how far an unfinished question got before it closed, in
// server-made words: "1 of the 2 tool calls of this batch had been
// decided", and what that leaves. ok is false when nothing had happened.
func progress(in ResumeInput) (done, rest trusted, ok bool) {
	calls, decided := in.Structured.Calls, 0
	for _, c := range calls {
		if c.Approved != nil {
			decided++
		}
	}
	switch {
	case decided > 0:
		return trusted(strconv.Itoa(decided) + " of the " + strconv.Itoa(len(calls)) + " tool calls of this batch had been decided"),
			"nobody decided the rest", true
	case len(in.Items) > 0:
		return trusted(strconv.Itoa(len(in.Items)) + " of this form's items had been answered"),
			"the form has no answer as a whole", true
	case len(in.Votes) > 0:
		return trusted(count(len(in.Votes), "person had", "people had") + " voted"),
			"their votes did not settle it", true
	}
	return "", "", false
}

// count is n and its noun: "1 person had", "3 people had".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// unanswered words a close without an answer: alone, and after some
// progress (followed by what was done and what that left).
var unanswered = map[Closer]struct{ alone, after, mid trusted }{
	CloserTimeout:        {"Nobody answered before the deadline.", "The deadline passed after ", ""},
	CloserPolicy:         {"Nobody answered before the deadline.", "The deadline passed after ", ""},
	CloserDecline:        {"A human declined to answer this question.", "A human declined to answer this question after ", ""},
	CloserAgentCancel:    {"The asking agent withdrew this question; nobody answered it.", "The asking agent withdrew this question after ", ""},
	CloserOperatorCancel: {"An operator withdrew this question; nobody answered it.", "An operator withdrew this question after ", ""},
	CloserBridgeCancel:   {"askbridge itself withdrew this question; nobody answered it.", "askbridge itself withdrew this question after ", ""},
	CloserExpiry:         {"The run this question was bound to has ended, so the question expired; nobody answered it.", "The run this question was bound to ended after ", ", so the question expired"},
}

// undecidedCall words, for one undecided call's own result, how its
// batch closed.
var undecidedCall = map[Closer]trusted{
	CloserTimeout:        "Nobody decided this tool call before the deadline.",
	CloserPolicy:         "Nobody decided this tool call before the deadline.",
	CloserDecline:        "A human declined to decide this batch before this tool call was decided.",
	CloserAgentCancel:    "The asking agent withdrew this batch before this tool call was decided.",
	CloserOperatorCancel: "An operator withdrew this batch before this tool call was decided.",
	CloserBridgeCancel:   "askbridge itself withdrew this batch before this tool call was decided.",
	CloserExpiry:         "The run this batch was bound to has ended, so it expired before this tool call was decided.",
}

// writeOpening words who or what closed the question: the lines after
// the preamble.
func writeOpening(m *message, in ResumeInput) {
	switch in.Closer {
	case CloserPerson:
		m.line("A human answered this question.")
	case CloserQuorum:
		m.line("People voted on this question, and their votes settled it; every vote follows below.")
	case CloserStanding:
		m.line("A standing approval answered this question at once; no human looked at this call.")
	case CloserParts:
		m.line(partsLine(in))
	case CloserRule:
		m.line("A policy rule of this server decided this question at once, when it was asked; no human looked at this call.")
	default:
		u := unanswered[in.Closer]
		if in.Structured.Undecided {
			m.line(undecidedCall[in.Closer])
		} else if done, rest, ok := progress(in); ok {
			m.line(u.after + done + u.mid + "; " + rest + ".")
		} else {
			m.line(u.alone)
		}
	}
	if in.Escalated {
		m.line("It had been escalated to more deciders when its first deadline passed.")
	}
	if in.Reasked > 0 {
		m.line(trusted("It had been asked again " + count(in.Reasked, "time", "times") + " after its deadline passed."))
	}
}

// partsLine words a question every part of which was answered on its
// own: by people (People of them), by standing approvals, or both.
func partsLine(in ResumeInput) trusted {
	people := "A human"
	if in.People > 1 {
		people = strconv.Itoa(in.People) + " people"
	}
	if calls := in.Structured.Calls; len(calls) > 0 {
		// Calls decided at the ask, by standing approvals or by policy
		// rules, are told apart from those people decided.
		standing, ruled, grants := 0, 0, map[string]bool{}
		for _, c := range calls {
			switch {
			case c.Standing != nil:
				standing++
				grants[c.Standing.ID] = true
			case c.DecidedBy == CloserRule:
				ruled++
			}
		}
		auto := "Standing approvals"
		switch {
		case ruled > 0 && standing > 0:
			auto = "Policy rules and standing approvals"
		case ruled > 0:
			auto = "Policy rules of this server"
		case len(grants) == 1:
			auto = "A standing approval"
		}
		atAsk := standing + ruled
		switch {
		case atAsk == len(calls):
			return trusted(auto + " decided every call of this batch at once; no human looked at them.")
		case atAsk == 0 && in.People > 1:
			return trusted(people + " decided the calls of this batch between them; each call below names who decided it.")
		case atAsk == 0:
			return "A human decided every call of this batch; each call below names them."
		}
		return trusted(auto + " decided " + strconv.Itoa(atAsk) + " of the " + strconv.Itoa(len(calls)) +
			" calls of this batch at once, with no human looking at them; " + lower(people) + " decided the other " +
			strconv.Itoa(len(calls)-atAsk) + ". Each call below says which.")
	}
	if in.People > 1 {
		return trusted(people + " answered the items of this form between them; each item below names who answered it.")
	}
	return "A human answered every item of this form; each item below names them."
}

// lower is "a human" for "A human" and leaves "2 people" as it is.
func lower(s string) string {
	if s == "A human" {
		return "a human"
	}
	return s
}

// writeWho introduces whoever acted on the question as a whole: a name
// region where a person did, a server-made line where nobody did. A
// quorum's voters and the parts' deciders are named with their votes and
// parts instead.
func writeWho(m *message, in ResumeInput) {
	switch in.Closer {
	case CloserPerson, CloserDecline:
		m.line("The decider's display name follows. It is an untrusted display name: that person chose it, and it proves nothing about who they are.")
	case CloserOperatorCancel:
		m.line("The display name of the operator who withdrew it follows. It is an untrusted display name: that person chose it, and it proves nothing about who they are.")
	case CloserStanding:
		st := in.Structured.Standing
		m.line(trusted("A standing approval (id " + st.ID + ") covered it; it was granted at " + st.GrantedAt + " by the person whose display name follows. It is an untrusted display name: that person chose it, and it proves nothing about who they are."))
	case CloserAgentCancel:
		m.line("No human closed it; the asking agent did.")
		return
	case CloserBridgeCancel:
		m.line("No human closed it, nor the asking agent; askbridge did.")
		return
	case CloserTimeout, CloserPolicy, CloserExpiry:
		m.line("No human closed it; the server did.")
		return
	case CloserRule:
		m.line("No human closed it; the server did, by a rule its operator configured.")
		return
	default:
		return
	}
	m.region(Wrap(TagDeciderName, CleanName(in.DeciderName)))
}

// subject is who a question's outcome is told of: the human, the voters.
func subject(c Closer) (string, bool) {
	switch c {
	case CloserPerson:
		return "The human", true
	case CloserQuorum:
		return "The voters", true
	}
	return "", false
}

// checkStandingNote keeps a standing note's server-made parts plain.
func checkStandingNote(n StandingNote) error {
	if err := checkQuestionID(n.ID); err != nil {
		return fmt.Errorf("standing approval id: %v", err)
	}
	if err := checkQuestionID(n.GrantedAt); err != nil {
		return fmt.Errorf("standing approval time: %v", err)
	}
	return nil
}
