package card

import (
	"strings"
	"unicode"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// An agent words its options' labels, and they are drawn as buttons beside
// askbridge's own. A label that reads as one of askbridge's ("Something
// else", which opens a text box; "Decline: let the agent decide", which
// resumes the agent with askbridge's fixed words) would look like that
// button while recording the agent's option instead (law 7): a one-item
// form's buttons carry no number, and a form's own "Something else" carries
// its item's, as the agent's option does. Such a label is quoted, so that
// no two buttons of a card read alike; and since a reader sees letters,
// not code points, one spelled in lookalikes ("Decline" with a Cyrillic
// e, or in full-width letters) reads as askbridge's too (fence.Fold, the
// one reading of lookalikes, which the fence's tag matcher shares).

// AgentLabel is an agent's label as a button (or the console's choice)
// shows it: on one line, every run of blanks and line breaks (U+2028
// and U+2029 too, which break a line in a browser wherever they stand)
// one space, and quoted where it reads as one of askbridge's own labels
// (ownLabel). Every surface that draws an agent's option beside
// askbridge's controls labels it so.
func AgentLabel(label string) string {
	label = strings.Join(strings.Fields(label), " ")
	if ownLabel(label) {
		return "“" + label + "”"
	}
	return label
}

// The console's own controls, worded at more length than a chat button
// has room for. It draws an agent's options beside them, so a label that
// reads as one of these is quoted too (ownLabels).
const (
	// LabelConsoleDecline is the console's decline; an approval's adds
	// LabelConsoleDeclineCall, a batch's LabelConsoleDeclineCalls
	// (ConsoleDeclineLabel).
	LabelConsoleDecline     = "Decline to answer: the agent proceeds on its own judgement"
	LabelConsoleDeclineCall = ", without the call"
	// LabelConsoleDeclineCalls is worded as every decline of a batch is
	// (noUnapproved): a call of it already approved is still made.
	LabelConsoleDeclineCalls = ", making " + noUnapproved
	LabelConsoleWithdraw     = "Withdraw the question"
)

// noUnapproved is what a declined approval leaves the agent to make: a
// single call was not approved, and a batch's calls decided before the
// decline keep their decisions (fence words the resume so).
const noUnapproved = "no call that was not approved"

// ConsoleDeclineLabel is the console's decline button for q: an
// approval's says the call is not made, a batch's which of its calls
// are not.
func ConsoleDeclineLabel(q *core.Question) string {
	switch {
	case q.Kind != core.KindApproval:
		return LabelConsoleDecline
	case len(q.Calls) > 0:
		return LabelConsoleDecline + LabelConsoleDeclineCalls
	}
	return LabelConsoleDecline + LabelConsoleDeclineCall
}

// ownLabels are askbridge's own button labels, as readLabel reads them,
// and the words before the colon of one that has one ("Decline").
var ownLabels = func() map[string]bool {
	out := map[string]bool{}
	for _, l := range []string{LabelApprove, LabelDeny, LabelEditApprove, LabelStandingRun, LabelDecline, LabelAnswer,
		LabelAnswerOnPage, LabelSendAnswer, LabelSomethingElse, LabelApproveAll, LabelDenyAll,
		LabelConsoleDecline, LabelConsoleDecline + LabelConsoleDeclineCall, LabelConsoleDecline + LabelConsoleDeclineCalls,
		LabelConsoleWithdraw} {
		out[readLabel(l)] = true
		if head, _, ok := strings.Cut(l, ":"); ok {
			out[readLabel(head)] = true
		}
	}
	return out
}()

// standingAgentHead is LabelStandingAgent before its hours, as readLabel
// reads it: a label that starts so reads as that button, whatever hours
// follow.
var standingAgentHead = readLabel(strings.SplitN(LabelStandingAgent, "%d", 2)[0])

// ownLabel reports whether label reads as one of askbridge's own.
func ownLabel(label string) bool {
	l := readLabel(label)
	return ownLabels[l] || strings.HasPrefix(l, standingAgentHead)
}

// readLabel is a label as a reader tells it from another: as fence.Fold
// reads it (every lookalike letter, full-width or Cyrillic, as the Latin
// one it passes for; in lower case; invisible characters dropped), its
// blanks as single spaces, without the recommended note or the stops and
// signs at its ends. The ends are trimmed before the fold too, since it
// reads a "|" as the l it looks like.
func readLabel(s string) string {
	s = strings.Join(strings.Fields(fence.Fold(trimEnds(s))), " ")
	return trimEnds(strings.TrimSuffix(s, recommendedRead))
}

// recommendedRead is RecommendedNote as readLabel meets it at a label's
// end: folded, its blank and brackets gone (the first trimEnds has taken
// the ")" from the label, and the second takes the "(").
var recommendedRead = fence.Fold(trimEnds(RecommendedNote))

// trimEnds drops the blanks, stops, signs and invisible characters at the
// ends of s.
func trimEnds(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || fence.IsInvisible(r)
	})
}
