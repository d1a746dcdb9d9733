package card

import (
	"strings"
	"unicode"

	"github.com/askbridge/askbridge/fence"
)

// An agent words its options' labels, and they are drawn as buttons beside
// askbridge's own. A label that reads as one of askbridge's ("Something
// else", which opens a text box; "Decline: let the agent decide", which
// resumes the agent with askbridge's fixed words) would look like that
// button while recording the agent's option instead (law 7): a one-item
// form's buttons carry no number, and a form's own "Something else" carries
// its item's, as the agent's option does. Such a label is quoted, so that
// no two buttons of a card read alike.

// agentLabel is an agent's label as a button shows it: as written, or
// quoted where it reads as one of askbridge's own labels (ownLabel).
func agentLabel(label string) string {
	if ownLabel(label) {
		return "“" + label + "”"
	}
	return label
}

// ownLabels are askbridge's own button labels, as readLabel reads them,
// and the words before the colon of one that has one ("Decline").
var ownLabels = func() map[string]bool {
	out := map[string]bool{}
	for _, l := range []string{LabelApprove, LabelDeny, LabelEditApprove, LabelStandingRun, LabelDecline, LabelAnswer,
		LabelAnswerOnPage, LabelSendAnswer, LabelSomethingElse, LabelApproveAll, LabelDenyAll} {
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

// readLabel is a label as a reader tells it from another: its visible
// characters, in lower case, its blanks as single spaces, without the
// recommended note or the stops and signs at its ends.
func readLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		if fence.IsInvisible(r) && !unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimSuffix(s, strings.ToLower(RecommendedNote))
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) })
}
