package card

import (
	"strings"

	"github.com/askbridge/askbridge/core"
)

// ThenWords is the one wording of what a deadline does, after "then",
// in the words a closed card uses for it (OutcomeLine: "Timed out",
// "escalated to more deciders", "asked again"). The policy's own name
// would not do: a close is worded "deny" as a policy, which on a
// clarification, a decision or a form reads as a person's denial, and
// nobody denies anything (law 12). An approval's close says its call is
// not made, in the words the console's decline button adds for it
// (ConsoleDeclineLabel), since a timeout leaves the agent the same
// calls a decline does.
func ThenWords(q *core.Question, p core.TimeoutPolicy) string {
	switch p {
	case core.OnTimeoutEscalate:
		return "it is escalated to more deciders"
	case core.OnTimeoutReask:
		return "it is asked again"
	}
	// The decline button's words after its own ("", ", without the
	// call", ", making no call that was not approved"), by kind.
	return "it times out" + strings.TrimPrefix(ConsoleDeclineLabel(q), LabelConsoleDecline)
}
